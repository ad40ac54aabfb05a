import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@orch/storage';
import { parseFlags } from '@orch/server-common';
import { freePort } from '@orch/testing';
import { admissionBench } from './admission';
import { authBench } from './auth';
import { codecBench, protobufHttpBench } from './codec';
import { crdBench } from './crd';
import { dashboardBench } from './dashboard';
import { flowControlBench } from './flowcontrol';
import { call, cpuSeconds, percentile, rssMiB, runLoad, target, type HttpsTarget, type LoadResult } from './load';
import { benchProcessPodStartup, benchSandboxPodStartup, benchSimulatedRuntime, benchStreaming } from './node-agent';
import { runProxyBench } from './proxy';
import { startBenchGateway, type BenchGateway } from './gateway-process';
import { watchFanOut } from './gateway-watch';
import { inclusiveShares, inclusiveSummary, monotonicMicros, profileSummary, type ProfileWindow } from './profile';
import { printRows, type Row } from './report';
import { SCALE_PHASES, scaleBench } from './scale';
import { schedulerBench } from './scheduler';
import { watchLoadBench } from './watch-load';
import { WATCH_PROTOCOLS, whyNotServed, type WatchProtocol } from './watch-client';

const FLAGS = {
  duration: { type: 'duration', default: 10_000, description: 'Duration of each throughput phase.' },
  concurrency: { type: 'int', default: 64, description: 'Concurrent clients of the throughput phases.' },
  'list-size': { type: 'int', default: 10_000, description: 'ConfigMaps in the list-latency phase.' },
  watchers: { type: 'int', default: 100, description: 'Watchers in the watch-latency phase.' },
  'fanout-watchers': { type: 'int', default: 1000, description: 'Watchers (held by watcher processes of their own) in the gateway group’s watch fan-out phase.' },
  'watch-protocols': { type: 'stringSlice', default: [...WATCH_PROTOCOLS], description: `How the watcher processes of the gateway group's watch fan-out and the scale benchmark's watch phase hold their watches, one row each: ${WATCH_PROTOCOLS.join(', ')} (h2: one HTTP/2 session per watcher process and gateway, as client-go; a gateway whose ALPN does not pick h2 gets the row "not served"). Measured in the list's order, which moves the figures (in 3 runs of the gateway group, the second fan-out cost the gateway 1.1–1.4x the CPU per event of the first, whichever protocol it was): compare both orders.` },
  'fanout-rounds': { type: 'int', default: 3, description: 'Rounds of 100 events in the watch fan-out phase (its p99 is the median of the rounds’).' },
  'gateway-profile': { type: 'bool', default: false, description: 'CPU-profile the gateway of the gateway group and print its top frames for each phase (creates, gets, patches, list, watch, protobuf); in the admission group, the gateway with the admission chain per phase.' },
  only: { type: 'string', default: '', description: 'Run only this benchmark group: gateway, codec, proxy, node-agent, scheduler, scale, crd, apf, admission, auth, watch-load, dashboard.' },
  'idle-watches': { type: 'int', default: 5000, description: 'Unread watches one client opens in the watch-load benchmark.' },
  'apf-list-size': { type: 'int', default: 1000, description: 'ConfigMaps in each list of the flooding client in the priority-and-fairness benchmark.' },
  'apf-scenarios': { type: 'stringSlice', default: [], description: 'Scenarios of the priority-and-fairness benchmark to run, by number (1: same level, 2: APF off, 3: victim in its own level, 4: same level and the flooder honours Retry-After, 5: own level and Retry-After); all when empty.' },
  'apf-flood-concurrency': { type: 'int', default: 0, description: 'Concurrent lists of the flooding client in the priority-and-fairness benchmark (0: 10x a fair share of the level, 20).' },
  'apf-flood-rate': { type: 'int', default: 0, description: 'Lists the flooding client of the priority-and-fairness benchmark starts per second at most (0: as fast as answered).' },
  'apf-tasks': { type: 'bool', default: false, description: 'Time the macrotasks of the priority-and-fairness benchmark\'s gateway (async_hooks, which slow it) and print, while flooded, the kinds of task and those over 1 ms of CPU.' },
  'apf-profile': { type: 'bool', default: false, description: 'CPU-profile the gateway of the priority-and-fairness benchmark and print its top frames while flooded.' },
  'scale-watchers': { type: 'int', default: 1000, description: 'Watchers spread over three gateways in the scale benchmark.' },
  'scale-events': { type: 'int', default: 1000, description: 'Events per second written in the scale benchmark’s watch phase.' },
  'scale-list-size': { type: 'int', default: 50_000, description: 'Objects listed from the watch cache and from etcd in the scale benchmark.' },
  'rss-objects': { type: 'int', default: 100_000, description: 'Small objects the gateway holds in the scale benchmark’s memory phase.' },
  'scale-phases': { type: 'stringSlice', default: [...SCALE_PHASES], description: `Phases of the scale benchmark to run: ${SCALE_PHASES.join(', ')}.` },
  'scale-watch-clients': { type: 'int', default: 4, description: 'Processes holding the watchers of the scale benchmark (their TLS and parsing stay off the measured gateways and spread over cores).' },
  'scale-profile': { type: 'bool', default: false, description: 'CPU-profile the gateways and watcher processes during the scale benchmark’s watch delivery and print their top frames.' },
  'scale-pump-in-gateway': { type: 'bool', default: true, description: 'Also run the scale benchmark’s watch delivery with the pump inside gateway-0 (false: only with the pump in its own process).' },
  'rbac-bindings': { type: 'int', default: 1000, description: 'RoleBindings (to other users) in place during the auth benchmark.' },
  'auth-profile': { type: 'bool', default: false, description: 'CPU-profile the two gateways of the auth benchmark and print their top frames while each variant’s gets are measured (the bad-credential attacks are left out).' },
  'auth-attacks': { type: 'bool', default: true, description: 'Run the bad-credential attacks of the auth benchmark (--auth-attacks=false: the throughput rows only).' },
  'rbac-roles': { type: 'int', default: 200, description: 'Roles in place during the auth benchmark.' },
  'node-agent-profile': { type: 'bool', default: false, description: 'CPU-profile the gateway and the node agent of the node-agent group during the port-forward downloads and print their top frames.' },
  'sim-nodes': { type: 'int', default: 1000, description: 'Simulated nodes in the node-agent benchmark.' },
  'sim-pods': { type: 'int', default: 30_000, description: 'Pods on simulated nodes in the node-agent benchmark.' },
  'sched-nodes': { type: 'int', default: 5000, description: 'Nodes in the scheduler benchmark.' },
  'sched-pods': { type: 'int', default: 10_000, description: 'Pods per scheduler scenario.' },
  'dashboard-pods': { type: 'int', default: 1000, description: 'Pods the dashboard benchmark lists and paints.' },
  'dashboard-events': { type: 'int', default: 100, description: 'Watch events per second the dashboard benchmark sends to an open pods table.' },
  'dashboard-seconds': { type: 'int', default: 10, description: 'Seconds of each measuring phase of the dashboard benchmark.' },
  dashboards: { type: 'int', default: 10, description: 'Dashboards open at once in the dashboard benchmark’s memory and gateway-load phase.' },
} as const;

