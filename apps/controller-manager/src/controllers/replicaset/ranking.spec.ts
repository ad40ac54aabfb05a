import type { Pod } from '../../framework/api';
import { comparePodsForDeletion, deletionCost, podsToDelete } from './ranking';

const NOW = Date.parse('2024-01-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString().replace('.000Z', 'Z');

interface PodSpec {
  name: string;
  node?: string;
  phase?: 'Pending' | 'Running' | 'Unknown';
  readyFor?: number;
  cost?: string;
  restarts?: number;
  age?: number;
}

function pod(p: PodSpec): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, uid: p.name, creationTimestamp: ago(p.age ?? 3600), annotations: p.cost !== undefined ? { 'controller.orch.io/pod-deletion-cost': p.cost } : undefined },
    spec: { containers: [{ name: 'c' }], nodeName: p.node },
    status: {
      phase: p.phase ?? 'Running',
      conditions: p.readyFor !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: ago(p.readyFor) }] : [],
      containerStatuses: [{ name: 'c', ready: true, image: 'img', imageID: '', restartCount: p.restarts ?? 0 }],
    },
  };
}

describe('deletionCost', () => {
  it.each([
    { cost: undefined, want: 0 },
    { cost: '100', want: 100 },
    { cost: '-5', want: -5 },
    { cost: '+7', want: 7 },
    { cost: '2147483648', want: 0 },
    { cost: 'high', want: 0 },
  ])('$cost → $want', ({ cost, want }) => {
    expect(deletionCost(pod({ name: 'p', cost }))).toBe(want);
  });
});

describe('comparePodsForDeletion: which of two pods goes first', () => {
  it.each([
    { name: 'lower deletion cost first', a: { name: 'a', node: 'n', readyFor: 100, cost: '-1' }, b: { name: 'b', readyFor: 100, cost: '5' }, first: 'a' },
    { name: 'cost wins over phase', a: { name: 'a', node: 'n', readyFor: 100, cost: '1' }, b: { name: 'b', phase: 'Pending' as const, cost: '10' }, first: 'a' },
    { name: 'unassigned before assigned', a: { name: 'a', node: 'n', readyFor: 100 }, b: { name: 'b', readyFor: 100 }, first: 'b' },
    { name: 'pending before running', a: { name: 'a', node: 'n', readyFor: 100 }, b: { name: 'b', node: 'n', phase: 'Pending' as const }, first: 'b' },
    { name: 'unknown before running', a: { name: 'a', node: 'n', phase: 'Unknown' as const }, b: { name: 'b', node: 'n' }, first: 'a' },
    { name: 'not ready before ready', a: { name: 'a', node: 'n', readyFor: 100 }, b: { name: 'b', node: 'n' }, first: 'b' },
    { name: 'doubled up (higher rank) first', a: { name: 'a', node: 'n', readyFor: 100 }, b: { name: 'b', node: 'm', readyFor: 100 }, rankA: 1, rankB: 3, first: 'b' },
    { name: 'ready more recently first (log scale)', a: { name: 'a', node: 'n', readyFor: 10 }, b: { name: 'b', node: 'n', readyFor: 10_000 }, first: 'a' },
    { name: 'more restarts first', a: { name: 'a', node: 'n', readyFor: 100, restarts: 5 }, b: { name: 'b', node: 'n', readyFor: 100 }, first: 'a' },
    { name: 'newer first', a: { name: 'a', node: 'n', age: 60 }, b: { name: 'b', node: 'n', age: 100_000 }, first: 'a' },
    { name: 'similar ages tie by uid', a: { name: 'b', node: 'n', age: 100 }, b: { name: 'a', node: 'n', age: 101 }, first: 'a' },
  ])('$name', ({ a, b, rankA, rankB, first }) => {
    const pa = { pod: pod(a), rank: rankA ?? 0 };
    const pb = { pod: pod(b), rank: rankB ?? 0 };
    const got = comparePodsForDeletion(pa, pb, NOW) < 0 ? pa.pod.metadata.name : pb.pod.metadata.name;
    expect(got).toBe(first);
    expect(Math.sign(comparePodsForDeletion(pb, pa, NOW))).toBe(-Math.sign(comparePodsForDeletion(pa, pb, NOW)));
  });
});

describe('podsToDelete', () => {
  const pods = [pod({ name: 'ready-old', node: 'n1', readyFor: 10_000 }), pod({ name: 'pending', node: 'n2', phase: 'Pending' }), pod({ name: 'ready-new', node: 'n3', readyFor: 5 }), pod({ name: 'doubled', node: 'n1', readyFor: 10_000 })];
  it.each([
    { name: 'the cheapest pod goes', diff: 1, want: ['pending'] },
    // n1 holds three active pods of the family: its pods go before the lone pod on n3.
    { name: 'then doubled-up pods (equal ones keep their order)', diff: 3, want: ['pending', 'ready-old', 'doubled'] },
    { name: 'all of them without ranking', diff: 4, want: ['ready-old', 'pending', 'ready-new', 'doubled'] },
  ])('$name', ({ diff, want }) => {
    const related = [...pods, pod({ name: 'sibling', node: 'n1', readyFor: 1 })];
    expect(podsToDelete(pods, related, diff, NOW).map((p) => p.metadata.name)).toEqual(want);
  });
});
