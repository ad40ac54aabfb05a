import type { Deployment, PodTemplateSpec, ReplicaSet, WorkloadCondition } from '../../framework/api';
import {
  deploymentTimedOut,
  equalIgnoreHash,
  findNewReplicaSet,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  planOldReplicaSetScaleDown,
  planProportionalScale,
  replicaSetsToCleanUp,
  rolloutStatus,
  sameStatus,
  setNewReplicaSetAnnotations,
  stuckRecheckAfterMs,
  templateHash,
} from './util';

const NOW = Date.parse('2024-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

interface D {
  replicas?: number;
  surge?: number | string;
  unavailable?: number | string;
  recreate?: boolean;
  image?: string;
  history?: number;
  deadline?: number;
  status?: Deployment['status'];
  generation?: number;
}
function deploy(o: D = {}): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: o.generation ?? 1 },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: 'web' } },
      template: template(o.image ?? 'v1'),
      strategy: o.recreate ? { type: 'Recreate' } : { type: 'RollingUpdate', rollingUpdate: { maxSurge: o.surge ?? 1, maxUnavailable: o.unavailable ?? 1 } },
      revisionHistoryLimit: o.history,
      progressDeadlineSeconds: o.deadline ?? 600,
    },
    status: o.status,
  };
}

interface R {
  name: string;
  replicas: number;
  available?: number;
  actual?: number;
  revision?: number;
  created?: number;
  image?: string;
  max?: number;
  desired?: number;
}
function rs(o: R): ReplicaSet {
  const annotations: Record<string, string> = {};
  if (o.revision !== undefined) annotations['deployment.orch.io/revision'] = String(o.revision);
  if (o.max !== undefined) annotations['deployment.orch.io/max-replicas'] = String(o.max);
  if (o.desired !== undefined) annotations['deployment.orch.io/desired-replicas'] = String(o.desired);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: o.name, uid: o.name, creationTimestamp: iso(Date.UTC(2024, 0, 1) + (o.created ?? 0) * 1000), annotations, generation: 1 },
    spec: { replicas: o.replicas, selector: { matchLabels: { app: 'web' } }, template: { ...template(o.image ?? 'v1'), metadata: { labels: { app: 'web', 'pod-template-hash': o.name } } } },
    status: { replicas: o.actual ?? o.replicas, availableReplicas: o.available ?? o.replicas, readyReplicas: o.available ?? o.replicas, observedGeneration: 1 },
  };
}

describe('surge and unavailability (ResolveFenceposts)', () => {
  it.each([
    { name: 'integers', d: { replicas: 3, surge: 1, unavailable: 1 }, surge: 1, unavailable: 1 },
    { name: '25% of 3: surge rounds up, unavailable down', d: { replicas: 3, surge: '25%', unavailable: '25%' }, surge: 1, unavailable: 0 },
    { name: '25% of 10', d: { replicas: 10, surge: '25%', unavailable: '25%' }, surge: 3, unavailable: 2 },
    { name: 'both zero: one may be unavailable', d: { replicas: 3, surge: 0, unavailable: 0 }, surge: 0, unavailable: 1 },
    { name: 'unavailable capped at replicas', d: { replicas: 2, surge: 0, unavailable: 5 }, surge: 0, unavailable: 2 },
    { name: 'Recreate has neither', d: { recreate: true }, surge: 0, unavailable: 0 },
    { name: 'zero replicas: nothing unavailable', d: { replicas: 0 }, surge: 1, unavailable: 0 },
  ])('$name', ({ d, surge, unavailable }) => {
    const dep = deploy(d);
    expect({ surge: maxSurge(dep), unavailable: maxUnavailable(dep) }).toEqual({ surge, unavailable });
  });
});

describe('newRSNewReplicas', () => {
  it.each([
    { name: 'start: surge one above replicas', d: {}, old: 3, cur: 0, want: 1 },
    { name: 'at replicas + surge: no growth', d: {}, old: 3, cur: 1, want: 1 },
    { name: 'room made by scaling old down', d: {}, old: 2, cur: 1, want: 2 },
    { name: 'never above replicas', d: { surge: 5 }, old: 0, cur: 2, want: 3 },
    { name: 'Recreate: all at once', d: { recreate: true }, old: 0, cur: 0, want: 3 },
  ])('$name', ({ d, old, cur, want }) => {
    const newRS = rs({ name: 'new', replicas: cur });
    expect(newRSNewReplicas(deploy(d), [rs({ name: 'old', replicas: old }), newRS], newRS)).toBe(want);
  });
});

