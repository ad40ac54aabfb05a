import type { GroupVersionResource } from '@orch/client';

/** A built-in resource the controllers read or write, with the type its objects carry (scope comes from the catalog). */
export interface ControllerResource extends GroupVersionResource {
  apiVersion: string;
  kind: string;
}

function res(group: string, version: string, resource: string, kind: string): ControllerResource {
  return { group, version, resource, kind, apiVersion: group ? `${group}/${version}` : version };
}

export const NAMESPACES = res('', 'v1', 'namespaces', 'Namespace');
export const PODS = res('', 'v1', 'pods', 'Pod');
export const NODES = res('', 'v1', 'nodes', 'Node');
export const SERVICES = res('', 'v1', 'services', 'Service');
export const ENDPOINTS = res('', 'v1', 'endpoints', 'Endpoints');
export const SECRETS = res('', 'v1', 'secrets', 'Secret');
export const CONFIGMAPS = res('', 'v1', 'configmaps', 'ConfigMap');
export const SERVICEACCOUNTS = res('', 'v1', 'serviceaccounts', 'ServiceAccount');
export const ENDPOINTSLICES = res('discovery.orch.io', 'v1', 'endpointslices', 'EndpointSlice');
export const LEASES = res('coordination.orch.io', 'v1', 'leases', 'Lease');
export const CSRS = res('certificates.orch.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest');
export const REPLICATION_CONTROLLERS = res('', 'v1', 'replicationcontrollers', 'ReplicationController');
export const REPLICA_SETS = res('apps', 'v1', 'replicasets', 'ReplicaSet');
export const DEPLOYMENTS = res('apps', 'v1', 'deployments', 'Deployment');
export const STATEFUL_SETS = res('apps', 'v1', 'statefulsets', 'StatefulSet');
export const DAEMON_SETS = res('apps', 'v1', 'daemonsets', 'DaemonSet');
export const CONTROLLER_REVISIONS = res('apps', 'v1', 'controllerrevisions', 'ControllerRevision');
export const JOBS = res('batch', 'v1', 'jobs', 'Job');
export const CRON_JOBS = res('batch', 'v1', 'cronjobs', 'CronJob');
export const HORIZONTAL_POD_AUTOSCALERS = res('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler');
export const POD_DISRUPTION_BUDGETS = res('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget');

/** Namespace of bootstrap token secrets (SPEC "Token secrets"). */
export const SYSTEM_NAMESPACE = 'orch-system';
/** Namespace of the signed cluster-info config map. */
export const PUBLIC_NAMESPACE = 'orch-public';
/** Namespace of node heartbeat Leases (one per node, named after it). */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease';