const BASELINE_MAIN = join(__dirname, 'baseline-server.js');


async function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}: ${out.slice(-2000)}`)), timeoutMs);
    const on = (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.on('exit', (code) => reject(new Error(`process exited with ${code}: ${out.slice(-2000)}`)));
  });
}

const configMap = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { key: 'value' } });

async function main(): Promise<void> {
  const { values: opts } = parseFlags(FLAGS, process.argv.slice(2));
  const want = (group: string) => !opts.only || opts.only === group;
  if (want('gateway')) {
    const gateway = await gatewayBench(opts);
    printRows('gateway (SQLite)', gateway.rows);
    for (const note of gateway.notes) console.log(`- ${note}`);
  }
  if (want('codec')) printRows('protobuf vs JSON', await codecBench(Math.min(opts.duration, 2000)));
  if (want('proxy')) printRows('network-proxy', await runProxyBench({ durationMs: Math.min(opts.duration, 5000), concurrency: opts.concurrency }));
  if (want('node-agent')) {
    const rows = [
      ...(await benchSimulatedRuntime({ nodes: opts['sim-nodes'], pods: opts['sim-pods'] })),
      ...(await benchProcessPodStartup({ pods: 50 })),
      ...(await benchSandboxPodStartup({ pods: 30 })),
    ];
    const streaming = await benchStreaming({ execs: 100, megabytes: 64, profile: opts['node-agent-profile'] });
    printRows('node-agent', [...rows, ...streaming.rows]);
    for (const note of streaming.notes) console.log(`- ${note}`);
  }
  if (want('scale')) {
    const scale = await scaleBench({
      durationMs: opts.duration,
      concurrency: opts.concurrency,
      watchers: opts['scale-watchers'],
      eventsPerSecond: opts['scale-events'],
      listSize: opts['scale-list-size'],
      rssObjects: opts['rss-objects'],
      phases: new Set(oneOfEach('scale-phases', opts['scale-phases'], SCALE_PHASES)),
      watchProtocols: oneOfEach('watch-protocols', opts['watch-protocols'], WATCH_PROTOCOLS),
      watchClients: opts['scale-watch-clients'],
      profile: opts['scale-profile'],
      pumpInGateway: opts['scale-pump-in-gateway'],
    });
    printRows('scale-out (3 gateways on etcd, NATS, Redis)', scale.rows);
    for (const note of scale.notes) console.log(`- ${note}`);
  }
  if (want('crd')) printRows('custom resources vs ConfigMaps (same gateway, same run)', await crdBench({ durationMs: opts.duration, concurrency: opts.concurrency, listSize: opts['list-size'] }));
  if (want('apf')) {
    const apf = await flowControlBench({ durationMs: opts.duration, listSize: opts['apf-list-size'], profile: opts['apf-profile'], tasks: opts['apf-tasks'], scenarios: opts['apf-scenarios'].map(Number), floodConcurrency: opts['apf-flood-concurrency'], floodListsPerSecond: opts['apf-flood-rate'] });
    printRows('API Priority and Fairness: a client flooding its level at 10x its fair share', apf.rows);
    for (const note of apf.notes) console.log(`- ${note}`);
  }
  if (want('auth')) {
    const auth = await authBench({ durationMs: opts.duration, concurrency: opts.concurrency, bindings: opts['rbac-bindings'], roles: opts['rbac-roles'], profile: opts['auth-profile'], attacks: opts['auth-attacks'] });
    printRows('authentication and authorization (two real gateways)', auth.rows);
    for (const note of auth.notes) console.log(`- ${note}`);
  }
  if (want('watch-load')) printRows('one client holds unread watches; another reads (same gateway, same run)', await watchLoadBench({ watches: opts['idle-watches'], gets: 2000, writesPerSecond: 5, writeSeconds: 20 }));
  if (want('scheduler')) printRows('scheduler (real gateway and scheduler processes)', await schedulerBench({ nodes: opts['sched-nodes'], pods: opts['sched-pods'] }));
  if (want('dashboard')) printRows('dashboard in headless Chromium (real gateway and dashboard processes)', await dashboardBench({ pods: opts['dashboard-pods'], eventsPerSecond: opts['dashboard-events'], seconds: opts['dashboard-seconds'], dashboards: opts.dashboards }));
  if (want('admission')) {
    const admission = await admissionBench({ durationMs: Math.min(opts.duration, 5000), concurrency: opts.concurrency, profile: opts['gateway-profile'] });
    printRows('admission (creates through the admission chain)', admission.rows);
    for (const note of admission.notes) console.log(`- ${note}`);
  }
}

/** The entries of the list flag `--<flag>`, each checked to be one of `allowed`. */
function oneOfEach<T extends string>(flag: string, names: string[], allowed: readonly T[]): T[] {
  for (const n of names) if (!(allowed as readonly string[]).includes(n)) throw new Error(`unknown --${flag} entry ${JSON.stringify(n)}: must be among ${allowed.join(', ')}`);
  return names as T[];
}

type BenchOptions = ReturnType<typeof parseFlags<typeof FLAGS>>['values'];

/** The parts of a create the --gateway-profile notes name (frames as `<function> <url>`). */
const CREATE_PARTS: Record<string, RegExp> = {
  'GenericStore.create': /^create \S*registry\/generic-store\.js$/,
  'managed fields (trackUpdate)': /^trackUpdate /,
  'admission chain (hooks run)': /^run \S*pipeline\/admit\.js$/,
  'body schema check (validateFields)': /^validateFields /,
  'decode stage': /^decodeStage /,
  'authentication stage': /^authenticate \S*pipeline\/authenticate\.js$/,
  'encode stage': /^stage \S*pipeline\/encode\.js$/,
  'stored bytes (StoredObjects.encode)': /^encode \S*registry\/stored-objects\.js$/,
};

/** What the phases of {@link gatewayBench} share: the gateway under test, the bare baseline beside it, and the rows and notes so far. */
interface GatewayRun {
  opts: BenchOptions;
  dir: string;
  gateway: BenchGateway;
  /** The gateway's client side: its URL with the admin credentials. */
  orch: HttpsTarget;
  /** Bare Fastify HTTPS with the same TLS material (the baseline of creates and gets). */
  base: ChildProcess;
  bare: HttpsTarget;
  rows: Row[];
  notes: string[];
  /** Starts another bare baseline answering `listFile` (a list body) to its lists. */
  startBaseline: (listSize: number, listFile?: string) => Promise<{ process: ChildProcess; target: HttpsTarget }>;
  /** Runs `run` as a named phase (its window in the --gateway-profile notes). */
  phase: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** The phases run so far, with their windows. */
  phases: { name: string; window: ProfileWindow }[];
  profDir: string;
}

/** CPU time of the server process per request: steadier than requests/s on a shared machine. */
async function cpuPerOp(pid: number | undefined, run: () => Promise<LoadResult>): Promise<{ load: LoadResult; cpuUs: number }> {
  const before = cpuSeconds(pid ?? -1);
  const load = await run();
  return { load, cpuUs: ((cpuSeconds(pid ?? -1) - before) * 1e6) / Math.max(1, load.ops) };
}

async function gatewayBench(opts: BenchOptions): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-'));
  const children: ChildProcess[] = [];
  try {
    const run = await startGatewayRun(opts, dir, children);
    const created = await benchCreatesAndGets(run);
    await benchPatches(run, Math.max(1, created.ops));
    await benchLists(run);
    await benchWatches(run);
    await benchProtobufAndMemory(run);
    return { rows: run.rows, notes: run.notes };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

/** The gateway process (SQLite) with its credentials and a `bench` namespace, and the bare Fastify HTTPS baseline; every process goes to `children`. */
async function startGatewayRun(opts: BenchOptions, dir: string, children: ChildProcess[]): Promise<GatewayRun> {
  // With --gateway-profile: the gateway runs under --cpu-prof, each phase notes its window.
  const profDir = join(dir, 'prof');
  const phases: { name: string; window: ProfileWindow }[] = [];
  const phase = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const from = monotonicMicros();
    const result = await run();
    phases.push({ name, window: { from, to: monotonicMicros() } });
    return result;
  };
  const gateway = await startBenchGateway(join(dir, 'gw'), [], opts['gateway-profile'] ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  children.push(gateway.process);
  const { creds, pkiDir: pki } = gateway;
  const orch = target(gateway.url, creds, opts.concurrency);
  const ns = await call(orch, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }));
  if (ns.status !== 201) throw new Error(`namespace create failed: ${ns.status} ${ns.body}`);

  // --- baseline: bare Fastify HTTPS with the same TLS material
  const startBaseline = async (listSize: number, listFile?: string) => {
    const port = await freePort();
    const child = spawn(process.execPath, [BASELINE_MAIN, String(port), join(pki, 'serving.crt'), join(pki, 'serving.key'), join(pki, 'ca.crt'), String(listSize), ...(listFile ? [listFile] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    await waitForLine(child, /ready/, 30_000);
    return { process: child, target: target(`https://127.0.0.1:${port}`, creds, opts.concurrency) };
  };
  const { process: base, target: bare } = await startBaseline(opts['list-size']);
  return { opts, dir, gateway, orch, base, bare, rows: [], notes: [], startBaseline, phase, phases, profDir };
}

