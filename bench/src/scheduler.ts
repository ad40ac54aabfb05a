import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@orch/testing';
import { appMain, startBenchGateway } from './gateway-process';
import { call, createDefaultServiceAccounts, runLoad, target, type HttpsTarget } from './load';
import type { Row } from './report';


/** Upstream scheduler_perf CI floors (pods/s) for the same scenarios. */
export const UPSTREAM_FLOORS = { basic: 270, spread: 85, antiAffinity: 60 } as const;

export interface SchedulerBenchOptions {
  nodes?: number;
  pods?: number;
  deploymentReplicas?: number;
}

interface Cluster {
  dir: string;
  gw: HttpsTarget;
  children: ChildProcess[];
  stop(): Promise<void>;
}

/** A gateway (SQLite) plus the given components, each a real process. */
async function startCluster(components: { app: string; args: string[] }[]): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-sched-'));
  const gateway = await startBenchGateway(join(dir, 'gw'));
  const children: ChildProcess[] = [gateway.process];
  for (const c of components) {
    children.push(spawn(process.execPath, [appMain(c.app), `--kubeconfig=${gateway.kubeconfig}`, `--secure-port=${await freePort()}`, '--leader-elect=false', ...c.args], { stdio: 'ignore' }));
  }
  return {
    dir,
    gw: target(gateway.url, gateway.creds, 64),
    children,
    async stop() {
      for (const c of children) c.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const node = (i: number) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `node-${i}`, labels: { 'orch.io/hostname': `node-${i}`, 'topology.orch.io/zone': `zone-${i % 10}` } },
    spec: {},
    status: {
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });

type Scenario = keyof typeof UPSTREAM_FLOORS;

function pod(i: number, scenario: Scenario): string {
  const labels = { app: 'bench', color: `c${i % 100}` };
  const spec: Record<string, unknown> = { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] };
  if (scenario === 'spread') {
    spec.topologySpreadConstraints = [{ maxSkew: 5, topologyKey: 'topology.orch.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'bench' } } }];
  } else if (scenario === 'antiAffinity') {
    spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'orch.io/hostname', labelSelector: { matchLabels: { color: labels.color } } }] } };
  }
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: 'bench', labels }, spec });
}

/**
 * Counts pods bound (spec.nodeName set) as they are watched; resolves with the times of the
 * first and the n-th binding.
 */
function watchBindings(t: HttpsTarget, n: number, timeoutMs: number): { done: Promise<{ first: number; last: number; bound: number }>; stop(): void } {
  let req: ReturnType<typeof https.get> | undefined;
  const seen = new Set<string>();
  let first = 0;
  let last = 0;
  const done = new Promise<{ first: number; last: number; bound: number }>((resolve) => {
    const timer = setTimeout(() => resolve({ first, last, bound: seen.size }), timeoutMs);
    req = https.get(`${t.base}/api/v1/namespaces/bench/pods?watch=1`, { agent: new https.Agent({ ...(t.agent.options as https.AgentOptions), keepAlive: false }) }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const ev = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          const p = ev.object;
          if (p?.spec?.nodeName && !seen.has(p.metadata.name)) {
            seen.add(p.metadata.name);
            const now = performance.now();
            if (seen.size === 1) first = now;
            last = now;
            if (seen.size >= n) {
              clearTimeout(timer);
              resolve({ first, last, bound: seen.size });
            }
          }
        }
      });
    });
  });
  return { done, stop: () => req?.destroy() };
}

async function scenarioRun(scenario: Scenario, nodes: number, pods: number): Promise<{ podsPerSecond: number; bound: number }> {
  const cluster = await startCluster([{ app: 'scheduler', args: [] }]);
  try {
    await runLoad(64, 600_000, async (i) => (await call(cluster.gw, 'POST', '/api/v1/nodes', node(i))).status === 201, nodes);
    await call(cluster.gw, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }));
    await createDefaultServiceAccounts(cluster.gw, ['bench']);
    await new Promise((r) => setTimeout(r, 2000)); // scheduler caches sync
    const watch = watchBindings(cluster.gw, pods, 600_000);
    await runLoad(64, 600_000, async (i) => (await call(cluster.gw, 'POST', '/api/v1/namespaces/bench/pods', pod(i, scenario))).status === 201, pods);
    const { first, last, bound } = await watch.done;
    watch.stop();
    return { podsPerSecond: bound > 1 ? ((bound - 1) * 1000) / (last - first) : 0, bound };
  } finally {
    await cluster.stop();
  }
}

/** Time from creating an N-replica Deployment to N pods bound (gateway + controller-manager + scheduler). */
async function deploymentRun(replicas: number, nodes: number): Promise<number> {
  const cluster = await startCluster([
    { app: 'controller-manager', args: ['--controllers=replicaset,deployment'] },
    { app: 'scheduler', args: [] },
  ]);
  try {
    await runLoad(64, 600_000, async (i) => (await call(cluster.gw, 'POST', '/api/v1/nodes', node(i))).status === 201, nodes);
    await call(cluster.gw, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }));
    await createDefaultServiceAccounts(cluster.gw, ['bench']);
    await new Promise((r) => setTimeout(r, 3000));
    const watch = watchBindings(cluster.gw, replicas, 600_000);
    const started = performance.now();
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'big', namespace: 'bench' },
      spec: { replicas, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '10m' } } }] } } },
    };
    const r = await call(cluster.gw, 'POST', '/apis/apps/v1/namespaces/bench/deployments', JSON.stringify(dep));
    if (r.status !== 201) throw new Error(`deployment create: ${r.status} ${r.body}`);
    const { last, bound } = await watch.done;
    watch.stop();
    return bound >= replicas ? (last - started) / 1000 : NaN;
  } finally {
    await cluster.stop();
  }
}

/** Scheduler throughput against a real gateway, beside upstream's scheduler_perf CI floors. */
export async function schedulerBench(opts: SchedulerBenchOptions = {}): Promise<Row[]> {
  const nodes = opts.nodes ?? 5000;
  const pods = opts.pods ?? 10_000;
  const rows: Row[] = [];
  const names: Record<Scenario, string> = { basic: 'basic', spread: 'required topology spreading', antiAffinity: 'required pod anti-affinity' };
  for (const scenario of Object.keys(UPSTREAM_FLOORS) as Scenario[]) {
    const r = await scenarioRun(scenario, nodes, pods);
    rows.push({ metric: `pods/s, ${names[scenario]} (${nodes} nodes, ${pods} pods; ${r.bound} bound)`, orch: r.podsPerSecond, baseline: UPSTREAM_FLOORS[scenario], baselineName: 'upstream scheduler_perf CI floor', unit: 'pods/s', higherIsBetter: true });
  }
  const replicas = opts.deploymentReplicas ?? 1000;
  const seconds = await deploymentRun(replicas, Math.min(nodes, 100));
  rows.push({ metric: `Deployment of ${replicas} → ${replicas} pods bound`, orch: seconds, baseline: replicas / UPSTREAM_FLOORS.basic, baselineName: `${replicas} pods at the basic floor (270 pods/s)`, unit: 's', higherIsBetter: false });
  return rows;
}
