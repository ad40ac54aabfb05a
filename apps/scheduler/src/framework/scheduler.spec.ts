import { Registry as PromRegistry } from 'prom-client';
import { LABEL_ZONE, type Node, type Pod, type PodCondition } from './api';
import { FakeClock } from './clock';
import { defaultSchedulerConfiguration, type SchedulerConfiguration } from './config';
import { SchedulerMetrics } from './metrics';
import { PriorityResolver } from './priority';
import { numFeasibleNodesToFind, Scheduler, type SchedulerEvent, type SchedulerOptions } from './scheduler';
import { makeNode, makePod } from './testing';

/** A deterministic PRNG for tie-breaking. */
function seeded(seed = 1): () => number {
  let s = seed;
  return () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646;
}

interface Harness {
  sched: Scheduler;
  clock: FakeClock;
  /** Pod name → node, as bound through the API. */
  bound: Map<string, string>;
  events: SchedulerEvent[];
  statuses: Array<{ pod: string; condition: PodCondition; nominated?: string }>;
  preemptions: Array<{ pod: string; node: string; victims: string[] }>;
  /** Runs scheduling cycles while activeQ has pods, then waits for bindings. */
  drain(): Promise<void>;
  /** Binding fails for these pod names. */
  failBinds: Set<string>;
}

/**
 * A scheduler whose API side is simulated in memory: a successful bind is observed back as
 * a pod update (as the informer would deliver it).
 */
function harness(nodes: Node[], opts: Partial<SchedulerOptions> = {}): Harness {
  const clock = new FakeClock();
  const bound = new Map<string, string>();
  const events: SchedulerEvent[] = [];
  const statuses: Harness['statuses'] = [];
  const preemptions: Harness['preemptions'] = [];
  const failBinds = new Set<string>();
  const sched: Scheduler = new Scheduler({
    clock,
    random: seeded(),
    bind: async (pod, node) => {
      if (failBinds.has(pod.metadata.name!)) throw new Error('binding rejected: conflict');
      bound.set(pod.metadata.name!, node);
      const unbound = { ...pod, spec: { ...pod.spec, nodeName: undefined } };
      sched.onPodUpdate(unbound, { ...pod, spec: { ...pod.spec, nodeName: node } });
    },
    recordEvent: (e) => events.push(e),
    updatePodStatus: async (pod, condition, nominated) => {
      statuses.push({ pod: pod.metadata.name!, condition, nominated });
    },
    preempt: async (pod, node, victims) => {
      preemptions.push({ pod: pod.metadata.name!, node, victims: victims.map((v) => v.metadata.name!) });
    },
    ...opts,
  });
  for (const n of nodes) sched.onNodeAdd(n);
  const drain = async (): Promise<void> => {
    while (sched.queue.pendingPods().active > 0) await sched.scheduleOne();
    await sched.waitForBindings();
  };
  return { sched, clock, bound, events, statuses, preemptions, drain, failBinds };
}

const failures = (h: Harness): string[] => h.events.filter((e) => e.reason === 'FailedScheduling').map((e) => `${e.pod.metadata.name}: ${e.message}`);

describe('numFeasibleNodesToFind', () => {
  it.each([
    { name: 'small clusters: all nodes', pct: 0, nodes: 99, want: 99 },
    { name: 'adaptive at 100 nodes (49%) but at least 100', pct: 0, nodes: 100, want: 100 },
    { name: 'adaptive at 1000 nodes: 42%', pct: 0, nodes: 1000, want: 420 },
    { name: 'adaptive at 5000 nodes: 10%', pct: 0, nodes: 5000, want: 500 },
    { name: 'adaptive floor 5%', pct: 0, nodes: 10000, want: 500 },
    { name: 'configured percentage', pct: 30, nodes: 1000, want: 300 },
    { name: 'configured percentage never below 100 nodes', pct: 1, nodes: 1000, want: 100 },
    { name: '100% means every node', pct: 100, nodes: 5000, want: 5000 },
  ])('$name', ({ pct, nodes, want }) => {
    expect(numFeasibleNodesToFind(pct, nodes)).toBe(want);
  });
});

