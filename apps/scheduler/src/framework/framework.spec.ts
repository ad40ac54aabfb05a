import { defaultPlugins, inTreeRegistry } from '../plugins/registry';
import { FakeClock } from './clock';
import { ConfigError, type ProfileConfig } from './config';
import { CycleState } from './cycle-state';
import { Framework } from './framework';
import type { Handle, PermitPlugin, PermitResult, Registry } from './interface';
import { Snapshot } from './snapshot';
import { Status } from './status';
import { makePod } from './testing';
import { PodInfo } from './types';

/** A Permit plugin that waits up to 1 s, for tests of the waiting machinery. */
class WaitPermit implements PermitPlugin {
  readonly name = 'WaitPermit';
  permit(): PermitResult {
    return { status: Status.wait(), timeoutMs: 1000 };
  }
}

const registry: Registry = { ...inTreeRegistry, WaitPermit: { factory: () => new WaitPermit() } };

function build(profile: Partial<ProfileConfig> = {}, clock = new FakeClock()): Framework {
  return new Framework({ schedulerName: 'test', ...profile }, { registry, defaultPlugins, snapshot: () => new Snapshot(), clock });
}

const names = (ps: Array<{ name: string }>): string[] => ps.map((p) => p.name);

describe('Framework profiles', () => {
  it('expands the default multiPoint plugins into each extension point', () => {
    const f = build();
    expect(f.queueSortPlugin.name).toBe('PrioritySort');
    expect(names(f.preFilterPlugins)).toEqual(['NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity']);
    expect(names(f.filterPlugins)).toEqual(['NodeUnschedulable', 'NodeName', 'TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity']);
    expect(names(f.postFilterPlugins)).toEqual(['DefaultPreemption']);
    expect(names(f.preScorePlugins)).toEqual(['TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity', 'NodeResourcesBalancedAllocation', 'ImageLocality']);
    expect(Object.fromEntries(f.scoreWeights)).toEqual({
      TaintToleration: 3,
      NodeAffinity: 2,
      NodeResourcesFit: 1,
      PodTopologySpread: 2,
      InterPodAffinity: 2,
      NodeResourcesBalancedAllocation: 1,
      ImageLocality: 1,
    });
    expect(names(f.bindPlugins)).toEqual(['DefaultBinder']);
  });

  it.each<{ name: string; profile: Partial<ProfileConfig>; point: 'filterPlugins' | 'scorePlugins' | 'permitPlugins'; want: string[]; weights?: Record<string, number> }>([
    { name: 'disable one plugin at one point', profile: { plugins: { score: { disabled: [{ name: 'ImageLocality' }] } } }, point: 'scorePlugins', want: ['TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity', 'NodeResourcesBalancedAllocation'] },
    {
      name: 'disable all scores and enable one with a weight',
      profile: { plugins: { score: { disabled: [{ name: '*' }], enabled: [{ name: 'NodeResourcesFit', weight: 5 }] } } },
      point: 'scorePlugins',
      want: ['NodeResourcesFit'],
      weights: { NodeResourcesFit: 5 },
    },
    {
      name: 'a point-specific entry overrides the multiPoint weight and comes first',
      profile: { plugins: { score: { enabled: [{ name: 'ImageLocality', weight: 9 }] } } },
      point: 'scorePlugins',
      want: ['ImageLocality', 'TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity', 'NodeResourcesBalancedAllocation'],
      weights: { ImageLocality: 9 },
    },
    { name: 'multiPoint disable removes a plugin everywhere', profile: { plugins: { multiPoint: { disabled: [{ name: 'TaintToleration' }] } } }, point: 'filterPlugins', want: ['NodeUnschedulable', 'NodeName', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity'] },
    { name: 'custom plugin at its point', profile: { plugins: { permit: { enabled: [{ name: 'WaitPermit' }] } } }, point: 'permitPlugins', want: ['WaitPermit'] },
  ])('$name', ({ profile, point, want, weights }) => {
    const f = build(profile);
    expect(names(f[point])).toEqual(want);
    for (const [k, v] of Object.entries(weights ?? {})) expect(f.scoreWeights.get(k)).toBe(v);
  });

  it.each<{ name: string; profile: Partial<ProfileConfig>; want: string }>([
    { name: 'no queue sort', profile: { plugins: { multiPoint: { disabled: [{ name: 'PrioritySort' }] } } }, want: 'exactly one queue sort plugin must be enabled' },
    { name: 'no binder', profile: { plugins: { multiPoint: { disabled: [{ name: 'DefaultBinder' }] } } }, want: 'at least one bind plugin is needed' },
    { name: 'plugin at the wrong point', profile: { plugins: { bind: { enabled: [{ name: 'NodeName' }] } } }, want: 'plugin does not extend the bind extension point' },
    { name: 'unknown plugin', profile: { plugins: { filter: { enabled: [{ name: 'Nope' }] } } }, want: 'plugin not found in the registry' },
  ])('rejects $name', ({ profile, want }) => {
    expect(() => build(profile)).toThrow(ConfigError);
    expect(() => build(profile)).toThrow(want);
  });
});

describe('Framework permit', () => {
  const profile = { plugins: { permit: { enabled: [{ name: 'WaitPermit' }] } } };
  it.each<{ name: string; act: (h: Handle, clock: FakeClock, key: string) => void; want: string }>([
    { name: 'allowed by the plugin', act: (h, _c, key) => h.getWaitingPod(key)!.allow('WaitPermit'), want: 'Success' },
    { name: 'rejected by a plugin', act: (h, _c, key) => h.getWaitingPod(key)!.reject('WaitPermit', 'no quorum'), want: 'Unschedulable: no quorum' },
    { name: 'timed out', act: (_h, c) => c.step(1000), want: 'Unschedulable: rejected due to timeout after waiting 1000ms at plugin WaitPermit' },
  ])('$name', async ({ act, want }) => {
    const clock = new FakeClock();
    const f = build(profile, clock);
    const pod = new PodInfo(makePod('p'));
    expect(f.runPermitPlugins(new CycleState(), pod, 'n1').code).toBe('Wait');
    expect(f.getWaitingPod(pod.key)?.pendingPlugins()).toEqual(['WaitPermit']);
    const done = f.waitOnPermit(pod);
    act(f, clock, pod.key);
    expect((await done).toString()).toBe(want);
    expect(f.getWaitingPod(pod.key)).toBeUndefined();
  });
});
