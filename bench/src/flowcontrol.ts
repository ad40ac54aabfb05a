import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensurePki, issueClientCert } from '@orch/auth';
import type { FloodJob, FloodResult } from './apf-flooder';
import type { MacrotaskKind, MacrotaskSecond } from './gateway-macrotasks';
import { startBenchGateway } from './gateway-process';
import { call, cpuSeconds, percentile, runLoad, target, type HttpsTarget } from './load';
import { inclusiveShares, monotonicMicros, profileSummary } from './profile';
import type { Row } from './report';

const FC = '/apis/flowcontrol.apiserver.orch.io/v1';

/** Both test users share one FlowSchema (flows by user) and one priority level with small queues. */
const LEVEL = {
  apiVersion: 'flowcontrol.apiserver.orch.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name: 'bench' },
  spec: { type: 'Limited', limited: { nominalConcurrencyShares: 20, limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 2, queueLengthLimit: 5 } } } },
};
const SCHEMA = {
  apiVersion: 'flowcontrol.apiserver.orch.io/v1',
  kind: 'FlowSchema',
  metadata: { name: 'bench' },
  spec: {
    priorityLevelConfiguration: { name: 'bench' },
    matchingPrecedence: 500,
    distinguisherMethod: { type: 'ByUser' },
    rules: [{ subjects: [{ kind: 'Group', group: { name: 'bench-users' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
  },
};

interface Phase {
  victimP50: number;
  victimP99: number;
  victim429: number;
  /** Requests the victim made (answered, whatever the status). */
  victimRequests: number;
  flood?: FloodResult;
  /** CPU each process used over the phase, in cores (CPU seconds per second of the phase). */
  cores: { gateway: number; victim: number; flooder?: number; machine: number };
}

/** Milliseconds every core of the machine has been busy (not idle), whoever ran there. */
const machineBusyMs = () => cpus().reduce((sum, { times: t }) => sum + t.user + t.nice + t.sys + t.irq, 0);

/**
 * The victim's sequential gets for `durationMs`, while the flooder process (when given) loops its
 * lists; the CPU the gateway (`gatewayPid`), the victim's process (this one) and the flooder used meanwhile.
 */
async function phase(victim: HttpsTarget, gatewayPid: number, durationMs: number, flood?: FloodJob): Promise<Phase> {
  const flooder = flood && (await startFlooder(flood));
  try {
    let victim429 = 0;
    let victimRequests = 0;
    let victimOther: number | undefined;
    const latencies: number[] = [];
    const start = performance.now();
    const gatewayCpu = cpuSeconds(gatewayPid);
    const victimCpu = process.cpuUsage();
    const machineBusy = machineBusyMs();
    const end = start + durationMs;
    while (performance.now() < end) {
      const t = performance.now();
      const r = await call(victim, 'GET', '/api/v1/namespaces/default/configmaps/probe');
      victimRequests++;
      if (r.status === 200) latencies.push(performance.now() - t);
      else if (r.status === 429) victim429++;
      else victimOther = r.status;
    }
    const seconds = (performance.now() - start) / 1000;
    const victimUsage = process.cpuUsage(victimCpu);
    const cores = { gateway: (cpuSeconds(gatewayPid) - gatewayCpu) / seconds, victim: (victimUsage.user + victimUsage.system) / 1e6 / seconds, machine: (machineBusyMs() - machineBusy) / 1000 / seconds };
    const result = await flooder?.stop();
    // A victim that is never served measures nothing: say why instead of printing n/a.
    if (latencies.length === 0) throw new Error(`apf bench: the victim's gets all failed (last status ${victimOther ?? 429})`);
    latencies.sort((a, b) => a - b);
    return { victimP50: percentile(latencies, 50), victimP99: percentile(latencies, 99), victim429, victimRequests, flood: result, cores: { ...cores, flooder: result && result.cpuSeconds / result.seconds } };
  } finally {
    flooder?.process.kill('SIGKILL');
  }
}

/**
 * The flooding client in a process of its own (apf-flooder.ts): its client work (TLS, reading
 * lists, retrying 429s) runs on its own event loop and core, not on the loop that times the victim.
 */
async function startFlooder(job: FloodJob): Promise<{ process: ChildProcess; stop(): Promise<FloodResult> }> {
  const child = spawn(process.execPath, [join(__dirname, 'apf-flooder.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the flooder exited with ${code}`))));
  const nextLine = () => Promise.race([new Promise<string>((resolve) => lines.once('line', resolve)), exited]);
  child.stdin!.write(`${JSON.stringify(job)}\n`);
  if ((await nextLine()) !== 'ready') throw new Error('the flooder did not get ready');
  return {
    process: child,
    stop: async () => {
      child.stdin!.write('stop\n');
      return JSON.parse(await nextLine()) as FloodResult;
    },
  };
}

/** The victim in a level of its own. */
const VICTIM_LEVEL = { ...LEVEL, metadata: { name: 'bench-victim' } };

/**
 * The victim's FlowSchema (precedence before the shared one), to `level`: in the shared level it
 * is a flow of that level like any other, and the gateway's queue-wait histogram has its own.
 */
const victimSchema = (level: string) => ({
  ...SCHEMA,
  metadata: { name: 'bench-victim' },
  spec: { ...SCHEMA.spec, priorityLevelConfiguration: { name: level }, matchingPrecedence: 400, rules: [{ ...SCHEMA.spec.rules[0], subjects: [{ kind: 'User', user: { name: 'victim' } }] }] },
});

const WAIT_METRIC = 'apiserver_flowcontrol_request_wait_duration_seconds';

/** The cumulative buckets (upper bound in s → requests) and sum of the victim's queue waits, from the gateway's /metrics. */
async function victimWaits(admin: HttpsTarget): Promise<{ buckets: Map<number, number>; sum: number }> {
  const text = (await call(admin, 'GET', '/metrics')).body;
  const buckets = new Map<number, number>();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(WAIT_METRIC) || !line.includes('flow_schema="bench-victim"') || !line.includes('execute="true"')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) buckets.set(le === '+Inf' ? Infinity : Number(le), value);
    else if (line.startsWith(`${WAIT_METRIC}_sum`)) sum = value;
  }
  return { buckets, sum };
}

/** The victim's queue waits between two scrapes: how many, their mean, and the bucket bound 99% of them are within. */
function waitNote(before: Awaited<ReturnType<typeof victimWaits>>, after: Awaited<ReturnType<typeof victimWaits>>): string {
  const count = (after.buckets.get(Infinity) ?? 0) - (before.buckets.get(Infinity) ?? 0);
  if (count === 0) return 'no queue waits of the victim reported';
  const within99 = [...after.buckets.keys()].sort((a, b) => a - b).find((le) => (after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0) >= 0.99 * count);
  const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
  return `the victim's ${count} requests waited for a seat ${ms((after.sum - before.sum) / count)} on average, 99% of them at most ${within99 === Infinity ? 'more than the last bucket' : ms(within99!)} (the gateway's ${WAIT_METRIC})`;
}

/** p50, p99 and max of the gateway's event-loop delay since the previous scrape (prom-client's nodejs_eventloop_lag_*, which each scrape resets). */
function loopDelayNote(metrics: string): string {
  const value = (name: string) => Number(new RegExp(`^nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(metrics)?.[1]) * 1000;
  return `p50 ${value('p50').toFixed(1)} ms, p99 ${value('p99').toFixed(1)} ms, max ${value('max').toFixed(1)} ms (nodejs_eventloop_lag_*, resolution 10 ms)`;
}

/**
 * The CPU of each process in both phases, and the machine's cores: whether the clients (the
 * flooder reading its lists, the victim) and the gateway together wanted more CPU than the
 * machine has, so that the victim's latency measures the machine as well as the gateway.
 */
function cpuNote(unloaded: Phase, flooded: Phase): string {
  const c = (n: number | undefined) => (n ?? 0).toFixed(2);
  const total = (p: Phase) => p.cores.gateway + p.cores.victim + (p.cores.flooder ?? 0);
  const perList = (f: FloodResult | undefined) => (f && f.ok ? ((1000 * f.cpuSeconds) / f.ok).toFixed(1) : 'n/a');
  return `CPU in cores (CPU s per s; the machine has ${cpus().length}): unloaded gateway ${c(unloaded.cores.gateway)}, victim ${c(unloaded.cores.victim)} (the whole machine ${c(unloaded.cores.machine)}); flooded gateway ${c(flooded.cores.gateway)}, victim ${c(flooded.cores.victim)}, flooder ${c(flooded.cores.flooder)}, together ${c(total(flooded))} (the whole machine ${c(flooded.cores.machine)}, load average ${loadavg()[0].toFixed(1)}); the flooder's CPU per list it read ${perList(flooded.flood)} ms`;
}

/**
 * The flood's share of the flooded gateway's CPU: its CPU less what the victim's requests cost
 * (at the gateway CPU per request of the unloaded phase, where the victim alone used it; both
 * phases last as long).
 */
function floodShareNote(unloaded: Phase, flooded: Phase): string {
  const victimCores = (unloaded.cores.gateway * flooded.victimRequests) / unloaded.victimRequests;
  const floodCores = Math.max(0, flooded.cores.gateway - victimCores);
  return `the flood used ${floodCores.toFixed(2)} cores of the gateway, ${((100 * floodCores) / flooded.cores.gateway).toFixed(0)}% of its CPU (the victim's ${flooded.victimRequests} requests ~${victimCores.toFixed(2)} cores, at the unloaded phase's gateway CPU per request)`;
}

/** Count and seconds of the gateway's GC pauses of each kind, from prom-client's nodejs_gc_duration_seconds in a /metrics text. */
function gcPauses(metrics: string): Map<string, { count: number; seconds: number }> {
  const pauses = new Map<string, { count: number; seconds: number }>();
  for (const m of metrics.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} (\S+)$/gm)) {
    const p = pauses.get(m[2]) ?? { count: 0, seconds: 0 };
    if (m[1] === 'count') p.count = Number(m[3]);
    else p.seconds = Number(m[3]);
    pauses.set(m[2], p);
  }
  return pauses;
}

/**
 * The GC pauses of the gateway between two scrapes, by kind: how many, their mean, and their
 * share of the flooded phase (the victim's requests that arrive during a pause wait for it).
 */
function gcNote(before: string, after: string, flooded: Phase): string {
  const was = gcPauses(before);
  const kinds = [...gcPauses(after)].map(([kind, p]) => ({ kind, count: p.count - (was.get(kind)?.count ?? 0), ms: 1000 * (p.seconds - (was.get(kind)?.seconds ?? 0)) }));
  const phaseMs = 1000 * (flooded.flood?.seconds ?? NaN);
  return kinds.filter((k) => k.count > 0).map((k) => `${k.kind} ${k.count}, mean ${(k.ms / k.count).toFixed(1)} ms, ${((100 * k.ms) / phaseMs).toFixed(1)}% of the phase`).join('; ') || 'none';
}

/**
 * The flooded gateway's macrotasks (gateway-macrotasks.ts, seconds that ended within `window`,
 * Date.now() ms) by kind, busiest first: how many per second, their mean CPU, how many took over
 * 1 ms of CPU and the longest; then the tasks over 1 ms per 100 lists served and the share of
 * the phase spent in them (a request that arrives then waits behind the rest of one).
 */
function macrotaskNote(lines: string, window: { from: number; to: number }, lists: number): string {
  const seconds = lines.split('\n').filter(Boolean).map((l) => JSON.parse(l) as MacrotaskSecond).filter((s) => s.at > window.from + 1000 && s.at <= window.to);
  if (seconds.length === 0) return 'no second of the phase recorded';
  const kinds = new Map<string, MacrotaskKind>();
  for (const s of seconds) {
    for (const [type, k] of Object.entries(s.kinds)) {
      const sum = kinds.get(type) ?? { n: 0, cpuUs: 0, over: [0, 0, 0], longWallUs: 0, maxCpuUs: 0 };
      kinds.set(type, { n: sum.n + k.n, cpuUs: sum.cpuUs + k.cpuUs, over: [0, 1, 2].map((i) => sum.over[i] + k.over[i]) as MacrotaskKind['over'], longWallUs: sum.longWallUs + k.longWallUs, maxCpuUs: Math.max(sum.maxCpuUs, k.maxCpuUs) });
    }
  }
  const n = seconds.length;
  const busiest = [...kinds].sort((a, b) => b[1].cpuUs - a[1].cpuUs).slice(0, 5);
  const byKind = busiest.map(([type, k]) => `${type} ${(k.n / n).toFixed(0)}/s, mean ${(k.cpuUs / k.n / 1000).toFixed(2)} ms, ${(k.over[1] / n).toFixed(1)}/s over 1 ms, longest ${(k.maxCpuUs / 1000).toFixed(1)} ms`);
  const all = [...kinds.values()];
  const long = all.reduce((sum, k) => sum + k.over[1], 0);
  const longWall = all.reduce((sum, k) => sum + k.longWallUs, 0);
  return `${byKind.join('; ')}; over 1 ms of CPU: ${(long / n).toFixed(1)} tasks/s, ${lists ? ((100 * long * (window.to - window.from)) / (n * 1000 * lists)).toFixed(1) : 'n/a'} per 100 lists served, ${((100 * longWall) / (n * 1e6)).toFixed(1)}% of the phase's wall time in them (${n} s)`;
}

/**
 * The kinds of work of the flooded gateway (inclusive shares of its main thread's busy time; a
 * TLS write counts both as `writev` and as the kind that made it): which one the victim's
 * requests wait behind on the event loop.
 */
const FLOOD_WORK: Record<string, RegExp> = {
  'TLS writes (writev: encrypt and the loopback send)': /^writev $/,
  '429 responses (sendError)': /^sendError .*pipeline\/encode\.js/,
  'request heads (HTTP parse, routing, sync pipeline start)': /^parserOnHeadersComplete /,
  'priority and fairness admit (incl. its metrics)': /^admit .*flowcontrol\/flow-control\.js/,
  'list starts (listVerbatim, first two chunks)': /^(listVerbatim .*registry\/reads\.js|sendChunks .*pipeline\/encode\.js)/,
  'list body turns (ChunkTurns)': /^turn .*pipeline\/body-stream\.js/,
  'garbage collector': /^\(garbage collector\)/,
};

/**
 * The flooder either ignores Retry-After (retries each 429 at once: the worst case, an abusive
 * client) or honours it as client-go and kubectl do (a well-behaved client asking for 10x its share).
 */
const SCENARIOS = [
  { name: 'same level, Priority and Fairness on', apf: true, ownLevel: false, honourRetryAfter: false },
  { name: 'same level, Priority and Fairness off', apf: false, ownLevel: false, honourRetryAfter: false },
  { name: 'victim in its own level', apf: true, ownLevel: true, honourRetryAfter: false },
  { name: 'same level, flooder honours Retry-After as client-go', apf: true, ownLevel: false, honourRetryAfter: true },
  { name: 'victim in its own level, flooder honours Retry-After as client-go', apf: true, ownLevel: true, honourRetryAfter: true },
];

/**
 * `--only=apf`: one client floods a priority level at 10x its fair share (concurrent lists of
 * `listSize` ConfigMaps) while another client gets one object in a loop, in the same level
 * (Priority and Fairness on, and off for reference) and in a level of its own. The victim's
 * p99 is compared with its unloaded p99 in the same run; the 429s of each client are counted.
 * The flooder is a process of its own (apf-flooder.ts): only the gateway is shared.
 */
export async function flowControlBench(opts: { durationMs: number; listSize: number; profile?: boolean; tasks?: boolean; scenarios?: readonly number[]; floodConcurrency?: number; floodListsPerSecond?: number }): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const chosen = opts.scenarios?.length ? SCENARIOS.filter((_, i) => opts.scenarios!.includes(i + 1)) : SCENARIOS;
  for (const { name: mode, apf, ownLevel, honourRetryAfter } of chosen) {
    const dir = await mkdtemp(join(tmpdir(), 'orch-bench-apf-'));
    // 40 seats for the server: the bench level's share (20 of 265) gives it 4.
    // With --apf-profile: the gateway runs under --cpu-prof; the flooded phase is summarised.
    const profDir = join(dir, 'prof');
    // With --apf-tasks: the gateway's macrotasks are timed (gateway-macrotasks.ts).
    const nodeArgs = [...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...(opts.tasks ? ['--require', join(__dirname, 'gateway-macrotasks.js')] : [])];
    const gateway = await startBenchGateway(join(dir, 'gw'), ['--max-requests-inflight=40', '--max-mutating-requests-inflight=0', `--enable-priority-and-fairness=${apf}`], nodeArgs);
    try {
      const admin = target(gateway.url, gateway.creds, 64);
      const pki = await ensurePki(gateway.pkiDir);
      const userTarget = async (cn: string, sockets: number) => {
        const c = await issueClientCert(pki, { cn, orgs: ['bench-users'] });
        return target(gateway.url, { ca: gateway.creds.ca, cert: c.certPem, key: c.keyPem }, sockets);
      };
      const seats = 4;
      const flooders = opts.floodConcurrency || 10 * (seats / 2);
      const victim = await userTarget('victim', 1);
      const flooderCert = await issueClientCert(pki, { cn: 'flooder', orgs: ['bench-users'] });
      const flood: FloodJob = { url: gateway.url, ca: gateway.creds.ca, cert: flooderCert.certPem, key: flooderCert.keyPem, path: '/api/v1/namespaces/flood/configmaps', concurrency: flooders, honourRetryAfter, listsPerSecond: opts.floodListsPerSecond || undefined };
      await call(admin, 'POST', `${FC}/prioritylevelconfigurations`, JSON.stringify(LEVEL));
      await call(admin, 'POST', `${FC}/flowschemas`, JSON.stringify(SCHEMA));
      if (ownLevel) await call(admin, 'POST', `${FC}/prioritylevelconfigurations`, JSON.stringify(VICTIM_LEVEL));
      await call(admin, 'POST', `${FC}/flowschemas`, JSON.stringify(victimSchema(ownLevel ? VICTIM_LEVEL.metadata.name : LEVEL.metadata.name)));
      // Both users may read ConfigMaps (RBAC is on).
      await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', JSON.stringify({ metadata: { name: 'bench-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] }));
      await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', JSON.stringify({ metadata: { name: 'bench-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'bench-users' }] }));
      await call(admin, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flood' } }));
      await call(admin, 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { k: 'v' } }));
      const cm = (i: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `f-${i}`, namespace: 'flood' }, data: { key: 'x'.repeat(64) } });
      await runLoad(32, 600_000, async (i) => (await call(admin, 'POST', '/api/v1/namespaces/flood/configmaps', cm(i))).status === 201, opts.listSize);
      // Let the new level reach the replica's configuration before measuring.
      await new Promise((r) => setTimeout(r, 500));
      const unloaded = await phase(victim, gateway.process.pid!, opts.durationMs);
      const from = monotonicMicros();
      const wallFrom = Date.now();
      const waitsBefore = apf ? await victimWaits(admin) : undefined;
      // This scrape resets the gateway's event-loop delay histogram: the next one covers the flooded phase.
      const beforeText = (await call(admin, 'GET', '/metrics')).body;
      const flooded = await phase(victim, gateway.process.pid!, opts.durationMs, flood);
      const window = { from, to: monotonicMicros() };
      const wallWindow = { from: wallFrom, to: Date.now() };
      const afterText = (await call(admin, 'GET', '/metrics')).body;
      const waits = waitsBefore && waitNote(waitsBefore, await victimWaits(admin));
      const { ok, rejected } = flooded.flood!;
      rows.push({ metric: `victim get p99 while flooded (${mode})`, orch: flooded.victimP99, baseline: unloaded.victimP99, baselineName: 'victim get p99 unloaded, same gateway', unit: 'ms', higherIsBetter: false });
      rows.push({ metric: `victim get p50 while flooded (${mode})`, orch: flooded.victimP50, baseline: unloaded.victimP50, baselineName: 'victim get p50 unloaded, same gateway', unit: 'ms', higherIsBetter: false });
      notes.push(`${mode}: the gateway's event-loop delay while flooded ${loopDelayNote(afterText)}`);
      notes.push(`${mode}: ${flooders} flooding lists of ${opts.listSize} ConfigMaps (10x a fair share of ${seats / 2} of ${seats} seats): flooder got ${rejected} 429s and ${ok} lists; the victim got ${flooded.victim429} 429s${waits ? `; ${waits}` : ''}`);
      notes.push(`${mode}: ${cpuNote(unloaded, flooded)}; ${floodShareNote(unloaded, flooded)}`);
      notes.push(`${mode}: the gateway's garbage-collector pauses while flooded: ${gcNote(beforeText, afterText, flooded)}`);
      if (opts.tasks) notes.push(`${mode}: the gateway's macrotasks while flooded (CPU per task, --apf-tasks; its hooks slow the gateway): ${macrotaskNote(await readFile(join(dir, 'gw', 'macrotasks.jsonl'), 'utf8'), wallWindow, ok)}`);
      for (const t of [admin, victim]) t.agent.destroy();
      if (opts.profile) {
        // A clean exit (SIGINT) writes the profile.
        await new Promise((r) => (gateway.process.once('exit', r), gateway.process.kill('SIGINT')));
        notes.push(`gateway CPU profile while flooded (${mode}; self time of the main thread's busy time):\n    ${(await profileSummary(profDir, window, 15, true)).join('\n    ')}`);
        notes.push(`gateway work while flooded (${mode}; inclusive shares of the main thread's busy time): ${(await inclusiveShares(profDir, FLOOD_WORK, window, true)).join(', ')}`);
      }
    } finally {
      gateway.process.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { rows, notes };
}
