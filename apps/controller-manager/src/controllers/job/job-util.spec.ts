import type { Job, JobStatus, Pod } from '../../framework/api';
import { parseIndexes } from './indexes';
import { activeDeadlineRemainingMs, activePodsForRemoval, backoffRemainingMs, ensureJobCondition, isPodFailed, jobSelector, wantActive } from './job-util';

const job = (spec: Partial<Job['spec']> = {}, status: Job['status'] = {}): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j', namespace: 'ns', uid: 'job-uid' },
  spec: { template: { spec: { containers: [] } }, ...spec },
  status,
});
const pod = (name: string, phase: string, extra: Partial<Pod['metadata']> = {}, ready = false): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: name, creationTimestamp: '2024-01-01T00:00:00Z', ...extra },
  spec: { containers: [] },
  status: { phase: phase as NonNullable<Pod['status']>['phase'], conditions: ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] : [] },
});

describe('job helpers', () => {
  it.each([
    { name: 'completions: what is left', spec: { completions: 5, parallelism: 2 }, succeeded: 4, active: 1, want: 1 },
    { name: 'completions: at most parallelism', spec: { completions: 5, parallelism: 2 }, succeeded: 0, active: 0, want: 2 },
    { name: 'completions reached', spec: { completions: 2, parallelism: 2 }, succeeded: 3, active: 0, want: 0 },
    { name: 'work queue: parallelism until a success', spec: { parallelism: 3 }, succeeded: 0, active: 1, want: 3 },
    { name: 'work queue: after a success, no new pods', spec: { parallelism: 3 }, succeeded: 1, active: 2, want: 2 },
  ])('wantActive: $name', ({ spec, succeeded, active, want }) => {
    expect(wantActive(job(spec), succeeded, active)).toBe(want);
  });

  it.each([
    { name: 'Failed', pod: pod('p', 'Failed'), policy: undefined, want: true },
    { name: 'deleted while running (TerminatingOrFailed)', pod: pod('p', 'Running', { deletionTimestamp: 'now' }), policy: undefined, want: true },
    { name: 'deleted after succeeding', pod: pod('p', 'Succeeded', { deletionTimestamp: 'now' }), policy: undefined, want: false },
    { name: 'deleted while running, policy Failed', pod: pod('p', 'Running', { deletionTimestamp: 'now' }), policy: 'Failed' as const, want: false },
    { name: 'running', pod: pod('p', 'Running'), policy: undefined, want: false },
  ])('isPodFailed: $name', ({ pod: p, policy, want }) => {
    expect(isPodFailed(p, job({ podReplacementPolicy: policy }))).toBe(want);
  });

  it.each([
    { name: 'no failures', record: undefined, want: 0 },
    { name: 'one failure: 10 s', record: { failuresAfterLastSuccess: 1, lastFailureMs: 1000 }, want: 10_000 },
    { name: 'three failures: 40 s', record: { failuresAfterLastSuccess: 3, lastFailureMs: 1000 }, want: 40_000 },
    { name: 'capped at 10 min', record: { failuresAfterLastSuccess: 20, lastFailureMs: 1000 }, want: 600_000 },
  ])('backoffRemainingMs: $name', ({ record, want }) => {
    expect(backoffRemainingMs(record, 1000)).toBe(want);
  });

  it.each([
    { name: 'no deadline', spec: {}, status: { startTime: '2024-01-01T00:00:00Z' }, want: undefined },
    { name: '30 s left', spec: { activeDeadlineSeconds: 60 }, status: { startTime: '2024-01-01T00:00:00Z' }, want: 30_000 },
    { name: 'past', spec: { activeDeadlineSeconds: 10 }, status: { startTime: '2024-01-01T00:00:00Z' }, want: -20_000 },
  ])('activeDeadlineRemainingMs: $name', ({ spec, status, want }) => {
    expect(activeDeadlineRemainingMs(job(spec, status), Date.parse('2024-01-01T00:00:30Z'))).toBe(want);
  });

  it('generates the controller-uid selector when the API left it unset', () => {
    expect(jobSelector(job())).toEqual({ matchLabels: { 'batch.orch.io/controller-uid': 'job-uid' } });
    expect(jobSelector(job({ selector: { matchLabels: { a: 'b' } } }))).toEqual({ matchLabels: { a: 'b' } });
  });

  it.each([
    { name: 'adds a True condition', start: [], type: 'Complete', value: 'True' as const, want: true, transition: 'T1' },
    { name: 'does not add a False one', start: [], type: 'Suspended', value: 'False' as const, want: false, transition: undefined },
    { name: 'same status and reason: unchanged', start: [{ type: 'Complete', status: 'True' as const, reason: 'R', message: 'M', lastTransitionTime: 'T0' }], type: 'Complete', value: 'True' as const, want: false, transition: 'T0' },
    { name: 'a flip moves the transition time', start: [{ type: 'Suspended', status: 'True' as const, reason: 'R', message: 'M', lastTransitionTime: 'T0' }], type: 'Suspended', value: 'False' as const, want: true, transition: 'T1' },
  ])('ensureJobCondition: $name', ({ start, type, value, want, transition }) => {
    const status: JobStatus = { conditions: structuredClone(start) };
    expect(ensureJobCondition(status, type, value, 'R', 'M', 'T1')).toBe(want);
    expect(status.conditions?.find((c) => c.type === type)?.lastTransitionTime).toBe(transition);
  });

  it.each([
    { name: 'non-indexed: the least valuable first', indexed: false, pods: [pod('ready', 'Running', {}, true), pod('pending', 'Pending')], atLeast: 1, want: ['pending'] },
    {
      name: 'indexed: invalid, succeeded and duplicate indexes go',
      indexed: true,
      pods: [
        pod('bad', 'Running', { annotations: { 'batch.orch.io/job-completion-index': '9' } }),
        pod('done', 'Running', { annotations: { 'batch.orch.io/job-completion-index': '0' } }),
        pod('dup-ready', 'Running', { annotations: { 'batch.orch.io/job-completion-index': '1' } }, true),
        pod('dup-pending', 'Pending', { annotations: { 'batch.orch.io/job-completion-index': '1' } }),
        pod('ok', 'Running', { annotations: { 'batch.orch.io/job-completion-index': '2' } }),
      ],
      atLeast: 0,
      want: ['bad', 'done', 'dup-pending'],
    },
  ])('activePodsForRemoval: $name', ({ indexed, pods, atLeast, want }) => {
    const j = job(indexed ? { completionMode: 'Indexed', completions: 3 } : {});
    expect(activePodsForRemoval(j, pods, atLeast, parseIndexes('0', 3), Date.now()).map((p) => p.metadata.name)).toEqual(want);
  });
});
