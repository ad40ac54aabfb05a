import { realClock } from './clock';
import { CycleState } from './cycle-state';
import type { Handle } from './interface';
import type { ContainerImage, Node, Pod, PodSpec, ResourceList, Taint } from './api';
import { LABEL_HOSTNAME } from './api';
import { Snapshot } from './snapshot';
import { NodeInfo, PodInfo } from './types';

// Builders for tests: small pods and nodes with only what a case needs.

export interface PodOpts {
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  nodeName?: string;
  priority?: number;
  /** Requests of the single container. */
  requests?: ResourceList;
  /** Merged over the generated spec. */
  spec?: Partial<PodSpec>;
  nominatedNodeName?: string;
  startTime?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
}

export function makePod(name: string, o: PodOpts = {}): Pod {
  const ns = o.namespace ?? 'default';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      uid: o.uid ?? `uid-${ns}-${name}`,
      labels: o.labels,
      annotations: o.annotations,
      creationTimestamp: o.creationTimestamp,
      deletionTimestamp: o.deletionTimestamp,
    },
    spec: {
      containers: [{ name: 'c', image: 'busybox', resources: o.requests ? { requests: o.requests } : undefined }],
      nodeName: o.nodeName,
      priority: o.priority,
      ...o.spec,
    },
    status: { nominatedNodeName: o.nominatedNodeName, startTime: o.startTime },
  };
}

export interface NodeOpts {
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** Defaults to 4 cpu, 8Gi memory, 110 pods. */
  allocatable?: ResourceList;
  images?: ContainerImage[];
}

export function makeNode(name: string, o: NodeOpts = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-node-${name}`, labels: { [LABEL_HOSTNAME]: name, ...o.labels } },
    spec: { taints: o.taints, unschedulable: o.unschedulable },
    status: { allocatable: o.allocatable ?? { cpu: '4', memory: '8Gi', pods: '110' }, images: o.images },
  };
}

/** A NodeInfo holding `node` and `pods`. */
export function makeNodeInfo(node: Node, pods: Pod[] = []): NodeInfo {
  const ni = new NodeInfo(node);
  for (const p of pods) ni.addPod(new PodInfo(p));
  return ni;
}

/** A fresh cycle state and snapshot for a plugin test. */
export function cycle(nodes: Node[], pods: Pod[] = []): { state: CycleState; snapshot: Snapshot } {
  return { state: new CycleState(), snapshot: Snapshot.fromObjects(nodes, pods) };
}

/**
 * A Handle over a fixed snapshot for plugin tests that only read the cluster (no framework
 * runners: those throw).
 */
export function snapshotHandle(snapshot: Snapshot, extra: Partial<Handle> = {}): Handle {
  const unsupported = (): never => {
    throw new Error('not supported by snapshotHandle');
  };
  return {
    snapshot: () => snapshot,
    namespaces: { labels: () => undefined, list: () => [] },
    clock: realClock,
    random: Math.random,
    nominatedPodsForNode: () => [],
    runFilterPluginsWithNominatedPods: unsupported,
    runPreFilterExtensionAddPod: unsupported,
    runPreFilterExtensionRemovePod: unsupported,
    getWaitingPod: () => undefined,
    ...extra,
  };
}
