/**
 * Pure helpers of the CronJob controller (upstream pkg/controller/cronjob/utils.go): missed
 * schedule times, job names and templates, finished jobs and history cleanup.
 */
import { parseTime } from '@orch/apimachinery';
import { findCondition } from '../workload-common/pods';
import type { CronJob, Job } from '../../framework/api';
import { ScheduleError, type Schedule } from './schedule';

/** Annotation on created jobs: the scheduled time, RFC 3339 in the cron job's zone (UTC without one). */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.orch.io/cronjob-scheduled-timestamp';
/** upstream nextScheduleDelta: requeue a little after the scheduled time. */
export const NEXT_SCHEDULE_DELTA_MS = 100;
/** Bound on activations walked one by one when looking for the most recent one. */
const MAX_WALK = 100_000;

export type Missed = 'none' | 'few' | 'many';

export interface RecentSchedule {
  /** The time scheduling starts from: last schedule, creation, or the starting deadline. */
  earliest: number;
  /** The latest scheduled time that is due (≤ now), if any. */
  mostRecent?: number;
  missed: Missed;
}

/**
 * upstream mostRecentScheduleTime: the latest due activation after the last one (or the
 * creation), bounded by startingDeadlineSeconds when asked; more than 100 missed
 * activations is `many`. Throws when the schedule's activations are less than a second apart.
 */
export function mostRecentScheduleTime(cj: CronJob, nowMs: number, schedule: Schedule, includeStartingDeadline: boolean): RecentSchedule {
  let earliest = cj.status?.lastScheduleTime ? parseTime(cj.status.lastScheduleTime) : parseTime(cj.metadata.creationTimestamp ?? new Date(nowMs).toISOString());
  const sds = cj.spec.startingDeadlineSeconds;
  if (includeStartingDeadline && sds !== undefined && sds !== null) earliest = Math.max(earliest, nowMs - sds * 1000);
  const t1 = schedule.next(earliest);
  if (t1 === undefined || nowMs < t1) return { earliest, missed: 'none' };
  const t2 = schedule.next(t1);
  if (t2 === undefined || nowMs < t2) return { earliest, mostRecent: t1, missed: 'few' };
  const interval = Math.round((t2 - t1) / 1000);
  if (interval < 1) throw new ScheduleError('time difference between two schedules is less than 1 second');
  const elapsed = Math.floor((nowMs - t1) / 1000);
  const missedCount = Math.floor(elapsed / interval) + 1;
  // Walk from a little before the estimate so irregular schedules land on a real activation.
  let mostRecent: number | undefined;
  const from = t1 + Math.max(0, missedCount - 2) * interval * 1000;
  for (let t = schedule.next(from - 1000); t !== undefined && t <= nowMs; t = schedule.next(t)) mostRecent = t;
  // None after the estimate (an irregular schedule): walk from the first one, bounded.
  for (let t: number | undefined = t1, n = 0; mostRecent === undefined && t !== undefined && t <= nowMs && n < MAX_WALK; n++) {
    const next = schedule.next(t);
    if (next === undefined || next > nowMs) mostRecent = t;
    t = next;
  }
  return { earliest, mostRecent: mostRecent ?? t1, missed: missedCount > 100 ? 'many' : 'few' };
}

/** upstream nextScheduleTimeDuration: ms until the next activation (+100 ms). */
export function nextScheduleDelayMs(cj: CronJob, nowMs: number, schedule: Schedule): number | undefined {
  let from: number;
  try {
    const r = mostRecentScheduleTime(cj, nowMs, schedule, false);
    from = r.mostRecent ?? r.earliest;
  } catch {
    from = nowMs;
  }
  const next = schedule.next(from);
  return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - nowMs;
}

/** upstream getJobName: `<cronjob>-<scheduled time in minutes since the epoch>`, deterministic per activation. */
export function jobNameFor(cj: CronJob, scheduledMs: number): string {
  return `${cj.metadata.name}-${Math.floor(scheduledMs / 60_000)}`;
}

/** RFC 3339 of `ms` on the wall clock of `zone`, with its offset (`Z` for UTC). */
export function formatInZone(ms: number, zone: string): string {
  const whole = Math.floor(ms / 1000) * 1000;
  const parts: Record<string, string> = {};
  const f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  for (const p of f.formatToParts(new Date(whole))) parts[p.type] = p.value;
  const wall = `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}`;
  const offsetMin = Math.round((Date.parse(`${wall}Z`) - whole) / 60_000);
  if (offsetMin === 0) return `${wall}Z`;
  const abs = Math.abs(offsetMin);
  return `${wall}${offsetMin < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * upstream getJobFromTemplate2: the job of one activation, named by {@link jobNameFor},
 * with the template's labels, annotations and spec, the scheduled-timestamp annotation
 * and the controller reference (set by the caller).
 */
export function jobFromTemplate(cj: CronJob, scheduledMs: number): Job {
  const meta = cj.spec.jobTemplate.metadata ?? {};
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(cj, scheduledMs),
      namespace: cj.metadata.namespace,
      labels: { ...(meta.labels ?? {}) },
      annotations: { ...(meta.annotations ?? {}), [SCHEDULED_TIMESTAMP_ANNOTATION]: formatInZone(scheduledMs, cj.spec.timeZone || 'UTC') },
    },
    spec: structuredClone(cj.spec.jobTemplate.spec ?? { template: {} }),
  };
}

/** The job's terminal condition type, if finished. */
export function finishedType(job: Job): 'Complete' | 'Failed' | undefined {
  if (findCondition(job.status?.conditions, 'Complete')?.status === 'True') return 'Complete';
  if (findCondition(job.status?.conditions, 'Failed')?.status === 'True') return 'Failed';
  return undefined;
}

/** upstream byJobStartTime: started jobs first, earlier start first, then by name. */
function byStartTime(a: Job, b: Job): number {
  const sa = a.status?.startTime;
  const sb = b.status?.startTime;
  if (!sa || !sb) {
    if (sa === sb) return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
    return sa ? -1 : 1;
  }
  const d = parseTime(sa) - parseTime(sb);
  return d !== 0 ? d : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/**
 * upstream cleanupFinishedJobs as a plan: the oldest finished jobs beyond
 * successfulJobsHistoryLimit / failedJobsHistoryLimit.
 */
export function jobsBeyondHistory(cj: CronJob, jobs: readonly Job[]): Job[] {
  const out: Job[] = [];
  const trim = (list: Job[], limit: number | undefined) => {
    if (limit === undefined || limit === null || list.length <= limit) return;
    out.push(...[...list].sort(byStartTime).slice(0, list.length - limit));
  };
  trim(jobs.filter((j) => finishedType(j) === 'Complete'), cj.spec.successfulJobsHistoryLimit);
  trim(jobs.filter((j) => finishedType(j) === 'Failed'), cj.spec.failedJobsHistoryLimit);
  return out;
}

/**
 * upstream formatSchedule: the schedule with the cron job's time zone as a `TZ=` prefix
 * (a schedule that names its own zone wins).
 */
export function scheduleWithZone(cj: CronJob): string {
  if (cj.spec.schedule.includes('TZ')) return cj.spec.schedule;
  return cj.spec.timeZone ? `TZ=${cj.spec.timeZone} ${cj.spec.schedule}` : cj.spec.schedule;
}
