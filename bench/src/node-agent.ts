import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import tls from 'node:tls';
import WebSocket from 'ws';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestClient, SharedInformer, type ClientConfig } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import { call, cpuSeconds, createDefaultServiceAccounts, percentile, runLoad, target } from './load';
import type { Row } from './report';
import { freePort } from '@orch/testing';
import { appMain, startBenchGateway } from './gateway-process';
import { monotonicMicros, profileSummary, type ProfileWindow } from './profile';
import type { FrameShape, PortForwardServerConfig, SeenUpgrade } from './portforward-server';
import { benchChild } from './scale';

/** A result row, as `main.ts` prints them. */

const NODE_AGENT_MAIN = appMain('node-agent');

/** Upstream's node simulator (kubemark hollow nodes / kwok) manages about this many objects per second. */
const UPSTREAM_SIMULATOR_OBJECTS_PER_SECOND = 20;
/** Upstream pod startup SLO: p99 create → Running at most 5 s. */
const UPSTREAM_POD_STARTUP_P99_MS = 5_000;

interface Cluster {
  dir: string;
  url: string;
  kubeconfig: string;
  admin: ClientConfig;
  children: ChildProcess[];
  close(): Promise<void>;
}

/** A gateway process on SQLite in a fresh temp dir, with its admin credentials; `nodeArgs` go to node itself (e.g. --cpu-prof). */
async function startCluster(nodeArgs: string[] = []): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-node-'));
  const gateway = await startBenchGateway(join(dir, 'gw'), [], nodeArgs).catch(async (err) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  await createDefaultServiceAccounts(target(gateway.url, gateway.creds, 1), ['default']);
  const children = [gateway.process];
  const close = async () => {
    // Node agents first, with SIGTERM: a killed agent leaves its pods running (they outlive agent restarts).
    const agents = children.filter((c) => c !== gateway.process && c.exitCode === null && c.signalCode === null);
    await Promise.all(agents.map((a) => new Promise((resolve) => {
      a.once('exit', resolve);
      a.kill('SIGTERM');
      setTimeout(() => (a.kill('SIGKILL'), resolve(undefined)), 15_000).unref();
    })));
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  };
  return { dir, url: gateway.url, kubeconfig: gateway.kubeconfig, admin: gateway.admin, children, close };
}

/** Starts a node agent process (`nodeArgs` go to node itself); resolves once it prints `nodes registered`. */
async function startAgent(c: Cluster, name: string, args: string[], nodeArgs: string[] = []): Promise<ChildProcess> {
  const agent = spawn(process.execPath, [...nodeArgs, NODE_AGENT_MAIN, `--kubeconfig=${c.kubeconfig}`, `--root-dir=${join(c.dir, `agent-${name}`)}`, `--hostname-override=${name}`, '--node-ip=127.0.0.1', '--address=127.0.0.1', `--port=${await freePort()}`, `--secure-port=${await freePort()}`, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  c.children.push(agent);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    agent.stderr!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-4000);
      if (/nodes registered/.test(out)) resolve();
    });
    agent.once('exit', (code) => reject(new Error(`node agent exited with ${code}: ${out}`)));
  });
  agent.stderr!.resume();
  return agent;
}

type BenchPod = KubeObject & { status?: { phase?: string } };

/**
 * Calls `onRunning(name, ms)` once per pod that reaches Running, through an informer (a plain
 * watch would end for good when the gateway cuts a watcher that falls behind). Resolves once synced.
 */
async function watchRunning(client: RestClient, onRunning: (name: string, at: number) => void): Promise<{ stop(): Promise<void> }> {
  const seen = new Set<string>();
  const informer = new SharedInformer<BenchPod>(client.resource<BenchPod>({ group: '', version: 'v1', resource: 'pods' }), { name: 'bench-pods', freeze: 'shallow' });
  const check = (p: BenchPod) => {
    const name = p.metadata.name ?? '';
    if (p.status?.phase === 'Running' && !seen.has(name)) {
      seen.add(name);
      onRunning(name, performance.now());
    }
  };
  informer.addEventHandler({ onAdd: check, onUpdate: (_old, p) => check(p) });
  informer.run();
  await informer.waitForSync();
  return { stop: () => informer.stop() };
}

const pod = (name: string, node: string, command?: string[]) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: node, automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'none', ...(command ? { command } : {}) }] },
  });

/** Downloads through port-forward (and directly) per run. */
const DOWNLOAD_ROUNDS = 5;

/**
 * kubectl's port-forward transports: its default (since 1.31: SPDY tunnelled in WebSocket
 * messages, `SPDY/3.1+portforward.k8s.io`, falling back to SPDY when the upgrade is refused) and
 * plain SPDY/3.1 (`KUBECTL_PORT_FORWARD_WEBSOCKETS=false`).
 */
