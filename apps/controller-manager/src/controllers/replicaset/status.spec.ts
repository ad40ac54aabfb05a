import type { Pod, ReplicaSet } from '../../framework/api';
import { calculateReplicaSetStatus, replicaSetStatusChanged } from './status';

const NOW = Date.parse('2024-01-01T12:00:00Z');
/** A set with a partial status (as a stored object may be, before the controller filled it). */
const rs = (minReadySeconds = 0, status: Partial<NonNullable<ReplicaSet['status']>> = {}): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'rs', generation: 2 },
  spec: { replicas: 3, minReadySeconds, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [] } } },
  status: status as ReplicaSet['status'],
});
const pod = (labels: Record<string, string>, readySecondsAgo?: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels },
  spec: { containers: [] },
  status: { phase: 'Running', conditions: readySecondsAgo === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(NOW - readySecondsAgo * 1000).toISOString() }] },
});
const full = { app: 'web', tier: 'fe' };

describe('calculateReplicaSetStatus', () => {
  it.each([
    { name: 'counts', set: rs(), pods: [pod(full, 5), pod({ app: 'web' }, 5), pod(full)], want: { replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2 } },
    { name: 'minReadySeconds delays availability', set: rs(10), pods: [pod(full, 5), pod(full, 60)], want: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1 } },
    { name: 'no pods', set: rs(), pods: [], want: { replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0 } },
  ])('$name', ({ set, pods, want }) => {
    expect(calculateReplicaSetStatus(set, pods, undefined, NOW)).toMatchObject(want);
  });

  it.each([
    { name: 'a failed create adds ReplicaFailure FailedCreate', pods: [pod(full, 1)], err: new Error('quota'), want: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota' }] },
    { name: 'a failed delete adds FailedDelete', pods: [pod(full), pod(full), pod(full), pod(full)], err: new Error('denied'), want: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedDelete', message: 'denied' }] },
  ])('$name', ({ pods, err, want }) => {
    expect(calculateReplicaSetStatus(rs(), pods, err, NOW).conditions).toMatchObject(want);
  });

  it('success removes the ReplicaFailure condition', () => {
    const failing = rs(0, { conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate' }] });
    expect(calculateReplicaSetStatus(failing, [], undefined, NOW).conditions).toBeUndefined();
  });

  it.each([
    { name: 'same counts and observed generation', status: { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0, observedGeneration: 2 }, want: false },
    { name: 'generation not observed yet', status: { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 }, want: true },
    { name: 'a count changed', status: { replicas: 2, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0, observedGeneration: 2 }, want: true },
  ])('replicaSetStatusChanged: $name', ({ status, want }) => {
    const set = rs(0, status);
    expect(replicaSetStatusChanged(set, calculateReplicaSetStatus(set, [pod(full)], undefined, NOW))).toBe(want);
  });
});
