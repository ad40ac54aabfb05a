import { parseTime } from '@orch/apimachinery';
import { isPodActive, isPodReady, maxContainerRestarts, podReadyTime } from '../workload-common/pods';
import type { Pod } from '../../framework/api';

/** SPEC: `int32 parsed; orders replica-set downscale`. */
export const POD_DELETION_COST_ANNOTATION = 'controller.orch.io/pod-deletion-cost';

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * The pod's deletion cost: the annotation parsed as an int32; absent or invalid is 0
 * (upstream GetDeletionCostFromPodAnnotations with its error ignored).
 */
export function deletionCost(pod: Pod): number {
  const raw = pod.metadata.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (raw === undefined || !/^[+-]?\d+$/.test(raw)) return 0;
  const n = Number(raw);
  return n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : 0;
}

/** A pod to rank and the number of active related pods on its node (upstream ActivePodsWithRanks). */
export interface RankedPod {
  pod: Pod;
  /** Active pods of the same controller family on the same node ("doubled up"). */
  rank: number;
}

/**
 * upstream logarithmicRankDiff (LogarithmicScaleDown, on by default): compares how long
 * ago two times were on a log2 scale of nanoseconds, so pods of similar age tie.
 */
function logarithmicRankDiff(t1: number, t2: number, nowMs: number): number {
  const rank = (t: number) => {
    const d = (nowMs - t) * 1e6;
    return d > 0 ? Math.floor(Math.log2(d)) : -1;
  };
  return rank(t1) - rank(t2);
}

function byUid(a: Pod, b: Pod): number {
  const ua = a.metadata.uid ?? '';
  const ub = b.metadata.uid ?? '';
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

/**
 * Orders pods for replica-set downscale; negative when `a` is deleted before `b`.
 * 0. lower `controller.orch.io/pod-deletion-cost` first (the issue puts the cost before
 *    the usual ranking);
 * then upstream ActivePodsWithRanks.Less:
 * 1. unassigned before assigned; 2. Pending < Unknown < Running; 3. not ready before ready;
 * 4. more related pods on the same node first; 5. ready more recently first (log scale);
 * 6. more container restarts first; 7. created more recently first (log scale), ties by uid.
 */
export function comparePodsForDeletion(a: RankedPod, b: RankedPod, nowMs: number): number {
  const pa = a.pod;
  const pb = b.pod;
  const costA = deletionCost(pa);
  const costB = deletionCost(pb);
  if (costA !== costB) return costA - costB;
  const nodeA = pa.spec.nodeName ?? '';
  const nodeB = pb.spec.nodeName ?? '';
  if (nodeA !== nodeB && (!nodeA || !nodeB)) return nodeA ? 1 : -1;
  const phaseA = PHASE_ORDINAL[pa.status?.phase ?? ''] ?? 0;
  const phaseB = PHASE_ORDINAL[pb.status?.phase ?? ''] ?? 0;
  if (phaseA !== phaseB) return phaseA - phaseB;
  const readyA = isPodReady(pa);
  const readyB = isPodReady(pb);
  if (readyA !== readyB) return readyA ? 1 : -1;
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (readyA && readyB) {
    const ta = podReadyTime(pa) ?? 0;
    const tb = podReadyTime(pb) ?? 0;
    if (ta !== tb) return logarithmicRankDiff(ta, tb, nowMs) || byUid(pa, pb);
  }
  const restarts = maxContainerRestarts(pb) - maxContainerRestarts(pa);
  if (restarts !== 0) return restarts;
  const ca = pa.metadata.creationTimestamp ? parseTime(pa.metadata.creationTimestamp) : 0;
  const cb = pb.metadata.creationTimestamp ? parseTime(pb.metadata.creationTimestamp) : 0;
  if (ca !== cb) return logarithmicRankDiff(ca, cb, nowMs) || byUid(pa, pb);
  return 0;
}

/**
 * upstream getPodsToDelete: the `diff` pods of `filtered` to delete first. `related` are
 * the pods of every replica set with the same controller (rank = active related pods on the
 * pod's node). Deleting all of them needs no ranking.
 */
export function podsToDelete(filtered: readonly Pod[], related: readonly Pod[], diff: number, nowMs: number): Pod[] {
  if (diff >= filtered.length) return [...filtered];
  const onNode = new Map<string, number>();
  for (const p of related) {
    if (isPodActive(p)) onNode.set(p.spec.nodeName ?? '', (onNode.get(p.spec.nodeName ?? '') ?? 0) + 1);
  }
  const ranked = filtered.map((pod) => ({ pod, rank: onNode.get(pod.spec.nodeName ?? '') ?? 0 }));
  ranked.sort((a, b) => comparePodsForDeletion(a, b, nowMs));
  return ranked.slice(0, diff).map((r) => r.pod);
}