const KUBECTL_TRANSPORTS: Record<'default' | 'plain SPDY', Record<string, string>> = { default: {}, 'plain SPDY': { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' } };
type KubectlTransport = keyof typeof KUBECTL_TRANSPORTS;

const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * Streaming through gateway and agent: exec round trip (WebSocket v5, `true`) against
 * spawning `true` directly, and port-forward download throughput (kubectl port-forward)
 * against a direct connection to the pod (taking turns; medians), both measured in this run,
 * with the bound the machine sets (see {@link boundRow}) beside it.
 */
export async function benchStreaming(opts: { execs?: number; megabytes?: number; profile?: boolean } = {}): Promise<{ rows: Row[]; notes: string[] }> {
  const execs = opts.execs ?? 100;
  const megabytes = opts.megabytes ?? 64;
  // With `profile`: the gateway and the agent run under --cpu-prof; the forwarded downloads are summarised.
  const profDir = opts.profile ? await mkdtemp(join(tmpdir(), 'orch-bench-pf-prof-')) : '';
  const cpuProf = (who: string) => (opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, who)}`] : []);
  const c = await startCluster(cpuProf('gateway'));
  const client = new RestClient(c.admin, { component: 'bench' });
  const notes: string[] = [];
  try {
    const agent = await startAgent(c, 'bench-node', [], cpuProf('agent'));
    const ip = await startStreamPod(client, megabytes);
    const { execMs, spawnMs } = await execRounds(c, execs);

    const paths = [await startPathForward(c, 'default'), await startPathForward(c, 'plain SPDY')];
    const ceiling = await startCeiling(c, megabytes);
    const pids = { gateway: c.children[0].pid!, agent: agent.pid!, pod: podServerPid() };
    const r = await downloadRounds(c, megabytes, ip, pids, paths, ceiling.forwards);
    for (const f of paths) f.pf.kill('SIGTERM');
    ceiling.close();
    const [forwarded] = r.forwarded;
    notes.push(...paths.map((f, i) => `transport, goal path with kubectl's ${f.transport}: the agent saw ${f.seen}; ${median(r.forwarded[i].mbps).toFixed(0)} MiB/s, CPU per GiB: kubectl ${median(r.forwarded[i].kubectl).toFixed(2)} s, gateway ${median(r.forwarded[i].gateway).toFixed(2)} s, agent ${median(r.forwarded[i].agent).toFixed(2)} s (medians of ${DOWNLOAD_ROUNDS})`));
    for (const [i, f] of ceiling.forwards.entries()) notes.push(`ceiling server, ${shapeName(f.shape)}, kubectl's ${f.transport} (the server saw ${f.seen}): ${median(r.ceilings[i].mbps).toFixed(0)} MiB/s (${(median(r.ceilings[i].mbps) / median(r.direct.mbps)).toFixed(2)}x direct), kubectl CPU per GiB ${median(r.ceilings[i].kubectlCpu).toFixed(2)} s, the server's ${median(r.ceilings[i].serverCpu).toFixed(2)} s (medians of ${DOWNLOAD_ROUNDS})`);
    // The ceiling row: the largest frames with kubectl's default transport (the others are in the notes).
    const best = r.ceilings[ceiling.forwards.findIndex((f) => f.transport === 'default' && f.shape === CEILING_SHAPES[CEILING_SHAPES.length - 1])];
    const bound = boundRow(r, best, megabytes);
    notes.push(bound.note);
    if (opts.profile) notes.push(...(await profileNotes(profDir, { gateway: c.children[0], agent }, r.windows)));
    const cpuRows: Row[] = Number.isFinite(cpuSeconds(process.pid))
      ? [
          { metric: `port-forward: gateway CPU per GiB forwarded (TLS in, TLS out; median of ${DOWNLOAD_ROUNDS})`, orch: median(forwarded.gateway), baseline: median(r.relays.tls), baselineName: 'bare Node TLS→TLS relay (pipe), same run', unit: 's/GiB', higherIsBetter: false },
          { metric: `port-forward: node agent CPU per GiB forwarded (pod TCP in, SPDY over WebSocket over TLS out; median of ${DOWNLOAD_ROUNDS})`, orch: median(forwarded.agent), baseline: median(r.relays.tcp), baselineName: 'bare Node TCP→TLS relay (pipe), same run', unit: 's/GiB', higherIsBetter: false },
        ]
      : [];
    const rows: Row[] = [
      { metric: `exec round trip p50 (WebSocket v5, exec -- true, ${execs} runs)`, orch: percentile(execMs, 50), baseline: percentile(spawnMs, 50), baselineName: 'spawning `true` directly, p50', unit: 'ms', higherIsBetter: false },
      { metric: `exec round trip p99 (WebSocket v5, exec -- true, ${execs} runs)`, orch: percentile(execMs, 99), baseline: percentile(spawnMs, 99), baselineName: 'spawning `true` directly, p99', unit: 'ms', higherIsBetter: false },
      { metric: `port-forward download (kubectl port-forward, ${megabytes} MiB, median of ${DOWNLOAD_ROUNDS})`, orch: median(forwarded.mbps), baseline: median(r.direct.mbps), baselineName: 'direct TCP to the pod', unit: 'MiB/s', higherIsBetter: true },
      bound.row,
      { metric: `ceiling: kubectl against an in-memory port-forward server (${shapeName(CEILING_SHAPES[CEILING_SHAPES.length - 1])}, ${megabytes} MiB, median of ${DOWNLOAD_ROUNDS})`, orch: median(best.mbps), baseline: median(r.direct.mbps), baselineName: 'direct TCP to the pod', unit: 'MiB/s', higherIsBetter: true },
      ...cpuRows,
    ];
    return { rows, notes };
  } finally {
    client.close();
    await c.close();
    if (profDir) await rm(profDir, { recursive: true, force: true });
  }
}

