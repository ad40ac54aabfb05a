/**
 * Pure helpers of the Job controller (upstream pkg/controller/job): labels and selector,
 * conditions, which pods count as failed, how many pods should be active, which to remove,
 * and the pod-failure backoff.
 */
import { JOB_CONTROLLER_UID_LABEL } from '@orch/api';
import { parseTime, type LabelSelectorObject } from '@orch/apimachinery';
import { comparePodsForDeletion } from '../replicaset/ranking';
import { findCondition, isPodReady } from '../workload-common/pods';
import type { Job, JobStatus, Pod, WorkloadCondition } from '../../framework/api';
import { completionIndexOf, hasIndex, type Interval } from './indexes';

/** Finalizer on job pods until the job controller counted them (upstream batch.kubernetes.io/job-tracking). */
export const JOB_TRACKING_FINALIZER = 'batch.orch.io/job-tracking';

/** upstream DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff. */
export const POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;

export const JOB_REASON = {
  BackoffLimitExceeded: 'BackoffLimitExceeded',
  DeadlineExceeded: 'DeadlineExceeded',
  CompletionsReached: 'CompletionsReached',
} as const;

/**
 * The selector of the job's pods: `spec.selector`, or the generated
 * `batch.orch.io/controller-uid=<uid>` when the API left it unset.
 */
export function jobSelector(job: Job): LabelSelectorObject {
  return job.spec.selector ?? { matchLabels: { [JOB_CONTROLLER_UID_LABEL]: job.metadata.uid ?? '' } };
}

export function isIndexed(job: Job): boolean {
  return job.spec.completionMode === 'Indexed';
}

export function conditionTrue(job: Job, type: string): boolean {
  return findCondition(job.status?.conditions, type)?.status === 'True';
}

/** upstream IsJobFinished: a Complete or Failed condition is True. */
export function isJobFinished(job: Job): boolean {
  return conditionTrue(job, 'Complete') || conditionTrue(job, 'Failed');
}

/** When the job finished (the terminal condition's transition), ms since the epoch. */
export function jobFinishTime(job: Job): number | undefined {
  const cond = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return cond?.lastTransitionTime ? parseTime(cond.lastTransitionTime) : undefined;
}

/**
 * upstream isPodFailed: phase Failed; with podReplacementPolicy TerminatingOrFailed (the
 * default) also a pod being deleted that did not succeed (orphans never reach Failed).
 */
export function isPodFailed(pod: Pod, job: Job): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (job.spec.podReplacementPolicy === 'Failed') return false;
  return !!pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded';
}

/**
 * upstream manageJob's wantActive: without completions, parallelism until one pod
 * succeeded (then no more); with completions, the remaining ones, at most parallelism.
 */
export function wantActive(job: Job, succeeded: number, active: number): number {
  const parallelism = job.spec.parallelism ?? 1;
  if (job.spec.completions === undefined || job.spec.completions === null) return succeeded > 0 ? active : parallelism;
  return Math.max(0, Math.min(parallelism, job.spec.completions - succeeded));
}

/**
 * upstream activePodsForRemoval: for Indexed jobs first pods with an invalid index, an
 * index that already succeeded, or a duplicate index (keeping the best of them); then the
 * cheapest to lose (unscheduled, pending, not ready, newest first) until `atLeast`.
 */
export function activePodsForRemoval(job: Job, pods: readonly Pod[], atLeast: number, succeeded: readonly Interval[], nowMs: number): Pod[] {
  const order = (a: Pod, b: Pod) => comparePodsForDeletion({ pod: a, rank: 0 }, { pod: b, rank: 0 }, nowMs);
  const remove: Pod[] = [];
  let left: Pod[] = [...pods];
  if (isIndexed(job)) {
    const completions = job.spec.completions ?? 0;
    const byIndex = new Map<number, Pod[]>();
    left = [];
    for (const pod of pods) {
      const ix = completionIndexOf(pod);
      if (ix === undefined || ix >= completions || hasIndex(succeeded, ix)) remove.push(pod);
      else byIndex.set(ix, [...(byIndex.get(ix) ?? []), pod]);
    }
    for (const same of byIndex.values()) {
      same.sort(order);
      remove.push(...same.slice(0, -1));
      left.push(same[same.length - 1]);
    }
  }
  if (remove.length < atLeast) remove.push(...left.sort(order).slice(0, atLeast - remove.length));
  return remove;
}

/** Failures since the last success and when the last one was seen (upstream backoffRecord). */
export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureMs: number;
}

/** ms to wait before creating pods again after failures (10 s doubling, at most 10 min); 0 when none. */
export function backoffRemainingMs(record: BackoffRecord | undefined, nowMs: number): number {
  if (!record || record.failuresAfterLastSuccess === 0) return 0;
  const delay = Math.min(POD_FAILURE_BACKOFF_MS * 2 ** (record.failuresAfterLastSuccess - 1), MAX_POD_FAILURE_BACKOFF_MS);
  return Math.max(0, record.lastFailureMs + delay - nowMs);
}

/** ms until activeDeadlineSeconds passes (negative when past); undefined without a deadline or start time. */
export function activeDeadlineRemainingMs(job: Job, nowMs: number): number | undefined {
  const deadline = job.spec.activeDeadlineSeconds;
  const start = job.status?.startTime;
  if (deadline === undefined || deadline === null || !start || job.spec.suspend) return undefined;
  return parseTime(start) + deadline * 1000 - nowMs;
}

/**
 * upstream ensureJobConditionStatus (mutates `status`): sets the condition, keeping its
 * transition time when the status does not change; a False condition is not added when
 * absent. Returns whether anything changed.
 */
export function ensureJobCondition(status: JobStatus, type: string, value: WorkloadCondition['status'], reason: string, message: string, nowIso: string): boolean {
  const conditions = (status.conditions ??= []);
  const current = conditions.find((c) => c.type === type);
  if (current) {
    if (current.status === value && current.reason === reason && current.message === message) return false;
    if (current.status !== value) {
      current.lastTransitionTime = nowIso;
      current.lastProbeTime = nowIso;
    }
    current.status = value;
    current.reason = reason;
    current.message = message;
    return true;
  }
  if (value === 'False') {
    if (!conditions.length) delete status.conditions;
    return false;
  }
  conditions.push({ type, status: value, lastProbeTime: nowIso, lastTransitionTime: nowIso, reason, message });
  return true;
}

/** Ready pods among `pods` (status.ready). */
export function readyCount(pods: readonly Pod[]): number {
  return pods.filter(isPodReady).length;
}
