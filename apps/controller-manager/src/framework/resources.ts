import type { KubeObject } from '@orch/apimachinery';
import type { GroupVersionResource } from '@orch/client';
import type * as api from './api';

/**
 * A built-in resource the controllers read or write, with the kind its objects carry (scope
 * comes from the catalog) and, for the type checker only, their TypeScript type `T`: an
 * informer or client of the resource holds `T`s (QueueController.informersOf, clientsOf).
 */
export interface ControllerResource<T extends KubeObject = KubeObject> extends GroupVersionResource {
  apiVersion: string;
  kind: string;
  /** Never set: carries `T` to the type checker. */
  readonly objectType?: T;
}

/** The object type of a {@link ControllerResource}. */
export type ObjectOf<R> = R extends ControllerResource<infer T> ? T : never;

export function res<T extends KubeObject = KubeObject>(group: string, version: string, resource: string, kind: string): ControllerResource<T> {
  return { group, version, resource, kind, apiVersion: group ? `${group}/${version}` : version };
}

export const NAMESPACES = res<api.Namespace>('', 'v1', 'namespaces', 'Namespace');
export const PODS = res<api.Pod>('', 'v1', 'pods', 'Pod');
export const NODES = res<api.Node>('', 'v1', 'nodes', 'Node');
export const SERVICES = res<api.Service>('', 'v1', 'services', 'Service');
export const ENDPOINTS = res<api.Endpoints>('', 'v1', 'endpoints', 'Endpoints');
export const SECRETS = res<api.Secret>('', 'v1', 'secrets', 'Secret');
export const CONFIGMAPS = res<api.ConfigMap>('', 'v1', 'configmaps', 'ConfigMap');
export const SERVICEACCOUNTS = res<api.ServiceAccount>('', 'v1', 'serviceaccounts', 'ServiceAccount');
export const ENDPOINTSLICES = res<api.EndpointSlice>('discovery.orch.io', 'v1', 'endpointslices', 'EndpointSlice');
export const LEASES = res<api.Lease>('coordination.orch.io', 'v1', 'leases', 'Lease');
export const CSRS = res<api.CertificateSigningRequest>('certificates.orch.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest');
export const REPLICATION_CONTROLLERS = res<api.ReplicationController>('', 'v1', 'replicationcontrollers', 'ReplicationController');
export const REPLICA_SETS = res<api.ReplicaSet>('apps', 'v1', 'replicasets', 'ReplicaSet');
export const DEPLOYMENTS = res<api.Deployment>('apps', 'v1', 'deployments', 'Deployment');
export const STATEFUL_SETS = res<api.StatefulSet>('apps', 'v1', 'statefulsets', 'StatefulSet');
export const DAEMON_SETS = res<api.DaemonSet>('apps', 'v1', 'daemonsets', 'DaemonSet');
export const CONTROLLER_REVISIONS = res<api.ControllerRevision>('apps', 'v1', 'controllerrevisions', 'ControllerRevision');
export const JOBS = res<api.Job>('batch', 'v1', 'jobs', 'Job');
export const CRON_JOBS = res<api.CronJob>('batch', 'v1', 'cronjobs', 'CronJob');
export const HORIZONTAL_POD_AUTOSCALERS = res<api.HorizontalPodAutoscaler>('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler');
export const RESOURCE_QUOTAS = res<api.ResourceQuota>('', 'v1', 'resourcequotas', 'ResourceQuota');
export const PERSISTENT_VOLUME_CLAIMS = res<api.PersistentVolumeClaim>('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim');
export const CLUSTER_ROLES = res<api.ClusterRole>('rbac.authorization.orch.io', 'v1', 'clusterroles', 'ClusterRole');
export const POD_DISRUPTION_BUDGETS = res<api.PodDisruptionBudget>('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget');

/** Namespace of bootstrap token secrets (SPEC "Token secrets"). */
export const SYSTEM_NAMESPACE = 'orch-system';
/** Namespace of the signed cluster-info config map. */
export const PUBLIC_NAMESPACE = 'orch-public';
/** Namespace of node heartbeat Leases (one per node, named after it). */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease';