describe('planOldReplicaSetScaleDown (reconcileOldReplicaSets)', () => {
  it.each([
    { name: 'new pod not yet available: one old pod goes (3 - maxUnavailable 1 stay)', d: {}, old: { replicas: 3, available: 3 }, cur: { replicas: 1, available: 0 }, want: [2] },
    { name: 'new pod available: two old pods may go', d: {}, old: { replicas: 3, available: 3 }, cur: { replicas: 1, available: 1 }, want: [1] },
    { name: 'unhealthy old pods go first', d: {}, old: { replicas: 3, available: 1 }, cur: { replicas: 1, available: 0 }, want: [2] },
    { name: 'maxUnavailable 0 with an unavailable new pod: nothing', d: { unavailable: 0 }, old: { replicas: 3, available: 3 }, cur: { replicas: 1, available: 0 }, want: [] },
    { name: 'no old pods: nothing', d: {}, old: { replicas: 0, available: 0 }, cur: { replicas: 3, available: 3 }, want: [] },
  ])('$name', ({ d, old, cur, want }) => {
    const o = rs({ name: 'old', ...old });
    const n = rs({ name: 'new', ...cur, created: 10 });
    expect(planOldReplicaSetScaleDown(deploy(d), [o, n], [o].filter((s) => (s.spec.replicas ?? 0) > 0), n).map((s) => s.replicas)).toEqual(want);
  });

  it('scales the oldest set first', () => {
    const a = rs({ name: 'a', replicas: 1, created: 1 });
    const b = rs({ name: 'b', replicas: 2, created: 2 });
    const n = rs({ name: 'n', replicas: 1, available: 1, created: 3 });
    expect(planOldReplicaSetScaleDown(deploy(), [a, b, n], [b, a], n).map((s) => [s.rs.metadata.name, s.replicas])).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
  });
});

describe('planProportionalScale (scaling events)', () => {
  it.each([
    { name: 'a single active set takes the new size', d: { replicas: 5 }, sets: [{ name: 'new', replicas: 3, created: 2 }, { name: 'old', replicas: 0, created: 1 }], want: { new: 5 } },
    {
      name: 'a saturated new set scales old sets to zero',
      d: { replicas: 3 },
      sets: [{ name: 'new', replicas: 3, desired: 3, available: 3, created: 2 }, { name: 'old', replicas: 1, created: 1 }],
      want: { old: 0 },
    },
    {
      name: 'mid-rollout: the difference is spread by size (upstream example 10 → 20, maxSurge 3)',
      d: { replicas: 20, surge: 3, unavailable: 0 },
      sets: [{ name: 'old', replicas: 8, max: 13, created: 1 }, { name: 'new', replicas: 5, max: 13, created: 2 }],
      want: { old: 14, new: 9 },
    },
    {
      name: 'scaling down takes from the older set first on ties',
      d: { replicas: 2, surge: 0, unavailable: 1 },
      sets: [{ name: 'old', replicas: 2, max: 4, created: 1 }, { name: 'new', replicas: 2, max: 4, created: 2 }],
      want: { old: 1, new: 1 },
    },
  ])('$name', ({ d, sets, want }) => {
    const all = sets.map((s) => rs(s));
    const newRS = all.find((s) => s.metadata.name === 'new');
    const plan = planProportionalScale(deploy(d), newRS, all.filter((s) => s !== newRS));
    const got = Object.fromEntries(plan.steps.filter((s) => s.replicas !== s.rs.spec.replicas || plan.proportional).map((s) => [s.rs.metadata.name, s.replicas]));
    expect(got).toEqual(want);
  });
});