/** Creates the `stream` pod (serves `megabytes` MiB from memory to each connection on port 9000); resolves with its IP once it runs. */
async function startStreamPod(client: RestClient, megabytes: number): Promise<string> {
  const pods = client.resource<{ apiVersion: string; kind: string; metadata: { name?: string }; status?: { phase?: string; podIP?: string } }>({ group: '', version: 'v1', resource: 'pods' }, 'default');
  const source = `require('net').createServer((s) => { const chunk = Buffer.alloc(1 << 20, 7); let n = 0; const more = () => { while (n < ${megabytes}) { n++; if (!s.write(chunk)) return s.once('drain', more); } s.end(); }; more(); }).${POD_SERVER_LISTEN}`;
  await pods.create(JSON.parse(pod('stream', 'bench-node', [process.execPath, '-e', source])));
  let ip = '';
  for (let i = 0; i < 300 && !ip; i++) {
    const p = await pods.get('stream');
    if (p.status?.phase === 'Running') ip = p.status.podIP ?? '';
    else await new Promise((r) => setTimeout(r, 100));
  }
  if (!ip) throw new Error('the streaming pod did not start');
  await new Promise((r) => setTimeout(r, 500)); // its server listens shortly after start
  return ip;
}

/** How the stream pod's server listens (also how {@link podServerPid} finds its process). */
const POD_SERVER_LISTEN = 'listen(9000, process.env.POD_IP)';

/** The pid of the stream pod's server process (node -e ...listen(9000...)); NaN if none is found. */
function podServerPid(): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0] === process.execPath && argv[1] === '-e' && argv[2]?.includes(POD_SERVER_LISTEN)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return Number.NaN;
}

/** `execs` exec round trips through the gateway, each followed by spawning `true` directly; both sorted. */
async function execRounds(c: Cluster, execs: number): Promise<{ execMs: number[]; spawnMs: number[] }> {
  const execMs: number[] = [];
  const spawnMs: number[] = [];
  for (let i = 0; i < execs; i++) {
    execMs.push(await execOnce(c, 'stream', ['true']));
    const t0 = performance.now();
    await new Promise((r) => spawn('true', { stdio: 'ignore' }).once('exit', r));
    spawnMs.push(performance.now() - t0);
  }
  return { execMs: execMs.sort((a, b) => a - b), spawnMs: spawnMs.sort((a, b) => a - b) };
}

type DownloadResults = Awaited<ReturnType<typeof downloadRounds>>;

/**
 * The bound row: the fastest port-forward download Node relays allow on this machine, from this
 * run's medians. The least CPU a GiB can cost on the whole path is kubectl's at the ceiling
 * (largest frames, its default transport) + a bare TLS→TLS relay (the gateway's hop) + a bare
 * TCP→TLS relay (the agent's hop) + the bench client's and the pod server's in the direct copy;
 * all of it shares os.cpus().length cores, so at best cores ÷ that GiB/s; and never more than
 * the ceiling row (kubectl against an ideal server). Divided by the direct copy, it says whether
 * the goal (0.5x) is reachable at all.
 */
