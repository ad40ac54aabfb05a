import type { ResourceList } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { BalancedAllocation, balancedScore } from './balanced-allocation';

describe('NodeResourcesBalancedAllocation', () => {
  it.each<{ name: string; requests?: ResourceList; existing?: ResourceList; want: number | 'skip' }>([
    { name: 'best-effort pod is skipped', want: 'skip' },
    { name: 'even use scores 100', requests: { cpu: '2', memory: '4Gi' }, want: 100 },
    { name: 'uneven use scores lower', requests: { cpu: '1', memory: '1Gi' }, want: 93 },
    { name: 'existing usage counts', requests: { cpu: '1' }, existing: { cpu: '1', memory: '4Gi' }, want: 100 },
    { name: 'over capacity fractions are capped', requests: { cpu: '8', memory: '0' }, want: 50 },
  ])('$name', ({ requests, existing, want }) => {
    const pl = new BalancedAllocation();
    const state = new CycleState();
    const pod = new PodInfo(makePod('p', { requests }));
    const pre = pl.preScore(state, pod);
    if (want === 'skip') return expect(pre.isSkip()).toBe(true);
    const node = makeNodeInfo(makeNode('n'), existing ? [makePod('e', { nodeName: 'n', requests: existing })] : []);
    expect(pl.score(state, pod, node)).toBe(want);
  });

  it.each([
    { name: 'three resources use the standard deviation', requested: [1, 2, 3], allocatable: [4, 4, 4], want: 79 },
    { name: 'resources the node lacks are ignored', requested: [1, 5], allocatable: [2, 0], want: 100 },
  ])('balancedScore: $name', ({ requested, allocatable, want }) => {
    expect(balancedScore(requested, allocatable)).toBe(want);
  });
});
