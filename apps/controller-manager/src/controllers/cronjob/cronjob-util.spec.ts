import type { CronJob, Job } from '../../framework/api';
import { formatInZone, jobFromTemplate, jobNameFor, jobsBeyondHistory, mostRecentScheduleTime, nextScheduleDelayMs, scheduleWithZone } from './cronjob-util';
import { parseSchedule } from './schedule';

const T = (s: string) => Date.parse(s);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z'));

function cronJob(schedule: string, opts: { last?: string; deadline?: number; zone?: string; success?: number; failed?: number } = {}): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'tick', namespace: 'ns', uid: 'cj', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: {
      schedule,
      timeZone: opts.zone,
      startingDeadlineSeconds: opts.deadline,
      successfulJobsHistoryLimit: opts.success,
      failedJobsHistoryLimit: opts.failed,
      jobTemplate: { metadata: { labels: { team: 'a' }, annotations: { note: 'x' } }, spec: { template: { spec: { containers: [] } } } },
    },
    status: opts.last ? { lastScheduleTime: opts.last } : {},
  };
}

describe('mostRecentScheduleTime', () => {
  it.each([
    { name: 'nothing due yet', cj: cronJob('* * * * *'), now: '2024-01-01T00:00:30Z', deadline: false, want: { mostRecent: undefined, missed: 'none' } },
    { name: 'the first activation is due', cj: cronJob('* * * * *'), now: '2024-01-01T00:01:30Z', deadline: false, want: { mostRecent: '2024-01-01T00:01:00Z', missed: 'few' } },
    { name: 'several missed: only the latest runs', cj: cronJob('* * * * *'), now: '2024-01-01T00:05:30Z', deadline: false, want: { mostRecent: '2024-01-01T00:05:00Z', missed: 'few' } },
    { name: 'already ran', cj: cronJob('* * * * *', { last: '2024-01-01T00:05:00Z' }), now: '2024-01-01T00:05:30Z', deadline: false, want: { mostRecent: undefined, missed: 'none' } },
    { name: 'more than 100 missed', cj: cronJob('* * * * *'), now: '2024-01-01T03:00:30Z', deadline: false, want: { mostRecent: '2024-01-01T03:00:00Z', missed: 'many' } },
    { name: 'startingDeadlineSeconds bounds the search', cj: cronJob('* * * * *', { deadline: 60 }), now: '2024-01-01T03:00:30Z', deadline: true, want: { mostRecent: '2024-01-01T03:00:00Z', missed: 'few' } },
    { name: 'irregular schedule (Sun, Wed)', cj: cronJob('0 0 * * 0,3'), now: '2024-01-20T12:00:00Z', deadline: false, want: { mostRecent: '2024-01-17T00:00:00Z', missed: 'few' } },
  ])('$name', ({ cj, now, deadline, want }) => {
    const r = mostRecentScheduleTime(cj, T(now), parseSchedule(cj.spec.schedule, 'UTC'), deadline);
    expect({ mostRecent: iso(r.mostRecent), missed: r.missed }).toEqual(want);
  });

  it.each([
    { name: 'after a run: the next activation + 100 ms', cj: cronJob('* * * * *', { last: '2024-01-01T00:01:00Z' }), now: '2024-01-01T00:01:30Z', want: 30_100 },
    { name: 'nothing ran yet', cj: cronJob('0 * * * *'), now: '2024-01-01T00:30:00Z', want: 1_800_100 },
  ])('nextScheduleDelayMs: $name', ({ cj, now, want }) => {
    expect(nextScheduleDelayMs(cj, T(now), parseSchedule(cj.spec.schedule, 'UTC'))).toBe(want);
  });
});

describe('jobs of a cron job', () => {
  it('names a job by the minute of its activation and stamps the scheduled time', () => {
    const cj = cronJob('* * * * *', { zone: 'Asia/Kolkata' });
    const at = T('2024-01-01T12:00:00Z');
    const job = jobFromTemplate(cj, at);
    expect(job.metadata.name).toBe(`tick-${at / 60_000}`);
    expect(jobNameFor(cj, at + 59_000)).toBe(job.metadata.name);
    expect(job.metadata.labels).toEqual({ team: 'a' });
    expect(job.metadata.annotations).toEqual({ note: 'x', 'batch.orch.io/cronjob-scheduled-timestamp': '2024-01-01T17:30:00+05:30' });
  });

  it.each([
    { zone: 'UTC', want: '2024-01-01T12:00:00Z' },
    { zone: 'America/New_York', want: '2024-01-01T07:00:00-05:00' },
    { zone: 'Asia/Kolkata', want: '2024-01-01T17:30:00+05:30' },
  ])('formatInZone $zone', ({ zone, want }) => {
    expect(formatInZone(T('2024-01-01T12:00:00Z'), zone)).toBe(want);
  });

  it.each([
    { name: 'spec.timeZone becomes a TZ prefix', cj: cronJob('0 * * * *', { zone: 'Europe/Berlin' }), want: 'TZ=Europe/Berlin 0 * * * *' },
    { name: 'a schedule naming its zone wins', cj: cronJob('TZ=UTC 0 * * * *', { zone: 'Europe/Berlin' }), want: 'TZ=UTC 0 * * * *' },
    { name: 'no zone', cj: cronJob('0 * * * *'), want: '0 * * * *' },
  ])('scheduleWithZone: $name', ({ cj, want }) => {
    expect(scheduleWithZone(cj)).toBe(want);
  });

  const job = (name: string, type: 'Complete' | 'Failed' | undefined, start?: string): Job => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { template: { spec: { containers: [] } } },
    status: { startTime: start, conditions: type ? [{ type, status: 'True' }] : [] },
  });
  it.each([
    { name: 'oldest successful beyond the limit', success: 1, failed: 1, want: ['s1'] },
    { name: 'failed ones by their own limit', success: 5, failed: 0, want: ['f1'] },
    { name: 'no limits: keep everything', success: undefined, failed: undefined, want: [] },
  ])('jobsBeyondHistory: $name', ({ success, failed, want }) => {
    const jobs = [job('s2', 'Complete', '2024-01-02T00:00:00Z'), job('s1', 'Complete', '2024-01-01T00:00:00Z'), job('f1', 'Failed', '2024-01-01T00:00:00Z'), job('running', undefined)];
    expect(jobsBeyondHistory(cronJob('* * * * *', { success, failed }), jobs).map((j) => j.metadata.name)).toEqual(want);
  });
});