function boundRow(r: DownloadResults, best: DownloadResults['ceilings'][number], megabytes: number): { row: Row; note: string } {
  const cores = cpus().length;
  const terms = { 'kubectl at the ceiling': median(best.kubectlCpu), 'bare TLS→TLS relay': median(r.relays.tls), 'bare TCP→TLS relay': median(r.relays.tcp), 'bench client (direct copy)': median(r.direct.client), 'pod server (direct copy)': median(r.direct.pod) };
  const perGiB = sum(Object.values(terms));
  const cpuBound = (cores / perGiB) * 1024;
  const bound = Math.min(cpuBound, median(best.mbps));
  const direct = median(r.direct.mbps);
  const note =
    `bound arithmetic (medians of ${DOWNLOAD_ROUNDS}, CPU s per GiB): ${Object.entries(terms).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(' + ')} = ${perGiB.toFixed(2)} s/GiB; ` +
    `${cores} cores ÷ ${perGiB.toFixed(2)} s/GiB = ${cpuBound.toFixed(0)} MiB/s; ceiling ${median(best.mbps).toFixed(0)} MiB/s; min ${bound.toFixed(0)} MiB/s ÷ direct ${direct.toFixed(0)} MiB/s = ${(bound / direct).toFixed(2)}x (goal 0.5x)`;
  const row: Row = {
    metric: `bound: the most port-forward download can reach with Node relays on ${cores} cores (min of cores ÷ least CPU per GiB of the path, and the ceiling row; ${megabytes} MiB, medians of ${DOWNLOAD_ROUNDS})`,
    orch: bound,
    baseline: direct,
    baselineName: 'direct TCP to the pod',
    unit: 'MiB/s',
    higherIsBetter: true,
  };
  return { row, note };
}

/**
 * Stops the profiled processes cleanly (SIGINT, SIGTERM for the agent: a clean exit writes the
 * profile) and summarises each one's main thread over the forwarded downloads of kubectl's default transport.
 */
async function profileNotes(profDir: string, procs: Record<'gateway' | 'agent', ChildProcess>, windows: ProfileWindow[]): Promise<string[]> {
  const notes: string[] = [];
  for (const [who, child] of Object.entries(procs)) {
    await new Promise((r) => (child.once('exit', r), child.kill(who === 'agent' ? 'SIGTERM' : 'SIGINT')));
    notes.push(`${who} CPU profile, port-forward downloads (self time of the main thread's busy time):\n    ${(await profileSummary(join(profDir, who), windows, 15, true)).join('\n    ')}`);
  }
  return notes;
}

/** CPU seconds per GiB each of `pids` spent while `run` moved `gib` GiB. */
async function cpuPerGiBDuring<T>(pids: Record<string, number>, gib: number, run: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  const result = await run();
  return { result, cpu: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (cpuSeconds(pid) - before[k]) / gib])) };
}

/**
 * The port-forward downloads: direct and forwarded downloads take turns, so both see the same
 * machine (the caller takes medians). The CPU time the gateway and the agent spend per GiB
 * forwarded is set against bare Node relays doing the same hop (TLS→TLS, TCP→TLS), taking turns
 * with them as well; the direct copy's client and pod server CPU are measured for the bound.
 * Every download is read by one {@link startDownloader} process. `windows` are the spans of the downloads through `paths[0]`, for CPU profiles.
 */
async function downloadRounds(c: Cluster, megabytes: number, podIp: string, pids: Record<'gateway' | 'agent' | 'pod', number>, paths: PortForward[], ceilingForwards: CeilingForward[]) {
  const mbps = (r: { bytes: number; ms: number }) => r.bytes / 1048576 / (r.ms / 1000);
  const gib = megabytes / 1024;
  const client = await startDownloader();
  const fetch = async (host: string, port: number, what: string) => {
    const r = await client.download(host, port);
    if (r.bytes !== megabytes * 1048576) throw new Error(`${what} delivered ${r.bytes} bytes of ${megabytes} MiB`);
    return mbps(r);
  };
  const direct = { mbps: [] as number[], client: [] as number[], pod: [] as number[] };
  const forwarded = paths.map(() => ({ mbps: [] as number[], gateway: [] as number[], agent: [] as number[], kubectl: [] as number[] }));
  const relays = { tls: [] as number[], tcp: [] as number[] };
  const ceilings = ceilingForwards.map(() => ({ mbps: [] as number[], kubectlCpu: [] as number[], serverCpu: [] as number[] }));
  const windows: ProfileWindow[] = [];
  const pki = join(c.dir, 'gw', 'pki');
  const relayCert = { key: await readFile(join(pki, 'admin.key'), 'utf8'), cert: await readFile(join(pki, 'admin.crt'), 'utf8') };
  const tlsRelay = await startRelay('tls', megabytes, relayCert);
  const tcpRelay = await startRelay('tcp', megabytes, relayCert);
  try {
    // One download each first, not measured: the first bytes through the tunnel find the data path
    // of the gateway and the agent not compiled yet (that round cost them about twice the CPU).
    for (const f of [...paths, ...ceilingForwards]) await client.download('127.0.0.1', f.localPort);
    for (let i = 0; i < DOWNLOAD_ROUNDS; i++) {
      const d = await cpuPerGiBDuring({ client: client.pid, pod: pids.pod }, gib, () => fetch(podIp, 9000, 'the pod'));
      direct.mbps.push(d.result);
      direct.client.push(d.cpu.client);
      direct.pod.push(d.cpu.pod);
      for (const [k, f] of paths.entries()) {
        const from = monotonicMicros();
        const p = await cpuPerGiBDuring({ gateway: pids.gateway, agent: pids.agent, kubectl: f.pf.pid! }, gib, () => fetch('127.0.0.1', f.localPort, `port-forward (${f.transport})`));
        if (k === 0) windows.push({ from, to: monotonicMicros() });
        forwarded[k].mbps.push(p.result);
        for (const who of ['gateway', 'agent', 'kubectl'] as const) forwarded[k][who].push(p.cpu[who]);
      }
      relays.tls.push((await tlsRelay.run()) / gib);
      relays.tcp.push((await tcpRelay.run()) / gib);
      for (const [k, f] of ceilingForwards.entries()) {
        const p = await cpuPerGiBDuring({ kubectl: f.pf.pid!, server: f.serverPid }, gib, () => fetch('127.0.0.1', f.localPort, 'the ceiling server'));
        ceilings[k].mbps.push(p.result);
        ceilings[k].kubectlCpu.push(p.cpu.kubectl);
        ceilings[k].serverCpu.push(p.cpu.server);
      }
    }
  } finally {
    client.close();
    tlsRelay.close();
    tcpRelay.close();
  }
  return { direct, forwarded, relays, windows, ceilings };
}

