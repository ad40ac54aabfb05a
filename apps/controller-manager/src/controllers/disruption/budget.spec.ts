import type { Pod, PodDisruptionBudget } from '../../framework/api';
import { budgetStatus, countHealthy, expectedPodCount, failSafeStatus, pendingDisruptions } from './budget';

const NOW = Date.parse('2024-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
/** A budget with a partial status (as a stored object may be, before the controller filled it). */
const pdb = (spec: PodDisruptionBudget['spec'], status: Partial<NonNullable<PodDisruptionBudget['status']>> = {}): PodDisruptionBudget => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'b', generation: 2 },
  spec,
  status: status as PodDisruptionBudget['status'],
});
const pod = (name: string, ready: boolean, deleting = false): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, deletionTimestamp: deleting ? 'now' : undefined },
  spec: { containers: [] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('expectedPodCount', () => {
  it.each([
    { name: 'integer minAvailable counts selected pods', spec: { minAvailable: 2 }, pods: 3, scale: 5, want: { expected: 3, desiredHealthy: 2 } },
    { name: 'percentage minAvailable uses the controllers (rounded up)', spec: { minAvailable: '50%' }, pods: 3, scale: 5, want: { expected: 5, desiredHealthy: 3 } },
    { name: 'maxUnavailable integer', spec: { maxUnavailable: 1 }, pods: 3, scale: 4, want: { expected: 4, desiredHealthy: 3 } },
    { name: 'maxUnavailable percentage rounds up', spec: { maxUnavailable: '34%' }, pods: 3, scale: 3, want: { expected: 3, desiredHealthy: 1 } },
    { name: 'maxUnavailable above the scale', spec: { maxUnavailable: 10 }, pods: 3, scale: 3, want: { expected: 3, desiredHealthy: 0 } },
  ])('$name', ({ spec, pods, scale, want }) => {
    expect(expectedPodCount(pdb(spec), pods, () => scale)).toEqual(want);
  });
});

describe('disruptions', () => {
  it.each<{ name: string; disrupted: Record<string, string>; want: string[]; recheck?: number }>([
    { name: 'a recent eviction of a live pod is pending', disrupted: { a: iso(NOW - 10_000) }, want: ['a'], recheck: NOW - 10_000 + 120_000 },
    { name: 'expired after two minutes', disrupted: { a: iso(NOW - 200_000) }, want: [], recheck: undefined },
    { name: 'done once the pod is being deleted', disrupted: { c: iso(NOW - 10_000) }, want: [], recheck: undefined },
    { name: 'done once the pod is gone', disrupted: { zz: iso(NOW - 10_000) }, want: [], recheck: undefined },
  ])('pendingDisruptions: $name', ({ disrupted, want, recheck }) => {
    const r = pendingDisruptions(pdb({}, { disruptedPods: disrupted }), [pod('a', true), pod('b', true), pod('c', true, true)], NOW);
    expect(Object.keys(r.disrupted)).toEqual(want);
    expect(r.recheckAtMs).toBe(recheck);
  });

  it('healthy pods are ready, not deleting and not pending eviction', () => {
    expect(countHealthy([pod('a', true), pod('b', true), pod('c', true, true), pod('d', false)], { b: 'x' })).toBe(1);
  });

  it.each([
    { name: 'spare healthy pods can be disrupted', healthy: 3, desired: 2, expected: 3, want: { disruptionsAllowed: 1, reason: 'SufficientPods', status: 'True' } },
    { name: 'at the budget: none', healthy: 2, desired: 2, expected: 3, want: { disruptionsAllowed: 0, reason: 'InsufficientPods', status: 'False' } },
    { name: 'below the budget: none', healthy: 1, desired: 2, expected: 3, want: { disruptionsAllowed: 0, reason: 'InsufficientPods', status: 'False' } },
    { name: 'no expected pods: none', healthy: 3, desired: 0, expected: 0, want: { disruptionsAllowed: 0, reason: 'InsufficientPods', status: 'False' } },
  ])('budgetStatus: $name', ({ healthy, desired, expected, want }) => {
    const s = budgetStatus(pdb({ minAvailable: desired }), healthy, desired, expected, {}, iso(NOW));
    const cond = s.conditions?.find((c) => c.type === 'DisruptionAllowed');
    expect({ disruptionsAllowed: s.disruptionsAllowed, reason: cond?.reason, status: cond?.status }).toEqual(want);
    expect(s).toMatchObject({ currentHealthy: healthy, desiredHealthy: desired, expectedPods: expected, observedGeneration: 2 });
    expect(cond?.observedGeneration).toBe(2);
  });

  it('keeps the transition time while the condition status holds', () => {
    const before = { type: 'DisruptionAllowed', status: 'False' as const, reason: 'InsufficientPods', message: '', lastTransitionTime: 'T0' };
    const s = budgetStatus(pdb({ minAvailable: 2 }, { conditions: [before] }), 2, 2, 2, {}, 'T1');
    expect(s.conditions?.[0].lastTransitionTime).toBe('T0');
    const flipped = budgetStatus(pdb({ minAvailable: 2 }, { conditions: [before] }), 3, 2, 3, {}, 'T1');
    expect(flipped.conditions?.[0]).toMatchObject({ status: 'True', lastTransitionTime: 'T1' });
  });

  it('a failed sync allows no disruption', () => {
    expect(failSafeStatus(pdb({}, { disruptionsAllowed: 3 }), 'found no controllers for pod "a"', 'T1')).toMatchObject({
      disruptionsAllowed: 0,
      conditions: [{ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "a"' }],
    });
  });
});