/** 1. creates/s over HTTPS (against the bare baseline and the raw store), 2. gets/s; returns the creates' load (their objects are read after). */
/**
 * Requests of each kind sent to both servers before creates and gets are measured: more than the
 * ~1,500 a fresh process spends compiling the code a request path brings (measured: a cold
 * gateway's first creates cost 2-4x the CPU of warm ones), so both sides are compared warm.
 */
const WARM_UP_REQUESTS = 3000;

async function benchCreatesAndGets({ opts, dir, gateway, orch, base, bare, rows, phase }: GatewayRun): Promise<LoadResult> {
  const gw = gateway.process;
  for (const server of [orch, bare]) {
    await runLoad(opts.concurrency, 600_000, async (i) => (await call(server, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`warm-${i}`))).status === 201, WARM_UP_REQUESTS);
    await runLoad(opts.concurrency, 600_000, async (i) => (await call(server, 'GET', `/api/v1/namespaces/bench/configmaps/warm-${i % WARM_UP_REQUESTS}`)).status === 200, WARM_UP_REQUESTS);
  }
  // 1. creates/s over HTTPS, 64 clients
  const { load: created, cpuUs: createCpu } = await cpuPerOp(gw.pid, () => phase('creates', () => runLoad(opts.concurrency, opts.duration, async (i) => (await call(orch, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`c-${i}`))).status === 201)));
  const { load: bareCreated, cpuUs: bareCreateCpu } = await cpuPerOp(base.pid, () => runLoad(opts.concurrency, opts.duration, async (i) => (await call(bare, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`c-${i}`))).status === 201));
  rows.push({ metric: `creates/s (HTTPS, ${opts.concurrency} clients)`, orch: created.opsPerSecond, baseline: bareCreated.opsPerSecond, baselineName: 'bare Fastify HTTPS', unit: '/s', higherIsBetter: true });
  rows.push({ metric: 'create p99 latency', orch: created.p99Ms, baseline: bareCreated.p99Ms, baselineName: 'bare Fastify HTTPS', unit: 'ms', higherIsBetter: false });
  rows.push({ metric: 'server CPU per create', orch: createCpu, baseline: bareCreateCpu, baselineName: 'bare Fastify HTTPS', unit: 'µs', higherIsBetter: false });

  // 1b. the store alone with the same durability: raw SQLite creates, 64 concurrent writers
  const raw = await openSqliteStore(join(dir, 'raw.db'));
  const rawCreated = await runLoad(opts.concurrency, opts.duration, async (i) => {
    await raw.create(`/registry/core/configmaps/bench/c-${i}`, configMap(`c-${i}`));
    return true;
  });
  await raw.close();
  rows.push({ metric: `creates/s vs raw store writes`, orch: created.opsPerSecond, baseline: rawCreated.opsPerSecond, baselineName: 'SqliteStore.create, same durability', unit: '/s', higherIsBetter: true });

  // 2. gets/s
  const n = Math.max(1, created.ops);
  const { load: gets, cpuUs: getCpu } = await cpuPerOp(gw.pid, () => phase('gets', () => runLoad(opts.concurrency, opts.duration, async (i) => (await call(orch, 'GET', `/api/v1/namespaces/bench/configmaps/c-${i % n}`)).status === 200)));
  const { load: bareGets, cpuUs: bareGetCpu } = await cpuPerOp(base.pid, () => runLoad(opts.concurrency, opts.duration, async (i) => (await call(bare, 'GET', `/api/v1/namespaces/bench/configmaps/c-${i % n}`)).status === 200));
  rows.push({ metric: `gets/s (HTTPS, ${opts.concurrency} clients)`, orch: gets.opsPerSecond, baseline: bareGets.opsPerSecond, baselineName: 'bare Fastify HTTPS', unit: '/s', higherIsBetter: true });
  rows.push({ metric: 'get p99 latency', orch: gets.p99Ms, baseline: bareGets.p99Ms, baselineName: 'bare Fastify HTTPS', unit: 'ms', higherIsBetter: false });
  rows.push({ metric: 'server CPU per get', orch: getCpu, baseline: bareGetCpu, baselineName: 'bare Fastify HTTPS', unit: 'µs', higherIsBetter: false });
  return created;
}

