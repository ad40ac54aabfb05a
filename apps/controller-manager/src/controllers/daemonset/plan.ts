/**
 * DaemonSet decisions as pure plans (upstream manage / podsShouldBeOnNode, rollingUpdate
 * without surge, updateDaemonSetStatus).
 */
import { parseTime } from '@orch/apimachinery';
import { scaledValue } from '../workload-common/intstr';
import { isPodAvailable, isPodReady } from '../workload-common/pods';
import { CONTROLLER_REVISION_HASH_LABEL } from '../workload-common/revisions';
import type { DaemonSet, Node, Pod } from '../../framework/api';
import { nodeShouldRunDaemonPod } from './placement';

/** Older first; with equal creation times, the one further along (Running over Pending) first. */
function byCreationAndPhase(a: Pod, b: Pod): number {
  const ca = a.metadata.creationTimestamp ? parseTime(a.metadata.creationTimestamp) : 0;
  const cb = b.metadata.creationTimestamp ? parseTime(b.metadata.creationTimestamp) : 0;
  if (ca !== cb) return ca - cb;
  const rank = (p: Pod) => (p.status?.phase === 'Running' ? 0 : p.status?.phase === 'Pending' ? 1 : 2);
  return rank(a) - rank(b);
}

export interface ManagePlan {
  /** Nodes that need a daemon pod. */
  create: string[];
  /** Pods to delete: failed or finished ones, extras, and pods on nodes that must not run them. */
  delete: Pod[];
}

/** upstream manage + podsShouldBeOnNode: one pod on every node that should run one, none elsewhere. */
export function planDaemonPods(ds: DaemonSet, nodes: readonly Node[], podsByNode: ReadonlyMap<string, Pod[]>): ManagePlan {
  const plan: ManagePlan = { create: [], delete: [] };
  const known = new Set(nodes.map((n) => n.metadata.name ?? ''));
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    const pods = podsByNode.get(name) ?? [];
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(ds, node);
    if (shouldRun && pods.length === 0) {
      plan.create.push(name);
    } else if (shouldContinueRunning) {
      const running: Pod[] = [];
      for (const pod of pods) {
        if (pod.metadata.deletionTimestamp) continue;
        if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') plan.delete.push(pod);
        else running.push(pod);
      }
      // One pod per node: keep the oldest.
      running.sort(byCreationAndPhase);
      plan.delete.push(...running.slice(1));
    } else {
      plan.delete.push(...pods.filter((p) => !p.metadata.deletionTimestamp));
    }
  }
  // Pods bound to nodes that no longer exist.
  for (const [name, pods] of podsByNode) if (!known.has(name)) plan.delete.push(...pods.filter((p) => !p.metadata.deletionTimestamp));
  return plan;
}

function desiredCount(ds: DaemonSet, nodes: readonly Node[]): number {
  return nodes.filter((n) => nodeShouldRunDaemonPod(ds, n).shouldRun).length;
}

/**
 * upstream rollingUpdate (maxSurge 0): old pods to delete now so that at most
 * maxUnavailable daemon pods are unavailable; unavailable old pods are replaced at once.
 * The manage step then creates their replacements.
 */
export function planRollingUpdate(ds: DaemonSet, nodes: readonly Node[], podsByNode: ReadonlyMap<string, Pod[]>, hash: string, nowMs: number): Pod[] {
  const desired = desiredCount(ds, nodes);
  const ru = ds.spec.updateStrategy?.rollingUpdate ?? {};
  let maxUnavailable = scaledValue(ru.maxUnavailable ?? 1, desired, true);
  if (maxUnavailable === 0 && scaledValue(ru.maxSurge ?? 0, desired, true) === 0) maxUnavailable = 1;
  const minReady = ds.spec.minReadySeconds ?? 0;
  let unavailable = 0;
  const replace: Pod[] = [];
  const candidates: Pod[] = [];
  for (const pods of podsByNode.values()) {
    const live = pods.filter((p) => !p.metadata.deletionTimestamp);
    const fresh = live.filter((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash);
    const old = live.filter((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] !== hash);
    if (fresh.length > 1 || old.length > 1 || (fresh.length === 0) === (old.length === 0)) {
      unavailable++;
      continue;
    }
    if (fresh.length) {
      if (!isPodAvailable(fresh[0], minReady, nowMs)) unavailable++;
    } else if (!isPodAvailable(old[0], minReady, nowMs)) {
      replace.push(old[0]);
    } else if (unavailable < maxUnavailable) {
      candidates.push(old[0]);
    }
  }
  const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
  return [...replace, ...candidates.slice(0, room)];
}

export interface DaemonSetCounts {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberMisscheduled: number;
  numberReady: number;
  numberAvailable: number;
  numberUnavailable: number;
  updatedNumberScheduled: number;
}

/** upstream updateDaemonSetStatus's counts, looking at the oldest pod of each node. */
export function daemonSetCounts(ds: DaemonSet, nodes: readonly Node[], podsByNode: ReadonlyMap<string, Pod[]>, hash: string, nowMs: number): DaemonSetCounts {
  const c: DaemonSetCounts = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, numberAvailable: 0, numberUnavailable: 0, updatedNumberScheduled: 0 };
  for (const node of nodes) {
    const pods = (podsByNode.get(node.metadata.name ?? '') ?? []).filter((p) => !p.metadata.deletionTimestamp);
    const { shouldRun } = nodeShouldRunDaemonPod(ds, node);
    if (!shouldRun) {
      if (pods.length) c.numberMisscheduled++;
      continue;
    }
    c.desiredNumberScheduled++;
    if (!pods.length) continue;
    c.currentNumberScheduled++;
    const pod = [...pods].sort(byCreationAndPhase)[0];
    if (isPodReady(pod)) {
      c.numberReady++;
      if (isPodAvailable(pod, ds.spec.minReadySeconds ?? 0, nowMs)) c.numberAvailable++;
    }
    if (pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash) c.updatedNumberScheduled++;
  }
  c.numberUnavailable = c.desiredNumberScheduled - c.numberAvailable;
  return c;
}
