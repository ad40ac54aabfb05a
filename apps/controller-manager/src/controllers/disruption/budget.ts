/**
 * Pure helpers of the disruption controller (upstream pkg/controller/disruption): healthy
 * pods, expected pods, allowed disruptions and the DisruptionAllowed condition.
 */
import { parseTime } from '@orch/apimachinery';
import { scaledValue } from '../workload-common/intstr';
import { isPodReady } from '../workload-common/pods';
import type { Pod, PodDisruptionBudget, Condition } from '../../framework/api';

/** How long an eviction's entry in disruptedPods waits for the pod to go (upstream DeletionTimeout). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

type PdbStatus = NonNullable<PodDisruptionBudget['status']>;

/**
 * upstream getExpectedPodCount: `expected` pods and how many must stay healthy. An integer
 * minAvailable counts the selected pods; maxUnavailable and a percentage minAvailable use
 * the scale of the pods' controllers (`controllerScale`, computed by the caller).
 */
export function expectedPodCount(pdb: PodDisruptionBudget, podCount: number, controllerScale: () => number): { expected: number; desiredHealthy: number } {
  const { maxUnavailable, minAvailable } = pdb.spec;
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    const expected = controllerScale();
    return { expected, desiredHealthy: Math.max(0, expected - scaledValue(maxUnavailable, expected, true)) };
  }
  if (typeof minAvailable === 'number') return { expected: podCount, desiredHealthy: minAvailable };
  if (typeof minAvailable === 'string') {
    const expected = controllerScale();
    return { expected, desiredHealthy: scaledValue(minAvailable, expected, true) };
  }
  return { expected: 0, desiredHealthy: 0 };
}

/**
 * upstream buildDisruptedPodMap: the evictions still pending (pod not yet deleting, entry
 * younger than {@link DELETION_TIMEOUT_MS}) and when the oldest one expires.
 */
export function pendingDisruptions(pdb: PodDisruptionBudget, pods: readonly Pod[], nowMs: number): { disrupted: Record<string, string>; recheckAtMs?: number } {
  const byName = new Map(pods.map((p) => [p.metadata.name ?? '', p]));
  const disrupted: Record<string, string> = {};
  let recheckAtMs: number | undefined;
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = byName.get(name);
    if (!pod || pod.metadata.deletionTimestamp) continue;
    const expires = parseTime(at) + DELETION_TIMEOUT_MS;
    if (expires < nowMs) continue;
    disrupted[name] = at;
    recheckAtMs = recheckAtMs === undefined ? expires : Math.min(recheckAtMs, expires);
  }
  return { disrupted, recheckAtMs };
}

/** upstream countHealthyPods: ready pods not being deleted and not pending eviction. */
export function countHealthy(pods: readonly Pod[], disrupted: Record<string, string>): number {
  return pods.filter((p) => !p.metadata.deletionTimestamp && !((p.metadata.name ?? '') in disrupted) && isPodReady(p)).length;
}

/**
 * upstream apimeta.SetStatusCondition (mutates `conditions`): the transition time changes
 * only with the status.
 */
export function setStatusCondition(conditions: Condition[], cond: Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string }, nowIso: string): void {
  const current = conditions.find((c) => c.type === cond.type);
  if (!current) {
    conditions.push({ ...cond, lastTransitionTime: cond.lastTransitionTime ?? nowIso });
    return;
  }
  if (current.status !== cond.status) {
    current.status = cond.status;
    current.lastTransitionTime = cond.lastTransitionTime ?? nowIso;
  }
  current.reason = cond.reason;
  current.message = cond.message;
  current.observedGeneration = cond.observedGeneration;
}

/** upstream UpdateDisruptionAllowedCondition (mutates `status`): SufficientPods / InsufficientPods. */
export function updateDisruptionAllowedCondition(status: PdbStatus, nowIso: string): void {
  const conditions = (status.conditions ??= []);
  const allowed = (status.disruptionsAllowed ?? 0) > 0;
  setStatusCondition(
    conditions,
    { type: 'DisruptionAllowed', status: allowed ? 'True' : 'False', reason: allowed ? 'SufficientPods' : 'InsufficientPods', message: '', observedGeneration: status.observedGeneration },
    nowIso,
  );
}

/**
 * upstream updatePdbStatus's computation: the new status, with disruptionsAllowed =
 * currentHealthy - desiredHealthy (0 when no pods are expected or the budget is short).
 */
export function budgetStatus(pdb: PodDisruptionBudget, currentHealthy: number, desiredHealthy: number, expected: number, disrupted: Record<string, string>, nowIso: string): PdbStatus {
  const allowed = currentHealthy - desiredHealthy;
  const status: PdbStatus = {
    currentHealthy,
    desiredHealthy,
    expectedPods: expected,
    disruptionsAllowed: expected <= 0 || allowed <= 0 ? 0 : allowed,
    observedGeneration: pdb.metadata.generation,
    conditions: structuredClone(pdb.status?.conditions ?? []),
  };
  if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
  updateDisruptionAllowedCondition(status, nowIso);
  return status;
}

/** The status of a budget whose sync failed: nothing may be disrupted (upstream failSafe). */
export function failSafeStatus(pdb: PodDisruptionBudget, message: string, nowIso: string): PdbStatus {
  const status: PdbStatus = { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, ...structuredClone(pdb.status ?? {}), disruptionsAllowed: 0, observedGeneration: pdb.metadata.generation };
  const conditions = (status.conditions ??= []);
  setStatusCondition(conditions, { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message, observedGeneration: pdb.metadata.generation }, nowIso);
  return status;
}
