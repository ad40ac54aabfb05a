import { TAINT_OUT_OF_SERVICE } from '../cluster-common/taints';
import type { Node, Pod, PodCondition } from '../../framework/api';

/** Terminated: neither Pending, Running nor Unknown (upstream isPodTerminated). */
export function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

const isEvicted = (pod: Pod) => pod.status?.phase === 'Failed' && pod.status?.reason === 'Evicted';

/** upstream byEvictionAndCreationTimestamp: evicted pods first, then oldest, then by name. */
export function byEvictionAndCreation(a: Pod, b: Pod): number {
  const ea = isEvicted(a);
  const eb = isEvicted(b);
  if (ea !== eb) return ea ? -1 : 1;
  const ca = a.metadata.creationTimestamp ?? '';
  const cb = b.metadata.creationTimestamp ?? '';
  if (ca !== cb) return Date.parse(ca) - Date.parse(cb);
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/**
 * upstream gcTerminated: the terminated pods beyond `threshold`, evicted and oldest first.
 * A threshold ≤ 0 disables this collection.
 */
export function terminatedPodsToDelete(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(isPodTerminated);
  const excess = terminated.length - threshold;
  return excess > 0 ? terminated.sort(byEvictionAndCreation).slice(0, excess) : [];
}

/**
 * upstream gcTerminating: pods being deleted on a node that is not Ready and carries the
 * `node.orch.io/out-of-service` taint (its agent will never finish them).
 */
export function outOfServicePodsToDelete(pods: readonly Pod[], nodeOf: (name: string) => Node | undefined): Pod[] {
  return pods
    .filter((pod) => {
      if (!pod.metadata.deletionTimestamp || !pod.spec?.nodeName) return false;
      const node = nodeOf(pod.spec.nodeName);
      if (!node) return false;
      const ready = (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
      return !ready && (node.spec?.taints ?? []).some((t) => t.key === TAINT_OUT_OF_SERVICE);
    })
    .sort(byEvictionAndCreation);
}

/** upstream gcUnscheduledTerminating: pods being deleted that were never scheduled. */
export function unscheduledTerminatingPods(pods: readonly Pod[]): Pod[] {
  return pods.filter((pod) => pod.metadata.deletionTimestamp && !pod.spec?.nodeName);
}

/** Names of the nodes pods are bound to that are not among `existing`. */
export function missingNodes(pods: readonly Pod[], existing: (name: string) => boolean): Set<string> {
  const out = new Set<string>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (node && !existing(node)) out.add(node);
  }
  return out;
}

/**
 * The status upstream markFailedAndDeletePodWithCondition writes before deleting a pod that
 * has not finished: phase Failed, plus `condition` (replacing one of its type). Undefined for
 * a pod already Succeeded or Failed (nothing to write).
 */
export function failedStatus(pod: Pod, condition?: PodCondition): Pod['status'] | undefined {
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return undefined;
  const status = structuredClone(pod.status ?? {});
  status.phase = 'Failed';
  if (condition) status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition];
  return status;
}