/** A running `kubectl port-forward pod/stream <localPort>:9000` with one of kubectl's transports, and the transport its server saw. */
interface PortForward {
  localPort: number;
  pf: ChildProcess;
  transport: KubectlTransport;
  /** What the server saw: the `Upgrade` header and the protocol negotiated (`?` when it said nothing). */
  seen: string;
}

/** Starts `kubectl port-forward` with this kubeconfig and transport; resolves once it says it is forwarding. */
async function startPortForward(c: Cluster, kubeconfig: string, transport: KubectlTransport): Promise<Omit<PortForward, 'seen'>> {
  const localPort = await freePort();
  const pf = spawn('kubectl', ['--kubeconfig', kubeconfig, 'port-forward', 'pod/stream', `${localPort}:9000`, '--address=127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...KUBECTL_TRANSPORTS[transport] } });
  c.children.push(pf);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    pf.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Forwarding from')) resolve();
    });
    pf.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    pf.once('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}: ${out}`)));
  });
  return { localPort, pf, transport };
}

/**
 * kubectl port-forward through the gateway and the agent (the goal's path); `seen` from the
 * agent's node_agent_streaming_sessions_total (read through the gateway's node proxy) before and
 * after: kubectl upgrades once, before it says it is forwarding.
 */
async function startPathForward(c: Cluster, transport: KubectlTransport): Promise<PortForward> {
  const before = await agentPortForwardSessions(c);
  const f = await startPortForward(c, c.kubeconfig, transport);
  const after = await agentPortForwardSessions(c);
  const seen = [...after].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k, n]) => `${k}${n - (before.get(k) ?? 0) > 1 ? ` (x${n - (before.get(k) ?? 0)})` : ''}`);
  return { ...f, seen: seen.join(', ') || '?' };
}

/** The agent's port-forward sessions so far, by `"<transport> <protocol>"` (node_agent_streaming_sessions_total). */
async function agentPortForwardSessions(c: Cluster): Promise<Map<string, number>> {
  const t = target(c.url, { ca: c.admin.caPem, cert: c.admin.certPem, key: c.admin.keyPem }, 1);
  const r = await call(t, 'GET', '/api/v1/nodes/bench-node/proxy/metrics');
  t.agent.destroy();
  const out = new Map<string, number>();
  for (const line of r.body.split('\n')) {
    const m = /^node_agent_streaming_sessions_total\{(.*)\} (\d+)$/.exec(line);
    const label = (name: string) => (m ? (new RegExp(`${name}="([^"]*)"`).exec(m[1])?.[1] ?? '') : '');
    if (m && label('endpoint') === 'portForward') out.set(`${label('transport')} ${label('protocol')}`, Number(m[2]));
  }
  return out;
}

/**
 * The frame layouts the ceiling server is measured with: 64 KiB DATA frames in messages of
 * 256 KiB (one frame per read of the pod's socket, as the node agent sent them until it joined
 * the reads of a turn), 1 MiB (the agent's largest frame now), 8 MiB (kubectl does less per byte).
 */
