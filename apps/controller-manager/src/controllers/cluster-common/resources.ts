import type { GroupVersionResource } from '@orch/client';

/** The resources the cluster controllers watch and write (scope comes from the catalog). */
export const NAMESPACES: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
export const PODS: GroupVersionResource = { group: '', version: 'v1', resource: 'pods' };
export const NODES: GroupVersionResource = { group: '', version: 'v1', resource: 'nodes' };
export const SERVICES: GroupVersionResource = { group: '', version: 'v1', resource: 'services' };
export const ENDPOINTS: GroupVersionResource = { group: '', version: 'v1', resource: 'endpoints' };
export const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };
export const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
export const SERVICEACCOUNTS: GroupVersionResource = { group: '', version: 'v1', resource: 'serviceaccounts' };
export const ENDPOINTSLICES: GroupVersionResource = { group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices' };
export const LEASES: GroupVersionResource = { group: 'coordination.orch.io', version: 'v1', resource: 'leases' };
export const CSRS: GroupVersionResource = { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests' };

/** Namespace of bootstrap token secrets (SPEC "Token secrets"). */
export const SYSTEM_NAMESPACE = 'orch-system';
/** Namespace of the signed cluster-info config map. */
export const PUBLIC_NAMESPACE = 'orch-public';
/** Namespace of node heartbeat Leases (one per node, named after it). */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease';