describe('revisions and annotations', () => {
  it.each([
    { name: 'a new set gets the revision and replica annotations', ann: {} as Record<string, string>, exists: false, want: { 'deployment.orch.io/revision': '3', 'deployment.orch.io/desired-replicas': '3', 'deployment.orch.io/max-replicas': '4' } },
    { name: 'a reused set (rollback) records its old revision', ann: { 'deployment.orch.io/revision': '1' }, exists: true, want: { 'deployment.orch.io/revision': '3', 'deployment.orch.io/revision-history': '1' } },
    { name: 'history accumulates', ann: { 'deployment.orch.io/revision': '2', 'deployment.orch.io/revision-history': '1' }, exists: true, want: { 'deployment.orch.io/revision': '3', 'deployment.orch.io/revision-history': '1,2' } },
    { name: 'a current revision stays', ann: { 'deployment.orch.io/revision': '3' }, exists: true, want: { 'deployment.orch.io/revision': '3' } },
    // Compatibility option: the twins kubectl rollout history / undo read.
    {
      name: 'a new set also gets the deployment.kubernetes.io twins',
      ann: {},
      exists: false,
      twins: true,
      want: {
        'deployment.orch.io/revision': '3',
        'deployment.orch.io/desired-replicas': '3',
        'deployment.orch.io/max-replicas': '4',
        'deployment.kubernetes.io/revision': '3',
        'deployment.kubernetes.io/desired-replicas': '3',
        'deployment.kubernetes.io/max-replicas': '4',
      },
    },
    {
      name: 'a set with only the upstream revision (written by stock tools) is read by it',
      ann: { 'deployment.kubernetes.io/revision': '1' },
      exists: true,
      twins: true,
      want: { 'deployment.orch.io/revision': '3', 'deployment.orch.io/revision-history': '1', 'deployment.kubernetes.io/revision': '3', 'deployment.kubernetes.io/revision-history': '1' },
    },
  ])('$name', ({ ann, exists, want, twins }) => {
    const set = rs({ name: 'x', replicas: 0 });
    set.metadata.annotations = { ...(ann as Record<string, string>) };
    const d = deploy();
    // The deployment's own revision annotations (and their twins) are never copied to its sets.
    d.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}', team: 'a', 'deployment.orch.io/revision': '9', 'deployment.kubernetes.io/revision': '9' };
    setNewReplicaSetAnnotations(d, set, 3, exists, twins ?? false);
    expect(set.metadata.annotations).toEqual({ ...want, team: 'a' });
  });

  it.each([
    { name: 'same template', a: template('v1'), b: template('v1'), want: true },
    { name: 'only the hash label differs', a: { ...template('v1'), metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } } }, b: template('v1'), want: true },
    { name: 'empty and missing maps are equal', a: { ...template('v1'), metadata: { labels: { app: 'web' }, annotations: {} } }, b: template('v1'), want: true },
    { name: 'image differs', a: template('v1'), b: template('v2'), want: false },
  ])('equalIgnoreHash: $name', ({ a, b, want }) => {
    expect(equalIgnoreHash(a as PodTemplateSpec, b)).toBe(want);
  });

  it('finds the oldest set with the deployment template; the hash follows the template', () => {
    const sets = [rs({ name: 'b', replicas: 1, created: 5 }), rs({ name: 'a', replicas: 1, created: 1 }), rs({ name: 'c', replicas: 1, image: 'v2' })];
    expect(findNewReplicaSet(deploy(), sets)?.metadata.name).toBe('a');
    expect(templateHash(template('v1'))).not.toBe(templateHash(template('v2')));
    expect(templateHash(template('v1'), 1)).not.toBe(templateHash(template('v1')));
  });

  it.each([
    { name: 'no limit: keep all', history: undefined, want: [] as string[] },
    { name: 'limit 1 of 3 old sets: the two oldest revisions go', history: 1, want: ['r1', 'r2'] },
    { name: 'sets still scaled are kept', history: 0, want: ['r1', 'r2'] },
  ])('replicaSetsToCleanUp: $name', ({ history, want }) => {
    const old = [rs({ name: 'r3', replicas: 0, revision: 3 }), rs({ name: 'r1', replicas: 0, revision: 1 }), rs({ name: 'r2', replicas: 0, revision: 2 })];
    if (history === 0) old[0].spec.replicas = 1;
    expect(replicaSetsToCleanUp(deploy({ history }), old).map((s) => s.metadata.name)).toEqual(want);
  });
});