const CEILING_SHAPES: FrameShape[] = [
  { frameBytes: 64 * 1024, framesPerMessage: 4 },
  { frameBytes: 1024 * 1024, framesPerMessage: 1 },
  { frameBytes: 8 * 1024 * 1024, framesPerMessage: 1 },
];
const shapeName = (s: FrameShape) => `${s.frameBytes / 1024} KiB frames, ${(s.frameBytes * s.framesPerMessage) / 1024} KiB messages`;

/** The ceiling's kubectls: every frame layout with kubectl's default transport, and the largest with plain SPDY as well. */
const CEILING_RUNS: { shape: FrameShape; transport: KubectlTransport }[] = [...CEILING_SHAPES.map((shape) => ({ shape, transport: 'default' as const })), { shape: CEILING_SHAPES[CEILING_SHAPES.length - 1], transport: 'plain SPDY' }];

/** A kubectl port-forward to the ceiling server, with its frame layout and the server's pid. */
type CeilingForward = PortForward & { serverPid: number; shape: FrameShape };

/**
 * The ceiling: kubectl port-forward against the in-memory port-forward server
 * (portforward-server.ts), one server port per frame layout, one kubectl per {@link CEILING_RUNS}
 * entry. What any gateway on this machine could reach with this kubectl.
 */
async function startCeiling(c: Cluster, megabytes: number): Promise<{ forwards: CeilingForward[]; close(): void }> {
  const pki = join(c.dir, 'gw', 'pki');
  const gw = new URL(c.url);
  const config: PortForwardServerConfig = {
    gateway: c.url,
    creds: { ca: c.admin.caPem!, cert: c.admin.certPem!, key: c.admin.keyPem! },
    serving: { cert: await readFile(join(pki, 'serving.crt'), 'utf8'), key: await readFile(join(pki, 'serving.key'), 'utf8') },
    megabytes,
    shapes: CEILING_SHAPES,
  };
  const server = benchChild('portforward-server.js', { ORCH_PF_SERVER: JSON.stringify(config) });
  c.children.push(server.proc);
  const upgrades: SeenUpgrade[] = [];
  server.proc.on('message', (m: { upgrade?: SeenUpgrade }) => void (m.upgrade && upgrades.push(m.upgrade)));
  const ports = await server.next<number[]>('ready');
  const kubeconfig = await readFile(c.kubeconfig, 'utf8');
  const forwards: CeilingForward[] = [];
  for (const run of CEILING_RUNS) {
    const port = ports[CEILING_SHAPES.indexOf(run.shape)];
    const file = join(c.dir, `ceiling-${port}.kubeconfig`);
    await writeFile(file, kubeconfig.split(gw.origin).join(`https://127.0.0.1:${port}`));
    const seenBefore = upgrades.length;
    const f = await startPortForward(c, file, run.transport);
    await new Promise((r) => setTimeout(r, 100)); // the server says so over IPC as it upgrades; let the message arrive
    const seen = upgrades.slice(seenBefore).map((u) => `${u.upgrade} ${u.protocol}${u.port === port ? '' : ` on port ${u.port}?`}`);
    forwards.push({ ...f, seen: seen.join(', ') || '?', serverPid: server.proc.pid!, shape: run.shape });
  }
  return {
    forwards,
    close() {
      for (const f of forwards) f.pf.kill('SIGTERM');
      server.proc.kill('SIGKILL');
    },
  };
}