/** 2b. server-side apply patches/s beside merge patches/s, both changing data.key of the same `n` objects. */
async function benchPatches({ opts, orch, rows, phase }: GatewayRun, n: number): Promise<void> {
  const cmPath = (i: number) => `/api/v1/namespaces/bench/configmaps/c-${i % n}`;
  const merges = await phase('merge patches', () => runLoad(opts.concurrency, opts.duration, async (i) => {
    const r = await call(orch, 'PATCH', `${cmPath(i)}?fieldManager=bench-merge`, JSON.stringify({ data: { key: `m-${i}` } }), 'application/merge-patch+json');
    return r.status === 200;
  }));
  const applies = await phase('apply patches', () => runLoad(opts.concurrency, opts.duration, async (i) => {
    const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i % n}`, namespace: 'bench' }, data: { key: `a-${i}` } };
    const r = await call(orch, 'PATCH', `${cmPath(i)}?fieldManager=bench-apply&force=true`, JSON.stringify(config), 'application/apply-patch+yaml');
    return r.status === 200;
  }));
  rows.push({ metric: `apply patches/s (server-side apply, ${opts.concurrency} clients)`, orch: applies.opsPerSecond, baseline: merges.opsPerSecond, baselineName: 'merge patches/s, same objects', unit: '/s', higherIsBetter: true });
  rows.push({ metric: 'apply patch p99 latency', orch: applies.p99Ms, baseline: merges.p99Ms, baselineName: 'merge patch p99, same objects', unit: 'ms', higherIsBetter: false });
}

/** 3. list latency of N ConfigMaps (a namespace filled with exactly N), against a bare server answering the same JSON. */
async function benchLists({ opts, dir, orch, rows, phase, startBaseline }: GatewayRun): Promise<void> {
  await call(orch, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lists' } }));
  await runLoad(opts.concurrency, 600_000, async (i) => (await call(orch, 'POST', '/api/v1/namespaces/lists/configmaps', configMap(`l-${i}`).replace('"bench"', '"lists"'))).status === 201, opts['list-size']);
  const listLat = await phase('lists', () => runLoad(1, opts.duration, async () => (await call(orch, 'GET', '/api/v1/namespaces/lists/configmaps')).status === 200, 50));
  // The bare server answers the very objects the gateway listed (managedFields and all: twice the
  // bytes of the gets' small objects), serialized per request like any body.
  const listFile = join(dir, 'list.json');
  await writeFile(listFile, (await call(orch, 'GET', '/api/v1/namespaces/lists/configmaps')).body);
  const sameList = await startBaseline(opts['list-size'], listFile);
  const bareListLat = await runLoad(1, opts.duration, async () => (await call(sameList.target, 'GET', '/api/v1/namespaces/bench/configmaps')).status === 200, 50);
  sameList.target.agent.destroy();
  sameList.process.kill('SIGKILL');
  rows.push({ metric: `list ${opts['list-size']} ConfigMaps p50`, orch: listLat.p50Ms, baseline: bareListLat.p50Ms, baselineName: 'bare Fastify, same JSON', unit: 'ms', higherIsBetter: false });
  rows.push({ metric: `list ${opts['list-size']} ConfigMaps p99`, orch: listLat.p99Ms, baseline: bareListLat.p99Ms, baselineName: 'bare Fastify, same JSON', unit: 'ms', higherIsBetter: false });
}

/** 4. watch delivery latency to W watchers (create → event at each watcher), 4b. the fan-out to many watchers in processes of their own. */
async function benchWatches({ opts, dir, gateway, orch, rows, notes, phase }: GatewayRun): Promise<void> {
  const watch = await phase('watch', () => watchLatency(orch, opts.watchers, 200));
  const rawWatch = await rawWatchLatency(join(dir, 'rawwatch.db'), opts.watchers, 200);
  rows.push({ metric: `watch delivery p50 (${opts.watchers} watchers)`, orch: watch.p50, baseline: rawWatch.p50, baselineName: 'store change feed, in-process', unit: 'ms', higherIsBetter: false });
  rows.push({ metric: `watch delivery p99 (${opts.watchers} watchers)`, orch: watch.p99, baseline: rawWatch.p99, baselineName: 'store change feed, in-process', unit: 'ms', higherIsBetter: false });

  // 4b. watch fan-out to many watchers held by processes of their own (issue 16: p99 ≤ 50 ms for 1,000), once per
  // --watch-protocols entry: HTTP/1.1 (a connection per watch) and h2 (one session per watcher process, as client-go)
  const fanOutRows: Record<WatchProtocol, string> = {
    'http/1.1': `watch delivery p99 (${opts['fanout-watchers']} watchers in 2 processes, median of ${opts['fanout-rounds']} rounds, goal ≤ 50 ms)`,
    h2: `watch delivery p99 over HTTP/2 (${opts['fanout-watchers']} watchers in 2 processes, one h2 session per process as client-go, median of ${opts['fanout-rounds']} rounds, goal ≤ 50 ms)`,
  };
  const fanOutCpu: Partial<Record<WatchProtocol, number>> = {};
  let rawFanOut: { p50: number; p99: number } | undefined;
  for (const protocol of oneOfEach('watch-protocols', opts['watch-protocols'], WATCH_PROTOCOLS)) {
    const notServed = await whyNotServed(gateway.url, gateway.creds, protocol);
    const fanOut = notServed ? undefined : await phase(protocol === 'h2' ? 'watch fan-out over h2' : 'watch fan-out', () => watchFanOut(orch, { ...gateway, pid: gateway.process.pid! }, { namespace: `fanout${protocol === 'h2' ? '-h2' : ''}`, watchers: opts['fanout-watchers'], events: 100, rounds: opts['fanout-rounds'], gapMs: 50, clients: 2, protocol }));
    rawFanOut ??= await rawWatchLatency(join(dir, 'rawfanout.db'), opts['fanout-watchers'], 100);
    rows.push({ metric: fanOutRows[protocol], orch: fanOut?.p99 ?? NaN, baseline: rawFanOut.p99, baselineName: `store change feed, in-process${notServed ? ` (${protocol} not served: ${notServed})` : ''}`, unit: 'ms', higherIsBetter: false });
    fanOutCpu[protocol] = fanOut?.gatewayCpuMsPerEvent ?? NaN;
    notes.push(
      fanOut
        ? `watch fan-out (${protocol}, ${fanOut.connections} connections): ${fanOut.delivered} of ${fanOut.expected} events delivered, p50 ${fanOut.p50.toFixed(2)} ms, p99 of each round ${fanOut.roundP99s.map((v) => v.toFixed(1)).join(' / ')} ms; ` +
            `gateway CPU ${fanOut.gatewayCpuMsPerEvent.toFixed(1)} ms per event, watcher processes ${fanOut.clientCpuUsPerDelivery.toFixed(1)} µs per delivery`
        : `watch fan-out (${protocol}): not served by this gateway (${notServed})`,
    );
  }
  if (fanOutCpu.h2 !== undefined) rows.push({ metric: `gateway CPU per event of the watch fan-out, h2 watchers (${opts['fanout-watchers']} watchers)`, orch: fanOutCpu.h2, baseline: fanOutCpu['http/1.1'] ?? NaN, baselineName: 'HTTP/1.1 watchers, same run', unit: 'ms', higherIsBetter: false });
}

/** 5. protobuf vs JSON over HTTP on the same gateway, 6. memory after all of the above; with --gateway-profile, the profile notes of every phase. */
async function benchProtobufAndMemory({ opts, gateway, orch, base, rows, notes, phase, phases, profDir }: GatewayRun): Promise<void> {
  const gw = gateway.process;
  rows.push(...(await phase('protobuf', () => protobufHttpBench(orch, { getPath: '/api/v1/namespaces/bench/configmaps/c-0', listPath: '/api/v1/namespaces/lists/configmaps?limit=500', concurrency: opts.concurrency, durationMs: Math.min(opts.duration, 5000) }))));
  rows.push({ metric: 'RSS', orch: await rssMiB(gw.pid!), baseline: await rssMiB(base.pid!), baselineName: `bare Fastify holding ${opts['list-size']} objects`, unit: 'MiB', higherIsBetter: false });
  if (!opts['gateway-profile']) return;
  // A clean exit (SIGINT) writes the profile.
  await new Promise((r) => (gw.once('exit', r), gw.kill('SIGINT')));
  for (const p of phases) notes.push(`gateway CPU profile, ${p.name} (self time of the main thread's busy time):\n    ${(await profileSummary(profDir, p.window, 15, true)).join('\n    ')}`);
  // Where creates spend their time, callers included (the create path's budget).
  const creates = phases.find((p) => p.name === 'creates');
  if (creates) {
    notes.push(`gateway CPU profile, creates (inclusive time of the main thread's busy time):\n    ${(await inclusiveSummary(profDir, creates.window, 40, true)).join('\n    ')}`);
    notes.push(`gateway CPU profile, creates, by part (inclusive):\n    ${(await inclusiveShares(profDir, CREATE_PARTS, creates.window, true)).join('\n    ')}`);
  }
}

/** W watchers on one namespace; `events` creates; latency = create start → event arrival, per watcher. */
async function watchLatency(t: HttpsTarget, watchers: number, events: number): Promise<{ p50: number; p99: number }> {
  await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watch' } }));
  const rv = JSON.parse((await call(t, 'GET', '/api/v1/namespaces/watch/configmaps')).body).metadata.resourceVersion;
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  const reqs: ClientRequest[] = [];
  const agent = new https.Agent({ keepAlive: true, maxSockets: watchers + 8, ca: (t.agent.options as https.AgentOptions).ca, cert: (t.agent.options as https.AgentOptions).cert, key: (t.agent.options as https.AgentOptions).key });
  await Promise.all(
    Array.from(
      { length: watchers },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = https.get(`${t.base}/api/v1/namespaces/watch/configmaps?watch=1&resourceVersion=${rv}`, { agent }, (res) => {
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              buf += d;
              let nl: number;
              while ((nl = buf.indexOf('\n')) >= 0) {
                const ev = JSON.parse(buf.slice(0, nl));
                buf = buf.slice(nl + 1);
                const at = sent.get(ev.object?.metadata?.name);
                if (at !== undefined) latencies.push(performance.now() - at);
                received++;
              }
            });
            resolve();
          });
          req.on('error', reject);
          reqs.push(req);
        }),
    ),
  );
  for (let i = 0; i < events; i++) {
    const name = `w-${i}`;
    sent.set(name, performance.now());
    await call(t, 'POST', '/api/v1/namespaces/watch/configmaps', configMap(name).replace('"bench"', '"watch"'));
    await new Promise((r) => setTimeout(r, 10));
  }
  const deadline = Date.now() + 30_000;
  while (received < watchers * events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const r of reqs) r.destroy();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Baseline: the same pattern on the store's own change feed in-process (write → callback). */
async function rawWatchLatency(path: string, watchers: number, events: number): Promise<{ p50: number; p99: number }> {
  const store = await openSqliteStore(path);
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  const rev = await store.currentRevision();
  const handles = Array.from({ length: watchers }, () =>
    store.watch('/registry/core/configmaps/watch/', rev, {
      onEvents: (evs) => {
        for (const e of evs) {
          const at = sent.get(e.key);
          if (at !== undefined) latencies.push(performance.now() - at);
        }
      },
      onError: () => undefined,
    }),
  );
  for (let i = 0; i < events; i++) {
    const key = `/registry/core/configmaps/watch/w-${i}`;
    sent.set(key, performance.now());
    await store.create(key, configMap(`w-${i}`));
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 200));
  for (const h of handles) h.stop();
  await store.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