describe('Scheduler', () => {
  const cpuNodes = (n: number, cpu = '4'): Node[] => Array.from({ length: n }, (_, i) => makeNode(`n${i + 1}`, { allocatable: { cpu, memory: '8Gi', pods: '110' } }));

  it.each<{ name: string; nodes: Node[]; pods: Pod[]; opts?: Partial<SchedulerOptions>; want: Record<string, string>; wantFailures?: string[] }>([
    {
      name: 'pods spread over nodes by LeastAllocated',
      nodes: cpuNodes(2),
      pods: [1, 2, 3, 4].map((i) => makePod(`p${i}`, { requests: { cpu: '1' } })),
      want: { p1: 'n2', p2: 'n1', p3: 'n2', p4: 'n1' },
    },
    {
      name: 'a pod that fits nowhere waits and is reported',
      nodes: cpuNodes(2, '2'),
      pods: [makePod('big', { requests: { cpu: '3' } })],
      want: {},
      wantFailures: ['big: 0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..'],
    },
    {
      name: 'nodeSelector and taints',
      nodes: [makeNode('tainted', { labels: { disk: 'ssd' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }), makeNode('plain', { labels: { disk: 'ssd' } }), makeNode('hdd')],
      pods: [makePod('db', { spec: { nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } }), makePod('web', { spec: { nodeSelector: { disk: 'ssd' } } })],
      want: { db: 'plain', web: 'plain' },
    },
    {
      name: 'spec.nodeName-less pod of another scheduler is ignored',
      nodes: cpuNodes(1),
      pods: [makePod('mine'), makePod('theirs', { spec: { schedulerName: 'other' } })],
      want: { mine: 'n1' },
    },
    {
      name: 'namespace node selector restricts placement',
      nodes: [makeNode('prod', { labels: { env: 'prod' } }), makeNode('dev', { labels: { env: 'dev' } })],
      pods: [makePod('a', { namespace: 'team-prod' }), makePod('b', { namespace: 'team-prod' })],
      opts: { namespaceNodeSelector: (ns) => (ns === 'team-prod' ? 'env=prod' : undefined) },
      want: { a: 'prod', b: 'prod' },
    },
    {
      name: 'priority from PriorityClass orders the queue',
      nodes: cpuNodes(1, '1'),
      pods: [makePod('low', { requests: { cpu: '1' } }), makePod('high', { requests: { cpu: '1' }, spec: { priorityClassName: 'critical' } })],
      opts: {
        priorities: (() => {
          const r = new PriorityResolver();
          r.set({ metadata: { name: 'critical' }, value: 1000 });
          return r;
        })(),
      },
      want: { high: 'n1' },
    },
  ])('$name', async ({ nodes, pods, opts, want, wantFailures }) => {
    const h = harness(nodes, opts);
    for (const p of pods) h.sched.onPodAdd(p);
    await h.drain();
    expect(Object.fromEntries(h.bound)).toEqual(want);
    if (wantFailures) expect(failures(h)).toEqual(wantFailures);
  });

  it('retries an unschedulable pod when a node is added', async () => {
    const h = harness(cpuNodes(1, '1'));
    h.sched.onPodAdd(makePod('p', { requests: { cpu: '2' } }));
    await h.drain();
    expect(h.sched.queue.where('uid-default-p')).toBe('unschedulable');
    expect(h.statuses[0]).toMatchObject({ pod: 'p', condition: { type: 'PodScheduled', status: 'False', reason: 'Unschedulable' } });
    h.clock.step(10_000);
    h.sched.onNodeAdd(makeNode('big', { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } }));
    await h.drain();
    expect(h.bound.get('p')).toBe('big');
    expect(h.events.at(-1)).toMatchObject({ reason: 'Scheduled', message: 'Successfully assigned default/p to big' });
  });

  it('assumes the pod before binding and forgets it when binding fails', async () => {
    const h = harness(cpuNodes(1, '1'));
    h.failBinds.add('a');
    h.sched.onPodAdd(makePod('a', { requests: { cpu: '1' } }));
    await h.sched.scheduleOne();
    // Assumed: the next pod already sees the node as full.
    expect(h.sched.cache.isAssumedPod(makePod('a'))).toBe(true);
    await h.sched.waitForBindings();
    expect(h.sched.cache.isAssumedPod(makePod('a'))).toBe(false);
    expect(h.sched.queue.where('uid-default-a')).toBe('backoff');
    expect(h.statuses.at(-1)?.condition).toMatchObject({ reason: 'SchedulerError', message: 'running Bind plugin "DefaultBinder": binding rejected: conflict' });
    h.failBinds.clear();
    h.clock.step(1000);
    h.sched.queue.flushBackoffQCompleted();
    await h.drain();
    expect(h.bound.get('a')).toBe('n1');
  });

  it('retries pods when the namespace node selector changes', async () => {
    const selectors = new Map([['team', 'env=prod']]);
    const h = harness([makeNode('dev', { labels: { env: 'dev' } })], { namespaceNodeSelector: (ns) => selectors.get(ns) });
    h.sched.onPodAdd(makePod('p', { namespace: 'team' }));
    await h.drain();
    expect(h.sched.queue.where('uid-team-p')).toBe('unschedulable');
    h.sched.onNamespaceChange({ a: '1' }, { a: '1' });
    expect(h.sched.queue.where('uid-team-p')).toBe('unschedulable');
    selectors.set('team', 'env=dev');
    h.clock.step(10_000);
    h.sched.onNamespaceChange({ a: '1' }, { a: '1' }, true);
    await h.drain();
    expect(h.bound.get('p')).toBe('dev');
  });

  it('drops a pod deleted while its binding failed', async () => {
    const h = harness(cpuNodes(1));
    h.failBinds.add('a');
    h.sched.onPodAdd(makePod('a'));
    await h.sched.scheduleOne();
    h.sched.onPodDelete(makePod('a'));
    await h.sched.waitForBindings();
    expect(h.sched.queue.where('uid-default-a')).toBeUndefined();
    expect(h.sched.cache.podCount()).toBe(0);
    expect(h.statuses).toEqual([]);
  });

  it('assumed pods take resources so concurrent cycles do not overcommit', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const bound: string[] = [];
    const slow = harness(cpuNodes(1, '1'), {
      bind: async (pod) => {
        await gate;
        bound.push(pod.metadata.name!);
      },
    });
    slow.sched.onPodAdd(makePod('a', { requests: { cpu: '1' } }));
    slow.sched.onPodAdd(makePod('b', { requests: { cpu: '1' } }));
    await slow.sched.scheduleOne();
    await slow.sched.scheduleOne();
    release();
    await slow.sched.waitForBindings();
    expect(bound).toEqual(['a']);
    expect(failures(slow)[0]).toMatch(/^b: 0\/1 nodes are available: 1 Insufficient cpu\./);
  });

  it('preempts lower-priority pods and schedules on the nominated node after they go', async () => {
    const h = harness(cpuNodes(2, '2'));
    const victims = [makePod('low1', { nodeName: 'n1', requests: { cpu: '2' }, priority: 1 }), makePod('low2', { nodeName: 'n2', requests: { cpu: '1' }, priority: 5 }), makePod('mid', { nodeName: 'n2', requests: { cpu: '1' }, priority: 5 })];
    for (const v of victims) h.sched.onPodAdd(v);
    h.sched.onPodAdd(makePod('vip', { requests: { cpu: '2' }, priority: 100 }));
    await h.drain();
    // n1 has one victim of priority 1; n2 two of priority 5: n1 is the cheaper candidate.
    expect(h.preemptions).toEqual([{ pod: 'vip', node: 'n1', victims: ['low1'] }]);
    expect(h.statuses.at(-1)).toMatchObject({ pod: 'vip', nominated: 'n1' });
    expect(h.sched.queue.nominator.nominatedPodsForNode('n1').map((p) => p.name)).toEqual(['vip']);
    expect(h.events.filter((e) => e.reason === 'Preempted').map((e) => e.pod.metadata.name)).toEqual(['low1']);
    // The caller deletes the victim; the deletion requeues the pod.
    h.sched.onPodDelete(victims[0]);
    h.clock.step(10_000);
    h.sched.queue.flushBackoffQCompleted();
    await h.drain();
    expect(h.bound.get('vip')).toBe('n1');
  });

  it('does not preempt with preemptionPolicy Never', async () => {
    const h = harness(cpuNodes(1, '1'));
    h.sched.onPodAdd(makePod('low', { nodeName: 'n1', requests: { cpu: '1' }, priority: 1 }));
    h.sched.onPodAdd(makePod('vip', { requests: { cpu: '1' }, priority: 100, spec: { preemptionPolicy: 'Never' } }));
    await h.drain();
    expect(h.preemptions).toEqual([]);
    expect(failures(h)).toEqual(['vip: 0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..']);
  });

  it('nominated pods keep their space from lower-priority pods', async () => {
    const h = harness(cpuNodes(1, '2'));
    h.sched.onPodAdd(makePod('vip', { requests: { cpu: '2' }, priority: 100, nominatedNodeName: 'n1' }));
    h.sched.onPodAdd(makePod('low', { nodeName: 'n1', requests: { cpu: '2' }, priority: 1, deletionTimestamp: '2024-01-01T00:00:00Z' }));
    await h.drain();
    expect(h.preemptions).toEqual([]);
    expect(failures(h)[0]).toContain('preemption: not eligible due to a terminating pod on the nominated node.');
    h.sched.onPodDelete(makePod('low', { nodeName: 'n1' }));
    h.sched.onPodAdd(makePod('other', { requests: { cpu: '1' }, priority: 1 }));
    await h.sched.scheduleOne();
    await h.sched.waitForBindings();
    // 'other' (priority 1) must not take the space nominated to 'vip'.
    expect(h.bound.get('other')).toBeUndefined();
  });

  it('schedules with profiles from the configuration', async () => {
    const config: SchedulerConfiguration = {
      ...defaultSchedulerConfiguration(),
      profiles: [
        { schedulerName: 'default-scheduler' },
        {
          schedulerName: 'bin-packer',
          plugins: { score: { disabled: [{ name: '*' }], enabled: [{ name: 'NodeResourcesFit' }] } },
          pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }],
        },
      ],
    };
    const h = harness(cpuNodes(2), { config });
    for (const i of [1, 2, 3]) h.sched.onPodAdd(makePod(`p${i}`, { requests: { cpu: '1' }, spec: { schedulerName: 'bin-packer' } }));
    await h.drain();
    expect(new Set(h.bound.values()).size).toBe(1);
  });

  it('exports metrics', async () => {
    const registry = new PromRegistry();
    const h = harness(cpuNodes(1, '1'), { metrics: new SchedulerMetrics(registry) });
    // 'b' (popped first) never fits; it fails before 'a' is bound, so it waits in unschedulablePods.
    h.sched.onPodAdd(makePod('a', { requests: { cpu: '1' } }));
    h.sched.onPodAdd(makePod('b', { requests: { cpu: '5' }, priority: 10 }));
    await h.drain();
    const text = await registry.metrics();
    expect(text).toContain('scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 1');
    expect(text).toContain('scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"} 1');
    expect(text).toContain('scheduler_pending_pods{queue="unschedulable"} 1');
    expect(text).toContain('scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"} 2');
  });

  it('run() and stop() drive the loop', async () => {
    const h = harness(cpuNodes(1));
    h.sched.run();
    h.sched.onPodAdd(makePod('p'));
    for (let i = 0; i < 100 && !h.bound.size; i++) await new Promise((r) => setImmediate(r));
    await h.sched.stop();
    expect(h.bound.get('p')).toBe('n1');
  });

  // Throughput is measured by `npm run bench -- --only=scheduler`, not here.
  it('spreads 2,000 pods over 500 nodes by zone', async () => {
    const zones = 10;
    const nodes = Array.from({ length: 500 }, (_, i) => makeNode(`n${i}`, { labels: { [LABEL_ZONE]: `z${i % zones}` }, allocatable: { cpu: '32', memory: '64Gi', pods: '110' } }));
    const h = harness(nodes);
    const spread = [{ maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } }];
    for (let i = 0; i < 2000; i++) h.sched.onPodAdd(makePod(`p${i}`, { labels: { app: 'web' }, requests: { cpu: '100m', memory: '128Mi' }, spec: { topologySpreadConstraints: spread } }));
    await h.drain();
    expect(h.bound.size).toBe(2000);
    const perZone = new Map<string, number>();
    for (const node of h.bound.values()) {
      const z = `z${Number(node.slice(1)) % zones}`;
      perZone.set(z, (perZone.get(z) ?? 0) + 1);
    }
    expect(Math.max(...perZone.values()) - Math.min(...perZone.values())).toBeLessThanOrEqual(1);
  }, 60_000);
});