/** One `exec` over WebSocket v5 through the gateway; ms from connect to the final status. */
function execOnce(c: Cluster, podName: string, command: string[]): Promise<number> {
  const q = new URLSearchParams([...command.map((x): [string, string] => ['command', x]), ['stdout', 'true'], ['stderr', 'true']]);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${c.url.replace('https:', 'wss:')}/api/v1/namespaces/default/pods/${podName}/exec?${q}`, ['v5.channel.k8s.io'], { ca: c.admin.caPem, cert: c.admin.certPem, key: c.admin.keyPem });
    let status = '';
    ws.on('message', (d: Buffer) => {
      if (d[0] === 3) status += d.subarray(1).toString();
    });
    ws.on('close', () => (status.includes('"Success"') ? resolve(performance.now() - t0) : reject(new Error(`exec ended without success: ${status}`))));
    ws.on('error', reject);
  });
}

/**
 * A child process relaying one hop as plainly as Node can (`upstream.pipe(client)`), TLS on
 * the client side: `tls` relays from a TLS source (the gateway's hop), `tcp` from a plain TCP
 * source (the agent's hop from the pod). `run()` downloads `megabytes` through it once and
 * resolves with the relay's CPU seconds for it.
 */
async function startRelay(upstream: 'tls' | 'tcp', megabytes: number, cred: { key: string; cert: string }): Promise<{ run(): Promise<number>; close(): void }> {
  const chunk = Buffer.alloc(1 << 20, 7);
  const serve = (s: net.Socket) => {
    let n = 0;
    const more = () => {
      while (n < megabytes) {
        n++;
        if (!s.write(chunk)) return void s.once('drain', more);
      }
      s.end();
    };
    more();
  };
  const source = upstream === 'tls' ? tls.createServer(cred, serve) : net.createServer(serve);
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
  const sourcePort = (source.address() as net.AddressInfo).port;
  const script = `const tls = require('tls'), net = require('net'); const [mode, port] = process.argv.slice(1);
const cred = JSON.parse(process.env.RELAY_CRED);
const s = tls.createServer(cred, (c) => { const u = mode === 'tls' ? tls.connect({ host: '127.0.0.1', port: +port, rejectUnauthorized: false }) : net.connect({ host: '127.0.0.1', port: +port }); u.pipe(c); c.pipe(u); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const relay = spawn(process.execPath, ['-e', script, upstream, String(sourcePort)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RELAY_CRED: JSON.stringify(cred) } });
  const relayPort = await new Promise<number>((resolve, reject) => {
    relay.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    relay.once('exit', (code) => reject(new Error(`relay exited ${code}`)));
  });
  return {
    async run() {
      const before = cpuSeconds(relay.pid!);
      const bytes = await new Promise<number>((resolve, reject) => {
        let n = 0;
        const s = tls.connect({ host: '127.0.0.1', port: relayPort, rejectUnauthorized: false });
        s.on('data', (d: Buffer) => (n += d.length));
        s.on('end', () => resolve(n));
        s.on('error', reject);
      });
      if (bytes !== megabytes * 1048576) throw new Error(`the ${upstream} relay delivered ${bytes} bytes of ${megabytes} MiB`);
      return cpuSeconds(relay.pid!) - before;
    },
    close() {
      relay.kill('SIGKILL');
      source.close();
    },
  };
}

/**
 * The downloads' client: a process of its own that reads a TCP connection to its end on request
 * (`{ host, port }` over IPC, answered with `{ bytes, ms }`), so that its CPU is the client's
 * alone (the bench process carries the other groups' leftovers: informers, a large heap).
 */
async function startDownloader(): Promise<{ pid: number; download(host: string, port: number): Promise<{ bytes: number; ms: number }>; close(): void }> {
  const script = `const net = require('net');
process.on('message', ({ host, port }) => { const t0 = performance.now(); let bytes = 0; const s = net.connect({ host, port });
  s.on('data', (d) => (bytes += d.length)); s.on('end', () => process.send({ bytes, ms: performance.now() - t0 })); s.on('error', (e) => process.send({ error: e.message })); });
process.send({ ready: true });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<{ bytes: number; ms: number; ready?: boolean }>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the download client exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (m: { bytes: number; ms: number; error?: string }) => {
        child.off('exit', onExit);
        if (m.error) reject(new Error(m.error));
        else resolve(m);
      });
    });
  await next();
  return {
    pid: child.pid!,
    download(host, port) {
      const answer = next();
      child.send({ host, port });
      return answer;
    },
    close: () => child.kill('SIGKILL'),
  };
}

/**
 * Simulated runtime at scale: `pods` pods bound round-robin to `nodes` fake nodes are created
 * while no agent runs; then one agent in the simulated runtime starts, registers the nodes and
 * brings every pod to Running. Rows: pods/s to Running (first to last pod), the same including
 * node registration (agent start to last pod), against upstream's node simulator.
 */
export async function benchSimulatedRuntime(opts: { nodes?: number; pods?: number; concurrency?: number } = {}): Promise<Row[]> {
  const nodes = opts.nodes ?? 1000;
  const pods = opts.pods ?? 30_000;
  const c = await startCluster();
  const client = new RestClient(c.admin, { component: 'bench', timeoutMs: 120_000 });
  try {
    const t = target(c.url, { ca: c.admin.caPem, cert: c.admin.certPem, key: c.admin.keyPem }, opts.concurrency ?? 64);
    const created = await runLoad(opts.concurrency ?? 64, 3_600_000, async (i) => (await call(t, 'POST', '/api/v1/namespaces/default/pods', pod(`sim-${i}`, `sim-node-${i % nodes}`))).status === 201, pods);
    if (created.ops !== pods) throw new Error(`created ${created.ops} of ${pods} pods (${created.errors} errors)`);
    let first = 0;
    let last = 0;
    let running = 0;
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const w = await watchRunning(client, (_n, at) => {
      if (running++ === 0) first = at;
      last = at;
      if (running === pods) done();
    });
    const started = performance.now();
    await startAgent(c, 'sim-node', ['--runtime=simulated', `--simulated-nodes=${nodes}`, '--max-pods=250', '--pod-workers=64']);
    const registered = performance.now();
    await Promise.race([all, new Promise((_r, reject) => setTimeout(() => reject(new Error(`only ${running} of ${pods} pods Running after 15 min`)), 900_000).unref())]);
    await w.stop();
    const steady = pods / ((last - first) / 1000);
    const overall = pods / ((last - started) / 1000);
    return [
      { metric: `simulated runtime: pods/s to Running (${pods} pods, ${nodes} nodes, one agent)`, orch: steady, baseline: UPSTREAM_SIMULATOR_OBJECTS_PER_SECOND, baselineName: "upstream's node simulator (~20 objects/s)", unit: '/s', higherIsBetter: true },
      { metric: `simulated runtime: pods/s incl. registering ${nodes} nodes (${((registered - started) / 1000).toFixed(1)} s)`, orch: overall, baseline: UPSTREAM_SIMULATOR_OBJECTS_PER_SECOND, baselineName: "upstream's node simulator (~20 objects/s)", unit: '/s', higherIsBetter: true },
    ];
  } finally {
    client.close();
    await c.close();
  }
}

/**
 * Process runtime start-up latency: `pods` pods (one `node -e` process each) are created one
 * after another on a running agent; each pod's create → Running time is measured from the
 * watch. Rows: p50 and p99 against upstream's pod startup SLO (p99 ≤ 5 s).
 */
export async function benchProcessPodStartup(opts: { pods?: number; intervalMs?: number } = {}): Promise<Row[]> {
  const pods = opts.pods ?? 50;
  const latencies = await podStartLatencies('process', pods, opts.intervalMs ?? 100);
  return [
    { metric: `process runtime: pod create → Running p50 (${pods} pods)`, orch: percentile(latencies, 50), baseline: UPSTREAM_POD_STARTUP_P99_MS, baselineName: 'upstream pod startup SLO (p99 ≤ 5 s)', unit: 'ms', higherIsBetter: false },
    { metric: `process runtime: pod create → Running p99 (${pods} pods)`, orch: percentile(latencies, 99), baseline: UPSTREAM_POD_STARTUP_P99_MS, baselineName: 'upstream pod startup SLO (p99 ≤ 5 s)', unit: 'ms', higherIsBetter: false },
  ];
}

/** Sandbox pod start against the process runtime, both measured in this run (the sandbox needs root; otherwise no rows). */
export async function benchSandboxPodStartup(opts: { pods?: number; intervalMs?: number } = {}): Promise<Row[]> {
  const pods = opts.pods ?? 30;
  if (process.getuid?.() !== 0) {
    console.log('sandbox pod start: skipped (the sandbox runtime needs root)');
    return [];
  }
  const process_ = await podStartLatencies('process', pods, opts.intervalMs ?? 100);
  const sandbox = await podStartLatencies('sandbox', pods, opts.intervalMs ?? 100);
  return [50, 99].map((p) => ({ metric: `sandbox runtime: pod create → Running p${p} (${pods} pods)`, orch: percentile(sandbox, p), baseline: percentile(process_, p), baselineName: `process runtime p${p}, same run`, unit: 'ms', higherIsBetter: false }));
}

/** Create → Running latencies (sorted) of `pods` pods on one agent of this runtime. */
async function podStartLatencies(runtime: 'process' | 'sandbox', pods: number, intervalMs: number): Promise<number[]> {
  const c = await startCluster();
  const client = new RestClient(c.admin, { component: 'bench' });
  try {
    await startAgent(c, 'bench-node', [`--runtime=${runtime}`]);
    const createdAt = new Map<string, number>();
    const latencies: number[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const w = await watchRunning(client, (name, at) => {
      const t0 = createdAt.get(name);
      if (t0 !== undefined) latencies.push(at - t0);
      if (latencies.length === pods) done();
    });
    const t = target(c.url, { ca: c.admin.caPem, cert: c.admin.certPem, key: c.admin.keyPem }, 4);
    for (let i = 0; i < pods; i++) {
      const name = `proc-${i}`;
      createdAt.set(name, performance.now());
      const r = await call(t, 'POST', '/api/v1/namespaces/default/pods', pod(name, 'bench-node', [process.execPath, '-e', 'setInterval(() => {}, 1000)']));
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.body}`);
      await new Promise((r2) => setTimeout(r2, intervalMs));
    }
    await Promise.race([all, new Promise((_r, reject) => setTimeout(() => reject(new Error(`only ${latencies.length} of ${pods} pods Running after 2 min`)), 120_000).unref())]);
    await w.stop();
    return latencies.sort((a, b) => a - b);
  } finally {
    client.close();
    await c.close();
  }
}
