import type { coreV1, Served } from '@orch/api';

// The API types the node agent reads and writes, by the names it uses: the generated types of
// libs/api (libs/api/src/types/generated), narrowed only where the agent relies on more than the
// wire promises: an object as the API serves it has apiVersion, kind and metadata (what
// @orch/client's informers and clients take, a KubeObject), and a pod always has a spec.

export type { ConfigMap, Lease, Node, Secret, Service } from '@orch/api';

export type Pod = Served<coreV1.Pod> & { spec: coreV1.PodSpec };
/** A container's status as the agent reports it: state and lastState always set. */
export type ContainerStatus = coreV1.ContainerStatus & { state: coreV1.ContainerState; lastState: coreV1.ContainerState };

// Pod and container types several parts of the agent use, as generated.
export type Container = coreV1.Container;
export type ContainerStateTerminated = coreV1.ContainerStateTerminated;
export type Probe = coreV1.Probe;
export type PodStatus = coreV1.PodStatus;
export type PodCondition = coreV1.PodCondition;
// Node types, as generated.
export type NodeStatus = coreV1.NodeStatus;
export type Taint = coreV1.Taint;

/** A pod's restartPolicy (the API's enum). */
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
/** A pod's phase (the API's enum), as the agent computes it. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
export const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
export const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;
export const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;
export const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
export const LEASES = { group: 'coordination.orch.io', version: 'v1', resource: 'leases' } as const;
export const CSRS = { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests' } as const;

/** Namespace of node heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease';

/** Upstream's default grace period of a pod (seconds). */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;
