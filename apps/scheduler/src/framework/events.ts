import type { Node, Pod } from './api';
import { computePodRequests } from './resource';

// Cluster events that can make an unschedulable pod schedulable (upstream framework.ClusterEvent).
// Plugins register the events they care about; the queue requeues a pod only on events its
// rejecting plugins registered.

/** What changed, as bit flags (an event may carry several). */
export const ActionType = {
  Add: 1,
  Delete: 2,
  UpdateNodeAllocatable: 4,
  UpdateNodeLabel: 8,
  UpdateNodeTaint: 16,
  UpdateNodeCondition: 32,
  UpdatePodLabel: 64,
  UpdatePodScaleDown: 128,
  UpdatePodTolerations: 256,
  UpdateNamespaceLabel: 512,
  /** Any other update of the object. */
  UpdateOther: 1024,
  All: 2047,
  Update: 2047 & ~3,
} as const;

/**
 * `Pod` events concern pods bound to nodes; `UnscheduledPod` the pod being scheduled itself;
 * `*` with action All is the wildcard that moves every pod.
 */
export type EventResource = 'Pod' | 'UnscheduledPod' | 'Node' | 'Namespace' | '*';

export interface ClusterEvent {
  resource: EventResource;
  /** ActionType flags. */
  action: number;
  /** For metrics and logs. */
  label: string;
}

export const Events = {
  NodeAdd: { resource: 'Node', action: ActionType.Add, label: 'NodeAdd' },
  NodeDelete: { resource: 'Node', action: ActionType.Delete, label: 'NodeDelete' },
  AssignedPodAdd: { resource: 'Pod', action: ActionType.Add, label: 'AssignedPodAdd' },
  AssignedPodDelete: { resource: 'Pod', action: ActionType.Delete, label: 'AssignedPodDelete' },
  NamespaceAdd: { resource: 'Namespace', action: ActionType.Add, label: 'NamespaceAdd' },
  /** Pods that waited too long in unschedulablePods; moves everything it is applied to. */
  UnschedulableTimeout: { resource: '*', action: ActionType.All, label: 'UnschedulableTimeout' },
  /** A forced move of all pods (e.g. after a lost binding). */
  ForceActivate: { resource: '*', action: ActionType.All, label: 'ForceActivate' },
} as const satisfies Record<string, ClusterEvent>;

/** True when an event of `registered` kind covers `event`. */
export function eventMatches(registered: ClusterEvent, event: ClusterEvent): boolean {
  if (isWildcard(event)) return true;
  return (registered.resource === '*' || registered.resource === event.resource) && (registered.action & event.action) !== 0;
}

export function isWildcard(e: ClusterEvent): boolean {
  return e.resource === '*' && e.action === ActionType.All;
}

const json = (v: unknown): string => JSON.stringify(v ?? null);

/**
 * upstream nodeSchedulingPropertiesChange: the scheduling-relevant parts of a node update as
 * one event, or undefined when only irrelevant fields (heartbeats, status timestamps) changed.
 */
export function nodeUpdateEvent(oldNode: Node, newNode: Node): ClusterEvent | undefined {
  let action = 0;
  if (json(oldNode.status?.allocatable) !== json(newNode.status?.allocatable)) action |= ActionType.UpdateNodeAllocatable;
  if (json(oldNode.metadata.labels) !== json(newNode.metadata.labels)) action |= ActionType.UpdateNodeLabel;
  if (json(oldNode.spec?.taints) !== json(newNode.spec?.taints) || !!oldNode.spec?.unschedulable !== !!newNode.spec?.unschedulable) {
    action |= ActionType.UpdateNodeTaint;
  }
  const conds = (n: Node): string => json((n.status?.conditions ?? []).map((c) => [c.type, c.status]));
  if (conds(oldNode) !== conds(newNode)) action |= ActionType.UpdateNodeCondition;
  return action ? { resource: 'Node', action, label: 'NodeUpdate' } : undefined;
}

/**
 * The scheduling-relevant parts of an update of an assigned pod (labels, lowered requests,
 * tolerations) as one event, or undefined when nothing relevant changed.
 */
export function assignedPodUpdateEvent(oldPod: Pod, newPod: Pod): ClusterEvent | undefined {
  let action = 0;
  if (json(oldPod.metadata.labels) !== json(newPod.metadata.labels)) action |= ActionType.UpdatePodLabel;
  if (json(oldPod.spec.tolerations) !== json(newPod.spec.tolerations)) action |= ActionType.UpdatePodTolerations;
  if (json(oldPod.spec.containers) !== json(newPod.spec.containers) || json(oldPod.spec.initContainers) !== json(newPod.spec.initContainers)) {
    const before = computePodRequests(oldPod);
    const after = computePodRequests(newPod);
    const names = new Set(['cpu', 'memory', 'ephemeral-storage', ...(before.scalar?.keys() ?? [])]);
    for (const n of names) if (after.get(n) < before.get(n)) action |= ActionType.UpdatePodScaleDown;
  }
  return action ? { resource: 'Pod', action, label: 'AssignedPodUpdate' } : undefined;
}