describe('rollout status and conditions', () => {
  const progressing = (reason: string, updated: number): WorkloadCondition => ({ type: 'Progressing', status: 'True', reason, lastUpdateTime: iso(updated), lastTransitionTime: iso(updated) });
  it.each([
    {
      name: 'complete: NewReplicaSetAvailable',
      d: { status: { replicas: 3, updatedReplicas: 3, conditions: [progressing('ReplicaSetUpdated', NOW - 1000)] } },
      sets: [{ name: 'new', replicas: 3 }],
      want: { Progressing: ['True', 'NewReplicaSetAvailable'], Available: ['True', 'MinimumReplicasAvailable'] },
    },
    {
      name: 'more updated pods than before: ReplicaSetUpdated',
      d: { status: { replicas: 4, updatedReplicas: 1, conditions: [progressing('NewReplicaSetCreated', NOW - 1000)] } },
      sets: [{ name: 'old', replicas: 2 }, { name: 'new', replicas: 2, available: 0 }],
      want: { Progressing: ['True', 'ReplicaSetUpdated'], Available: ['True', 'MinimumReplicasAvailable'] },
    },
    {
      name: 'no progress past the deadline: ProgressDeadlineExceeded',
      d: { deadline: 60, status: { replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3, conditions: [progressing('ReplicaSetUpdated', NOW - 120_000)] } },
      sets: [{ name: 'old', replicas: 3 }, { name: 'new', replicas: 1, available: 0 }],
      want: { Progressing: ['False', 'ProgressDeadlineExceeded'], Available: ['True', 'MinimumReplicasAvailable'] },
    },
    {
      name: 'too few available pods: Available False',
      d: { unavailable: 0, status: { conditions: [progressing('NewReplicaSetCreated', NOW)] } },
      sets: [{ name: 'new', replicas: 3, available: 1 }],
      want: { Progressing: ['True', 'ReplicaSetUpdated'], Available: ['False', 'MinimumReplicasUnavailable'] },
    },
  ])('$name', ({ d, sets, want }) => {
    const dep = deploy(d);
    const all = sets.map((s) => rs(s));
    const newRS = all.find((s) => s.metadata.name === 'new');
    const status = rolloutStatus(all, newRS, dep, NOW, iso(NOW));
    const got = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]));
    expect(got).toEqual(want);
  });

  it.each([
    { name: 'under the deadline', reason: 'ReplicaSetUpdated', updated: NOW - 10_000, want: false },
    { name: 'past the deadline', reason: 'ReplicaSetUpdated', updated: NOW - 700_000, want: true },
    { name: 'complete rollouts never time out', reason: 'NewReplicaSetAvailable', updated: NOW - 700_000, want: false },
    { name: 'timed out stays timed out', reason: 'ProgressDeadlineExceeded', updated: NOW, want: true },
  ])('deploymentTimedOut: $name', ({ reason, updated, want }) => {
    expect(deploymentTimedOut(deploy(), { conditions: [progressing(reason, updated)] }, NOW)).toBe(want);
  });

  // The gateway stores statuses as Go writes them (no zero counts): a computed status with zeros is the same.
  it.each([
    { name: 'zero counts and absent ones', a: { replicas: 1, updatedReplicas: 1 }, b: { replicas: 1, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0 }, want: true },
    { name: 'key order', a: { replicas: 1, updatedReplicas: 2 }, b: { updatedReplicas: 2, replicas: 1 }, want: true },
    { name: 'a count changed', a: { replicas: 1 }, b: { replicas: 1, readyReplicas: 1 }, want: false },
    { name: 'a condition changed', a: { conditions: [progressing('ReplicaSetUpdated', NOW)] }, b: { conditions: [progressing('ProgressDeadlineExceeded', NOW)] }, want: false },
  ])('sameStatus: $name', ({ a, b, want }) => {
    expect(sameStatus(a, b)).toBe(want);
  });

  it.each([
    { name: 'recheck just after the deadline', reason: 'ReplicaSetUpdated', updated: NOW - 100_000, deadline: 600, want: 501_000 },
    { name: 'deadline already past: at once', reason: 'ReplicaSetUpdated', updated: NOW - 700_000, deadline: 600, want: 0 },
    { name: 'timed out: nothing to check', reason: 'ProgressDeadlineExceeded', updated: NOW, deadline: 600, want: undefined },
  ])('stuckRecheckAfterMs: $name', ({ reason, updated, deadline, want }) => {
    const d = deploy({ deadline, status: { conditions: [progressing(reason, updated)] } });
    expect(stuckRecheckAfterMs(d, { replicas: 1 }, NOW)).toBe(want);
  });
});
