import { LABEL_HOSTNAME, LABEL_ZONE, type Pod } from './api';
import { Scheduler } from './scheduler';
import { makeNode, makePod } from './testing';

// Opt-in throughput check at the scale of upstream's scheduler_perf CI (5,000 nodes, 10,000
// pods to schedule next to 5,000 running ones): SCHEDULER_PERF=1 npx jest -c apps/scheduler/jest.config.js scheduler.perf
// The floors are upstream's CI thresholds; binding is in-memory, so this measures the algorithm.
const enabled = !!process.env.SCHEDULER_PERF;

async function podsPerSecond(make: (i: number) => Pod, nodes = 5000, pods = 10000): Promise<number> {
  const sched: Scheduler = new Scheduler({
    bind: async (pod, node) => sched.onPodUpdate(pod, { ...pod, spec: { ...pod.spec, nodeName: node } }),
  });
  for (let i = 0; i < nodes; i++) {
    sched.onNodeAdd(makeNode(`n${i}`, { labels: { [LABEL_ZONE]: `z${i % 10}` }, allocatable: { cpu: '32', memory: '64Gi', pods: '110' } }));
  }
  for (let i = 0; i < 5000; i++) sched.onPodAdd(makePod(`e${i}`, { nodeName: `n${i % nodes}`, labels: { app: 'existing' }, requests: { cpu: '100m' } }));
  for (let i = 0; i < pods; i++) sched.onPodAdd(make(i));
  const start = Date.now();
  while (sched.queue.pendingPods().active > 0) await sched.scheduleOne();
  await sched.waitForBindings();
  expect(sched.cache.podCount()).toBe(5000 + pods);
  return pods / ((Date.now() - start) / 1000);
}

(enabled ? describe : describe.skip)('scheduler throughput (5,000 nodes, 10,000 pods)', () => {
  it.each<{ name: string; floor: number; make: (i: number) => Pod }>([
    { name: 'basic', floor: 270, make: (i) => makePod(`p${i}`, { requests: { cpu: '100m', memory: '100Mi' } }) },
    {
      name: 'required topology spreading',
      floor: 85,
      make: (i) =>
        makePod(`p${i}`, {
          labels: { app: 'web' },
          requests: { cpu: '100m' },
          spec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } }] },
        }),
    },
    {
      name: 'required pod anti-affinity',
      floor: 60,
      make: (i) =>
        makePod(`p${i}`, {
          labels: { color: `c${i % 1000}` },
          requests: { cpu: '100m' },
          spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { color: `c${i % 1000}` } }, topologyKey: LABEL_HOSTNAME }] } } },
        }),
    },
  ])('$name: at least $floor pods/s', async ({ make, floor }) => {
    const rate = await podsPerSecond(make);
    process.stdout.write(`scheduler throughput: ${rate.toFixed(0)} pods/s\n`);
    expect(rate).toBeGreaterThanOrEqual(floor);
  }, 600_000);
});
