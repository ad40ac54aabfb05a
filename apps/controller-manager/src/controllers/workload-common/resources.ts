import type { GroupVersionResource } from '@orch/client';

/** A resource the workload controllers read or write, with the type its objects carry. */
export interface WorkloadResource extends GroupVersionResource {
  apiVersion: string;
  kind: string;
}

function res(group: string, version: string, resource: string, kind: string): WorkloadResource {
  return { group, version, resource, kind, apiVersion: group ? `${group}/${version}` : version };
}

export const PODS = res('', 'v1', 'pods', 'Pod');
export const NODES = res('', 'v1', 'nodes', 'Node');
export const REPLICATION_CONTROLLERS = res('', 'v1', 'replicationcontrollers', 'ReplicationController');
export const REPLICA_SETS = res('apps', 'v1', 'replicasets', 'ReplicaSet');
export const DEPLOYMENTS = res('apps', 'v1', 'deployments', 'Deployment');
export const STATEFUL_SETS = res('apps', 'v1', 'statefulsets', 'StatefulSet');
export const DAEMON_SETS = res('apps', 'v1', 'daemonsets', 'DaemonSet');
export const CONTROLLER_REVISIONS = res('apps', 'v1', 'controllerrevisions', 'ControllerRevision');
export const JOBS = res('batch', 'v1', 'jobs', 'Job');
export const CRON_JOBS = res('batch', 'v1', 'cronjobs', 'CronJob');
export const POD_DISRUPTION_BUDGETS = res('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget');
