import type { Job, JobStatus, Pod } from '../../framework/api';
import { JOB_TRACKING_FINALIZER } from './job-util';
import { moveUncounted, trackFinishedPods } from './tracking';

const job = (indexed: boolean, status: Job['status'] = {}): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j' },
  spec: { completions: 3, completionMode: indexed ? 'Indexed' : 'NonIndexed', template: { spec: { containers: [] } } },
  status,
});
const pod = (uid: string, phase: string, opts: { index?: number; finalizer?: boolean; deleting?: boolean } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: uid,
    uid,
    finalizers: opts.finalizer === false ? undefined : [JOB_TRACKING_FINALIZER],
    annotations: opts.index === undefined ? undefined : { 'batch.orch.io/job-completion-index': String(opts.index) },
    deletionTimestamp: opts.deleting ? 'now' : undefined,
  },
  spec: { containers: [] },
  status: { phase: phase as 'Running' },
});

describe('trackFinishedPods', () => {
  it.each([
    {
      name: 'finished pods become uncounted and are released',
      job: job(false),
      pods: [pod('s', 'Succeeded'), pod('f', 'Failed'), pod('r', 'Running'), pod('gone', 'Running', { deleting: true })],
      want: { succeeded: ['s'], failed: ['f', 'gone'], release: ['s', 'f', 'gone'], newSucceeded: 1, newFailed: 2, needsFlush: true },
    },
    {
      name: 'pods already uncounted are released again but not counted again',
      job: job(false, { uncountedTerminatedPods: { succeeded: ['s'] } }),
      pods: [pod('s', 'Succeeded')],
      want: { succeeded: ['s'], failed: [], release: ['s'], newSucceeded: 0, newFailed: 0, needsFlush: false },
    },
    {
      name: 'pods without the finalizer were counted already',
      job: job(false),
      pods: [pod('s', 'Succeeded', { finalizer: false })],
      want: { succeeded: [], failed: [], release: [], newSucceeded: 0, newFailed: 0, needsFlush: false },
    },
    {
      name: 'indexed: a success adds its index once, duplicates and invalid indexes only release',
      job: job(true, { completedIndexes: '0' }),
      pods: [pod('a', 'Succeeded', { index: 1 }), pod('b', 'Succeeded', { index: 1 }), pod('c', 'Succeeded', { index: 0 }), pod('d', 'Succeeded', { index: 7 })],
      want: { succeeded: [], failed: [], release: ['a', 'b', 'c', 'd'], newSucceeded: 1, newFailed: 0, needsFlush: true },
    },
  ])('$name', ({ job: j, pods, want }) => {
    const r = trackFinishedPods(j, pods, new Set());
    expect({ succeeded: r.uncounted.succeeded, failed: r.uncounted.failed, release: r.release.map((p) => p.metadata.uid), newSucceeded: r.newSucceeded, newFailed: r.newFailed, needsFlush: r.needsFlush }).toEqual(want);
  });

  it('skips pods whose finalizer removal is in flight', () => {
    expect(trackFinishedPods(job(false), [pod('s', 'Succeeded')], new Set(['s'])).release).toEqual([]);
  });

  it('indexed jobs merge the new indexes', () => {
    expect(trackFinishedPods(job(true, { completedIndexes: '0' }), [pod('a', 'Succeeded', { index: 2 })], new Set()).succeededIndexes).toEqual([
      { first: 0, last: 0 },
      { first: 2, last: 2 },
    ]);
  });
});

describe('moveUncounted', () => {
  it.each([
    { name: 'released pods move into the counts', status: { succeeded: 1, uncountedTerminatedPods: { succeeded: ['a', 'b'], failed: ['c'] } }, holding: ['b'], want: { succeeded: 2, failed: 1, uncountedTerminatedPods: { succeeded: ['b'] } }, moved: true },
    { name: 'nothing released yet', status: { uncountedTerminatedPods: { failed: ['c'] } }, holding: ['c'], want: { uncountedTerminatedPods: { failed: ['c'] } }, moved: false },
  ])('$name', ({ status, holding, want, moved }) => {
    const s: JobStatus = structuredClone(status);
    expect(moveUncounted(s, new Set(holding))).toBe(moved);
    expect(s).toEqual(want);
  });
});
