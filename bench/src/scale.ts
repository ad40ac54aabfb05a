import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { connect } from 'nats';
import { openEtcdStore } from '@orch/storage';
import { clusterIdentity, watchChannels } from '@orch/watch';
import { startEtcd, startNats, startRedis, type EtcdServer, type NatsServer, type RedisServer } from '@orch/testing';
import { startBenchGateway, startBenchWatchPump, type BenchGateway } from './gateway-process';
import type { EtcdFeedConfig, EtcdFeedReport } from './etcd-feed';
import { whyNotServed, type WatchClientConfig, type WatchClientReport, type WatchProtocol } from './watch-client';
import { call, percentile, rssMiB, runLoad, target, type LoadResult } from './load';
import type { Row } from './report';
import { inclusiveShares, monotonicMicros, profileSummary } from './profile';

export interface ScaleBenchOptions {
  durationMs: number;
  concurrency: number;
  watchers: number;
  eventsPerSecond: number;
  listSize: number;
  rssObjects: number;
  phases: Set<ScalePhase>;
  /** Processes holding the watchers. */
  watchClients: number;
  /** How the watcher processes hold their watches (watch-client.ts), in this order: HTTP/1.1 with each pump placement, h2 with the pump process. */
  watchProtocols: WatchProtocol[];
  /** CPU profiles of the gateways and watcher processes during watch delivery (top frames in the notes). */
  profile: boolean;
  /** The watch phase also runs with the pump inside gateway-0 (else only with the pump in its own process). */
  pumpInGateway: boolean;
}

const configMap = (ns: string, name: string, data: Record<string, string> = { key: 'value' }) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Engines {
  etcd: EtcdServer;
  nats: NatsServer;
  redis: RedisServer;
}

/** The store and engine flags every replica (and a pump process) of the bench cluster gets. */
const replicaArgs = (engines: Engines, pkiDir: string) => ['--storage-backend=etcd', `--etcd-servers=${engines.etcd.endpoint}`, `--nats-url=${engines.nats.url}`, `--redis-url=${engines.redis.url}`, `--pki-dir=${pkiDir}`];

/** Gateways (etcd, NATS, Redis) sharing the PKI in pkiDir (the first one writes it); `nodeArgs` go to every gateway's node, `extraArgs` to every gateway. */
async function startReplicas(dir: string, engines: Engines, count: number, pkiDir: string, nodeArgs: (i: number) => string[] = () => [], extraArgs: string[] = []): Promise<BenchGateway[]> {
  const args = [...replicaArgs(engines, pkiDir), ...extraArgs];
  const first = await startBenchGateway(join(dir, 'gw-0'), args, nodeArgs(0));
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => startBenchGateway(join(dir, `gw-${i + 1}`), args, nodeArgs(i + 1))));
  return [first, ...rest];
}

/** A process's main thread so far (Linux /proc/<pid>/task/<pid>/schedstat): ns waited on a run queue, and runs on a core. */
async function runQueueWait(pid: number): Promise<{ waitNs: number; runs: number }> {
  const [, waitNs, runs] = (await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')).trim().split(' ').map(Number);
  return { waitNs, runs };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc); `mainThread`: its main thread's only. */
async function cpuSeconds(pid: number, mainThread = false): Promise<number> {
  const stat = (await readFile(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

interface DeliveryResult {
  /** Write sent → event at a watcher (the etcd commit, the pump, NATS, the cache, HTTPS). */
  endToEnd: { p50: number; p99: number };
  /** Event on etcd's change feed (a direct etcd watch) → event at a watcher: the gateways' part. */
  afterFeed: { p50: number; p99: number };
  /** Write sent → event on etcd's change feed: etcd's own part. */
  feed: { p50: number; p99: number };
  /** Event on etcd's change feed → the pump's publication on NATS (the pump's read and publish). */
  feedToBus: { p50: number; p99: number };
  /** The pump's publication on NATS → event at a watcher (NATS, the replica's cache, the HTTPS stream). */
  busToWatcher: { p50: number; p99: number };
  delivered: number;
  expected: number;
  achievedRate: number;
  /** Events written, and the seconds the cores below were measured over. */
  events: number;
  seconds: number;
  /** Cores busy while events flowed: the watcher processes, the writer, the feed probe, and each of `observe`'s processes. */
  cpu: { watchers: number; writer: number; probe: number; observed: number[] };
  /** Main threads' time runnable but waiting for a core (Linux schedstat), ms per run of the thread: each of `observe`'s processes, then the probe. */
  runQueueWaitMs: number[];
  /** When events flowed (monotonicMicros), for profiles. */
  window: { from: number; to: number };
  /** Counts of each part's delays by ms range (DELAY_BUCKETS), to see steps: write → feed, write → publication (no probe feed time in it), feed → publication, publication → watcher. */
  histograms: { feed: string; bus: string; feedToBus: string; busToWatcher: string };
  /** etcd's own watch metrics over the run (ETCD_WATCH_METRICS): counters' increase, gauges' highest sample. */
  etcdWatch: string;
}

/** Upper bounds (ms) of the delay histogram's ranges; the last range is open. */
const DELAY_BUCKETS = [0, 5, 10, 20, 30, 50, 70, 90, 100, 110, 120, 150, 200, 300];

/** "≤0: n, 0–5: n, …, >300: n", ranges without values left out. */
function delayHistogram(values: number[]): string {
  const counts = new Array<number>(DELAY_BUCKETS.length + 1).fill(0);
  for (const v of values) {
    const i = DELAY_BUCKETS.findIndex((bound) => v <= bound);
    counts[i < 0 ? DELAY_BUCKETS.length : i]++;
  }
  const label = (i: number) => (i === 0 ? `≤${DELAY_BUCKETS[0]}` : i === DELAY_BUCKETS.length ? `>${DELAY_BUCKETS[i - 1]}` : `${DELAY_BUCKETS[i - 1]}–${DELAY_BUCKETS[i]}`);
  return counts.flatMap((n, i) => (n > 0 ? [`${label(i)}: ${n}`] : [])).join(', ');
}

/**
 * etcd's watch gauges (its /metrics, etcd 3.4): slow watchers are the ones etcd moved off its
 * synced set (their stream's send channel was full; its sync loop catches them up every 100 ms),
 * pending events the ones queued to watch streams and not yet sent by them.
 */
const ETCD_WATCH_METRICS = ['etcd_debugging_mvcc_slow_watcher_total', 'etcd_debugging_mvcc_pending_events_total', 'etcd_debugging_mvcc_watcher_total', 'etcd_debugging_mvcc_watch_stream_total'];

async function etcdWatchMetrics(endpoint: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const values = new Map<string, number>();
  for (const name of ETCD_WATCH_METRICS) {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (m) values.set(name, Number(m[1]));
  }
  return values;
}

/** Samples etcd's watch gauges every 100 ms until stopped; then says how high each went and how often it was above 0. */
function sampleEtcdWatch(endpoint: string): { stop: () => Promise<string> } {
  const samples: Map<string, number>[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      samples.push(await etcdWatchMetrics(endpoint).catch(() => new Map<string, number>()));
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return ETCD_WATCH_METRICS.map((name) => {
        const seen = samples.flatMap((s) => (s.has(name) ? [s.get(name)!] : []));
        return seen.length === 0 ? `${name} absent` : `${name} max ${Math.max(...seen)} (${seen.filter((v) => v > 0).length} of ${seen.length} samples above 0)`;
      }).join(', ');
    },
  };
}

/** A bench child process with IPC that says `{ ready }`, later `{ done: report }`, or `{ error }`. */
export function benchChild(main: string, env: Record<string, string>, nodeArgs: string[] = []): { proc: ChildProcess; next: <T>(key: 'ready' | 'done') => Promise<T> } {
  const proc = spawn(process.execPath, [...nodeArgs, join(__dirname, main)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } });
  const next = <T>(key: 'ready' | 'done') =>
    new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${main} exited with ${code} before ${key}`));
      const on = (m: Record<string, unknown>) => {
        if (m.error) reject(new Error(`${main}: ${String(m.error)}`));
        else if (m[key] !== undefined) {
          proc.off('message', on);
          proc.off('close', onExit);
          resolve(m[key] as T);
        }
      };
      proc.on('message', on);
      // 'close', not 'exit': a child that sends its last message and exits may be seen to exit
      // before that message is read; 'close' comes after the IPC channel is drained.
      proc.once('close', onExit);
    });
  return { proc, next };
}

/**
 * Watch delivery latency: `watchers` watch connections spread round-robin over the gateways,
 * one namespace each out of `namespaces`, held by `clients` watcher processes (watch-client.ts:
 * the watchers' own TLS and parsing are spread out and their CPU is measured). A writer process
 * creates objects straight into etcd at `rate`/s spread over the namespaces (so the gateways'
 * CPU goes to delivery, not to serving creates), and a probe process watching etcd's change feed
 * notes when each event appears there (etcd-feed.ts): each delivery's latency splits into etcd's
 * part (commit and feed) and the gateways' (the pump, NATS, the replica's cache and the HTTPS
 * stream). `nodeArgs` go to the watcher processes' node (profiles). `protocol`: a TLS connection
 * per watch (`http/1.1`) or, `h2`, one HTTP/2 session per watcher process and gateway carrying
 * all its watches of that gateway as streams (client-go's way).
 */
async function watchDelivery(
  gws: BenchGateway[],
  etcdEndpoint: string,
  opts: { watchers: number; namespaces: number; nsPrefix: string; rate: number; durationMs: number; clients: number; protocol: WatchProtocol; nodeArgs: (role: 'watcher' | 'writer') => string[]; observe: number[]; bus: { url: string; subject: string } },
): Promise<DeliveryResult> {
  const admin = target(gws[0].url, gws[0].creds, 64);
  for (let n = 0; n < opts.namespaces; n++) await call(admin, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${opts.nsPrefix}${n}` } }));
  const rv = Number(JSON.parse((await call(admin, 'GET', '/api/v1/configmaps?limit=1')).body).metadata.resourceVersion);
  const perNamespace = new Array<number>(opts.namespaces).fill(0);
  const configs: WatchClientConfig[] = Array.from({ length: opts.clients }, () => ({ watches: [], ...gws[0].creds, protocol: opts.protocol }));
  for (let w = 0; w < opts.watchers; w++) {
    const ns = w % opts.namespaces;
    perNamespace[ns]++;
    configs[w % opts.clients].watches.push({ url: gws[w % gws.length].url, path: `/api/v1/namespaces/${opts.nsPrefix}${ns}/configmaps?watch=1&resourceVersion=${rv}` });
  }
  const total = Math.floor((opts.rate * opts.durationMs) / 1000);
  const feedConfig = (role: EtcdFeedConfig['role']): EtcdFeedConfig => ({ role, endpoint: etcdEndpoint, prefix: '/registry', total, rate: opts.rate, namespaces: opts.namespaces, nsPrefix: opts.nsPrefix, fromRevision: rv, bus: role === 'probe' ? opts.bus : undefined });
  const clients = configs.map((cfg) => benchChild('watch-client.js', { ORCH_WATCH_CLIENT: JSON.stringify(cfg) }, opts.nodeArgs('watcher')));
  const writer = benchChild('etcd-feed.js', { ORCH_ETCD_FEED: JSON.stringify(feedConfig('write')) }, opts.nodeArgs('writer'));
  const probe = benchChild('etcd-feed.js', { ORCH_ETCD_FEED: JSON.stringify(feedConfig('probe')) });
  const children = [...clients, writer, probe];
  try {
    await Promise.all(children.map((c) => c.next('ready')));
    await sleep(500);
    const etcdWatch = sampleEtcdWatch(etcdEndpoint);
    const t0 = performance.now();
    const from = monotonicMicros();
    const observedBefore = await Promise.all(opts.observe.map((pid) => cpuSeconds(pid)));
    const waited = [...opts.observe, probe.proc.pid!];
    const waitsBefore = await Promise.all(waited.map(runQueueWait));
    writer.proc.send('start');
    const written = await writer.next<EtcdFeedReport>('done');
    // The last events need a moment to arrive (bounded: a lost delivery shows in the count).
    await sleep(2000);
    const seconds = (performance.now() - t0) / 1000;
    const observedAfter = await Promise.all(opts.observe.map((pid) => cpuSeconds(pid)));
    const waitsAfter = await Promise.all(waited.map(runQueueWait));
    const to = monotonicMicros();
    const etcdWatchSummary = await etcdWatch.stop();
    const [onFeed, ...reports] = await Promise.all([probe, ...clients].map((c) => (c.proc.send('stop'), c.next<EtcdFeedReport & WatchClientReport>('done'))));
    const endToEnd: number[] = [];
    const afterFeed: number[] = [];
    const busToWatcher: number[] = [];
    const onBus = onFeed.busTimes ?? [];
    for (const r of reports) {
      r.seqs.forEach((seq, k) => {
        endToEnd.push(r.arrivals[k] - written.times[seq]);
        if (onFeed.times[seq] > 0) afterFeed.push(r.arrivals[k] - onFeed.times[seq]);
        if (onBus[seq] > 0) busToWatcher.push(r.arrivals[k] - onBus[seq]);
      });
    }
    const feed = onFeed.times.flatMap((at, seq) => (at > 0 ? [at - written.times[seq]] : []));
    const bus = onBus.flatMap((at, seq) => (at > 0 ? [at - written.times[seq]] : []));
    const feedToBus = onFeed.times.flatMap((at, seq) => (at > 0 && onBus[seq] > 0 ? [onBus[seq] - at] : []));
    const p = (values: number[]) => {
      values.sort((a, b) => a - b);
      return { p50: percentile(values, 50), p99: percentile(values, 99) };
    };
    const expected = written.times.reduce((sum, _, seq) => sum + perNamespace[seq % opts.namespaces], 0);
    return {
      endToEnd: p(endToEnd),
      afterFeed: p(afterFeed),
      feed: p(feed),
      feedToBus: p(feedToBus),
      busToWatcher: p(busToWatcher),
      delivered: endToEnd.length,
      expected,
      achievedRate: written.rate ?? 0,
      events: written.times.length,
      seconds,
      cpu: {
        watchers: reports.reduce((sum, r) => sum + r.cpuSeconds, 0) / seconds,
        writer: written.cpuSeconds / seconds,
        probe: onFeed.cpuSeconds / seconds,
        observed: observedAfter.map((c, i) => (c - observedBefore[i]) / seconds),
      },
      window: { from, to },
      runQueueWaitMs: waitsAfter.map((w, i) => (w.waitNs - waitsBefore[i].waitNs) / 1e6 / Math.max(1, w.runs - waitsBefore[i].runs)),
      histograms: { feed: delayHistogram(feed), bus: delayHistogram(bus), feedToBus: delayHistogram(feedToBus), busToWatcher: delayHistogram(busToWatcher) },
      etcdWatch: etcdWatchSummary,
    };
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  }
}

/**
 * The notes of one watch-delivery run: its parts' percentiles, their delays by ms range with
 * etcd's watch gauges, the cores each process kept busy and the main threads' run-queue waits
 * (`observe` as watchDelivery got it: the gateways, etcd, nats, redis, then the pump if any).
 */
function deliveryNotes(placement: { name: string; label: string }, delivery: DeliveryResult, opts: { pump: boolean; watchClients: number }): string[] {
  const share = (i: number) => delivery.cpu.observed[i].toFixed(2);
  const ms = (v: { p50: number; p99: number }) => `p50 ${v.p50.toFixed(1)} / p99 ${v.p99.toFixed(1)} ms`;
  const wait = (i: number) => delivery.runQueueWaitMs[i].toFixed(2);
  const h = delivery.histograms;
  return [
    `watch delivery with ${placement.label}: ${delivery.delivered} of ${delivery.expected} expected deliveries arrived, ${delivery.achievedRate.toFixed(0)} events/s; ` +
      `etcd's feed → NATS publication ${ms(delivery.feedToBus)}, NATS publication → watcher ${ms(delivery.busToWatcher)}, after etcd's feed ${ms(delivery.afterFeed)}`,
    `delays by ms range (${placement.name}): write → etcd's feed ${h.feed}; write → NATS publication ${h.bus}; etcd's feed → NATS publication ${h.feedToBus}; NATS publication → watcher ${h.busToWatcher}; etcd while events flowed: ${delivery.etcdWatch}`,
    `CPU while events flowed (${placement.name}; cores busy, of ${cpus().length}): gateways ${[0, 1, 2].map(share).join(' + ')} (${gatewaysCpuMsPerEvent(delivery).toFixed(2)} ms per event), ${opts.pump ? `pump process ${share(6)} (${cpuMsPerEvent(delivery, [6]).toFixed(3)} ms per event), ` : ''}etcd ${share(3)}, nats ${share(4)}, redis ${share(5)}, ${opts.watchClients} watcher processes ${delivery.cpu.watchers.toFixed(2)}, etcd writer ${delivery.cpu.writer.toFixed(2)}, etcd feed probe ${delivery.cpu.probe.toFixed(2)}; load average ${loadavg()[0].toFixed(1)}`,
    `main threads' wait for a core per run (${placement.name}; Linux schedstat, ms): gateways ${[0, 1, 2].map(wait).join(', ')}${opts.pump ? `, pump ${wait(6)}` : ''}, etcd feed probe ${wait(delivery.runQueueWaitMs.length - 1)}`,
  ];
}

/** CPU of the three gateways together per event written (ms). */
const gatewaysCpuMsPerEvent = (d: DeliveryResult) => cpuMsPerEvent(d, [0, 1, 2]);

/** CPU of the observed processes at these indexes together per event written (ms). */
const cpuMsPerEvent = (d: DeliveryResult, observed: number[]) => (observed.reduce((sum, i) => sum + d.cpu.observed[i], 0) * d.seconds * 1000) / Math.max(1, d.events);

/**
 * The rows of the watch delivery with h2 watchers (one session per watcher process and gateway)
 * beside HTTP/1.1's, both with the pump process, same run; no figure where h2 is not served.
 */
function h2DeliveryRows(watchers: number, h2: DeliveryResult | undefined, http1: DeliveryResult | undefined, notServed: string | undefined): Row[] {
  const vs = { baselineName: `HTTP/1.1 watchers, same run${notServed ? ` (h2 not served: ${notServed})` : ''}`, unit: 'ms', higherIsBetter: false };
  const label = `${watchers} watchers over HTTP/2, one session per watcher process and gateway as client-go, 3 gateways + pump process`;
  return [
    { metric: `watch delivery p50 after etcd's change feed (${label})`, orch: h2?.afterFeed.p50 ?? NaN, baseline: http1?.afterFeed.p50 ?? NaN, ...vs },
    { metric: `watch delivery p99 after etcd's change feed (${label})`, orch: h2?.afterFeed.p99 ?? NaN, baseline: http1?.afterFeed.p99 ?? NaN, ...vs },
    { metric: `gateways' CPU per event (all 3, ${label})`, orch: h2 ? gatewaysCpuMsPerEvent(h2) : NaN, baseline: http1 ? gatewaysCpuMsPerEvent(http1) : NaN, ...vs },
  ];
}

/** Baseline of watch delivery: raw NATS, the same receivers and rate, publish → receive. */
async function natsDelivery(url: string, opts: { watchers: number; namespaces: number; rate: number; durationMs: number }): Promise<{ p50: number; p99: number }> {
  const publisher = await connect({ servers: url });
  // One connection per gateway's worth of watchers, one subscription per watcher.
  const conns = await Promise.all([0, 1, 2].map(() => connect({ servers: url })));
  const latencies: number[] = [];
  const sent = new Map<number, number>();
  for (let w = 0; w < opts.watchers; w++) {
    conns[w % 3].subscribe(`bench.ns.${w % opts.namespaces}`, {
      callback: (_err, msg) => {
        const at = sent.get(Number(new TextDecoder().decode(msg.data.subarray(0, 12)).trim()));
        if (at) latencies.push(performance.now() - at);
      },
    });
  }
  await Promise.all(conns.map((c) => c.flush()));
  const payload = Buffer.from(configMap('wd-0', 'e-000000000000'));
  const total = Math.floor((opts.rate * opts.durationMs) / 1000);
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / opts.rate - performance.now();
    if (wait > 1) await sleep(wait);
    const body = Buffer.concat([Buffer.from(String(i).padEnd(12)), payload]);
    sent.set(i, performance.now());
    publisher.publish(`bench.ns.${i % opts.namespaces}`, body);
  }
  await publisher.flush();
  await sleep(1000);
  await Promise.all([publisher, ...conns].map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

interface CreateRun {
  load: LoadResult;
  /** CPU (user + system) each process spent per create during the load. */
  cpuMsPerCreate: { gateways: number[]; gatewayMainThreads: number[]; etcd: number; nats: number; redis: number; client: number };
  /** Cores busy in all (gateways, engines, bench client) during the load. */
  cores: number;
  load1: number;
  profile: string[];
  /** Shares of the gateways' busy time by kind of work (CREATE_WORK). */
  work: string[];
}

/** The kinds of work of the gateways and the pump while watch events flow (inclusive shares of their busy time). */
const WATCH_WORK: Record<string, RegExp> = {
  'etcd client (gRPC: the feed, leases)': /@grpc\/grpc-js/,
  'NATS client': /node_modules\/nats\//,
  'bus batch encode/decode and cache apply': /nats-bus\.js|watch\/src\/bus\.js|watch-cache\.js/,
  'pump publish': /watch\/src\/pump\.js/,
  'Redis history': /redis-history\.js|node_modules\/ioredis\//,
  'watch serving (events to watchers, socket writes)': /pipeline\/watch\.js|registry\/watches\.js/,
  'garbage collector': /^\(garbage collector\)/,
};

/** Creates before the measured ones, through the same gateways. */
const CREATE_WARM_UP_MS = 3000;

/** The kinds of work of a gateway serving creates (inclusive shares of its busy time). */
const CREATE_WORK: Record<string, RegExp> = {
  'request pipeline (runPipeline)': /^runPipeline .*pipeline\/pipeline\.js/,
  'watch feed in (NATS receive and decode, store feed, cache apply)': /nats-bus\.js|watch-cache\.js|node_modules\/nats\/|^onResponse .*storage\/src\/etcd\.js/,
  'pump out (publish, Redis append)': /watch\/src\/pump\.js|redis-history\.js|node_modules\/ioredis\//,
  'etcd client (gRPC)': /@grpc\/grpc-js/,
  'garbage collector': /^\(garbage collector\)/,
};

/**
 * Creates of ConfigMaps for opts.durationMs through `count` fresh gateways (etcd, NATS, Redis;
 * the clients spread evenly), with each process's CPU per create and the gateways' profile of
 * the load's window.
 */
async function createRun(dir: string, engines: Engines, pkiDir: string, count: number, opts: ScaleBenchOptions, children: ChildProcess[]): Promise<CreateRun> {
  const profDir = join(dir, 'prof');
  const gws = await startReplicas(dir, engines, count, pkiDir, () => ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
  children.push(...gws.map((g) => g.process));
  const targets = gws.map((g) => target(g.url, g.creds, Math.ceil(opts.concurrency / count)));
  // 201 the first time, 409 after: either way the namespace exists.
  await call(targets[0], 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }));
  const pids = [...gws.map((g) => g.process.pid!), engines.etcd.pid, engines.nats.pid, engines.redis.pid];
  const create = (name: string) => async (i: number) => (await call(targets[i % count], 'POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', `${count}-${name}-${i}`))).status === 201;
  // Fresh processes compile their hot code first (V8's compiler threads): not part of a create's cost.
  await runLoad(opts.concurrency, CREATE_WARM_UP_MS, create('warm'));
  const mainThreads = () => Promise.all(gws.map((g) => cpuSeconds(g.process.pid!, true)));
  const [cpuBefore, mainBefore] = await Promise.all([Promise.all(pids.map((pid) => cpuSeconds(pid))), mainThreads()]);
  const selfBefore = process.cpuUsage();
  const from = monotonicMicros();
  const t0 = performance.now();
  const load = await runLoad(opts.concurrency, opts.durationMs, create('run'));
  const wall = (performance.now() - t0) / 1000;
  const to = monotonicMicros();
  const [cpuAfter, mainAfter] = await Promise.all([Promise.all(pids.map((pid) => cpuSeconds(pid))), mainThreads()]);
  const self = process.cpuUsage(selfBefore);
  const load1 = loadavg()[0];
  const used = cpuAfter.map((c, i) => c - cpuBefore[i]);
  const client = (self.user + self.system) / 1e6;
  const perCreate = (seconds: number) => (1000 * seconds) / Math.max(1, load.ops);
  await stopGateways(gws);
  return {
    load,
    cpuMsPerCreate: { gateways: used.slice(0, count).map(perCreate), gatewayMainThreads: mainAfter.map((c, i) => perCreate(c - mainBefore[i])), etcd: perCreate(used[count]), nats: perCreate(used[count + 1]), redis: perCreate(used[count + 2]), client: perCreate(client) },
    cores: (used.reduce((a, b) => a + b, 0) + client) / wall,
    load1,
    profile: await profileSummary(profDir, { from, to }, 16, true),
    work: await inclusiveShares(profDir, CREATE_WORK, { from, to }, true),
  };
}

export const SCALE_PHASES = ['creates', 'watch', 'list', 'rss'] as const;
export type ScalePhase = (typeof SCALE_PHASES)[number];

/** Stops gateways with SIGINT (a clean exit writes their CPU profiles) and waits for them. */
async function stopGateways(gws: BenchGateway[]): Promise<void> {
  for (const g of gws) g.process.kill('SIGINT');
  await Promise.all(gws.map((g) => new Promise((r) => (g.process.exitCode !== null ? r(null) : g.process.once('exit', r)))));
}

/** What the phases of {@link scaleBench} share: the engines, a store straight on etcd, the cluster PKI, the processes to kill, and the rows and notes so far. */
interface ScaleRun {
  opts: ScaleBenchOptions;
  dir: string;
  engines: Engines;
  pkiDir: string;
  /** EtcdStore on the bench's etcd, no gateway in between. */
  direct: Awaited<ReturnType<typeof openEtcdStore>>;
  children: ChildProcess[];
  rows: Row[];
  notes: string[];
}

/**
 * The scale-out benchmarks (issue: creates through 3 vs 1 gateways, watch delivery, list from
 * cache, RSS), each phase with its own gateways; `opts.phases` picks some.
 */
export async function scaleBench(opts: ScaleBenchOptions): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-scale-'));
  const children: ChildProcess[] = [];
  const [etcd, nats, redis] = await Promise.all([startEtcd(), startNats(), startRedis()]);
  const pkiDir = join(dir, 'pki');
  const direct = await openEtcdStore({ endpoints: [etcd.endpoint], prefix: '/registry' });
  const run: ScaleRun = { opts, dir, engines: { etcd, nats, redis }, pkiDir, direct, children, rows, notes };
  try {
    if (opts.phases.has('creates')) await scaleCreates(run);
    if (opts.phases.has('watch')) await scaleWatchDelivery(run);
    if (opts.phases.has('list')) await scaleList(run);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await direct.close();
    await Promise.all([etcd.stop(), nats.stop(), redis.stop()]);
  }

  try {
    if (opts.phases.has('rss')) await scaleRss(run);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
  return { rows, notes };
}

async function scaleCreates({ opts, dir, engines, pkiDir, direct, children, rows, notes }: ScaleRun): Promise<void> {
  // --- creates/s through one gateway, then through three (same etcd, same flags), each with
  // the CPU each process spent per create and the gateways' profile during the creates
  const run = (count: number, name: string) => createRun(join(dir, `creates-${name}`), engines, pkiDir, count, opts, children);
  const single = await run(1, 'one');
  const triple = await run(3, 'three');
  rows.push({ metric: `creates/s through 3 gateways (${opts.concurrency} clients)`, orch: triple.load.opsPerSecond, baseline: single.load.opsPerSecond, baselineName: '1 gateway, same etcd', unit: '/s', higherIsBetter: true });
  const gatewayMs = (r: CreateRun) => r.cpuMsPerCreate.gateways.reduce((a, b) => a + b, 0);
  rows.push({ metric: 'gateway CPU per create, 3 gateways (all of them)', orch: gatewayMs(triple), baseline: gatewayMs(single), baselineName: '1 gateway', unit: 'ms', higherIsBetter: false });
  // The ceiling below them: the same number of concurrent creates straight into etcd.
  const rawEtcd = await runLoad(opts.concurrency, opts.durationMs, async (i) => {
    await direct.create(`/registry/core/configmaps/raw/r-${i}`, configMap('raw', `r-${i}`));
    return true;
  });
  rows.push({ metric: 'creates/s through 3 gateways vs raw etcd', orch: triple.load.opsPerSecond, baseline: rawEtcd.opsPerSecond, baselineName: `EtcdStore.create, ${opts.concurrency} concurrent, no gateway`, unit: '/s', higherIsBetter: true });
  for (const [label, r] of [['1 gateway', single], ['3 gateways', triple]] as const) {
    const c = r.cpuMsPerCreate;
    const f = (v: number) => v.toFixed(2);
    notes.push(
      `creates through ${label}: ${r.load.opsPerSecond.toFixed(0)}/s, p50 ${r.load.p50Ms.toFixed(1)} ms, p99 ${r.load.p99Ms.toFixed(1)} ms; CPU ms per create: gateways ${c.gateways.map(f).join(' + ')} (main threads ${c.gatewayMainThreads.map(f).join(' + ')}), etcd ${f(c.etcd)}, nats ${f(c.nats)}, redis ${f(c.redis)}, bench client ${f(c.client)}; cores busy ${r.cores.toFixed(2)} of ${cpus().length}, load average ${r.load1.toFixed(1)}`,
    );
    notes.push(`gateway CPU profile of the creates through ${label} (the load's window), inclusive shares of the busy time: ${r.work.join(', ')}; top frames by self time:\n    ${r.profile.join('\n    ')}`);
  }
}

async function scaleWatchDelivery({ opts, dir, engines, pkiDir, direct, children, rows, notes }: ScaleRun): Promise<void> {
  const { etcd, nats, redis } = engines;
  // --- watch delivery to W watchers over three gateways at R events/s, with the pump in a
  // process of its own (the HA topology) and inside gateway-0 (same run); baseline raw NATS
  const loadBefore = loadavg()[0];
  const subject = async () => watchChannels(await clusterIdentity(direct)).subject;
  const placements = [
    { name: 'process', label: "the pump in its own process (gateways --watch-pump=false)" },
    { name: 'gateway', label: 'the pump inside gateway-0 (leader-elected among the gateways)' },
  ].filter((p) => p.name === 'process' || opts.pumpInGateway);
  const results = new Map<string, DeliveryResult>();
  const notServed = new Map<WatchProtocol, string>();
  for (const placement of placements) {
    const own = placement.name === 'process';
    // HTTP/1.1 with each placement; h2 with the pump process (the HA topology), on the same gateways.
    const protocols = opts.watchProtocols.filter((p) => p === 'http/1.1' || own);
    if (protocols.length === 0) continue;
    const profDir = join(dir, `prof-watch-${placement.name}`);
    const prof = (name: string) => (opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] : []);
    const gws = await startReplicas(join(dir, `watch-${placement.name}`), engines, 3, pkiDir, () => prof('gateways'), own ? ['--watch-pump=false'] : []);
    children.push(...gws.map((g) => g.process));
    const pump = own ? await startBenchWatchPump(replicaArgs(engines, pkiDir), prof('pump')) : undefined;
    if (pump) children.push(pump);
    const pids = [...gws.map((g) => g.process.pid!), etcd.pid, nats.pid, redis.pid, ...(pump ? [pump.pid!] : [])];
    const runs: [WatchProtocol, DeliveryResult][] = [];
    for (const protocol of protocols) {
      const why = await whyNotServed(gws[0].url, gws[0].creds, protocol);
      if (why) {
        notServed.set(protocol, why);
        notes.push(`watch delivery over ${protocol} with ${placement.label}: not served by these gateways (${why})`);
        continue;
      }
      const delivery = await watchDelivery(gws, etcd.endpoint, {
        watchers: opts.watchers,
        namespaces: 100,
        nsPrefix: `wd-${placement.name}-${protocol === 'h2' ? 'h2-' : ''}`,
        rate: opts.eventsPerSecond,
        durationMs: opts.durationMs,
        clients: opts.watchClients,
        protocol,
        nodeArgs: (role) => prof(role),
        observe: pids,
        bus: { url: nats.url, subject: await subject() },
      });
      results.set(`${placement.name} ${protocol}`, delivery);
      runs.push([protocol, delivery]);
      notes.push(...deliveryNotes({ name: `${placement.name}, ${protocol}`, label: `${placement.label}, watchers over ${protocol}` }, delivery, { pump: pump !== undefined, watchClients: opts.watchClients }));
    }
    pump?.kill('SIGINT');
    await stopGateways(gws);
    if (pump && pump.exitCode === null) await new Promise((r) => pump.once('exit', r));
    for (const [protocol, delivery] of opts.profile ? runs : []) {
      for (const who of ['gateways', ...(own ? ['pump'] : []), 'watcher']) {
        const work = who === 'watcher' ? '' : ` inclusive shares of the busy time: ${(await inclusiveShares(join(profDir, who), WATCH_WORK, delivery.window)).join(', ')};`;
        notes.push(`${who} CPU profile while events flowed (${placement.name}, ${protocol}),${work} top frames by self time:\n    ${(await profileSummary(join(profDir, who), delivery.window)).join('\n    ')}`);
      }
    }
  }
  const raw = await natsDelivery(nats.url, { watchers: opts.watchers, namespaces: 100, rate: opts.eventsPerSecond, durationMs: opts.durationMs });
  const own = results.get('process http/1.1');
  const inGateway = results.get('gateway http/1.1');
  if (own) {
    // The configured rate names the row (the achieved one is in the notes): `--compare` pairs rows by name.
    const rate = opts.eventsPerSecond;
    rows.push({ metric: `watch delivery p50 after etcd's change feed (${opts.watchers} watchers, 3 gateways + pump process, ${rate} events/s)`, orch: own.afterFeed.p50, baseline: raw.p50, baselineName: 'raw NATS publish→receive', unit: 'ms', higherIsBetter: false });
    rows.push({ metric: `watch delivery p99 after etcd's change feed (${opts.watchers} watchers, 3 gateways + pump process, ${rate} events/s)`, orch: own.afterFeed.p99, baseline: raw.p99, baselineName: 'raw NATS publish→receive', unit: 'ms', higherIsBetter: false });
    if (inGateway) {
      rows.push({ metric: "watch delivery p50 after etcd's change feed, pump in its own process", orch: own.afterFeed.p50, baseline: inGateway.afterFeed.p50, baselineName: 'pump inside gateway-0, same run', unit: 'ms', higherIsBetter: false });
      rows.push({ metric: "watch delivery p99 after etcd's change feed, pump in its own process", orch: own.afterFeed.p99, baseline: inGateway.afterFeed.p99, baselineName: 'pump inside gateway-0, same run', unit: 'ms', higherIsBetter: false });
    }
    rows.push({ metric: 'watch delivery p50 end to end (write sent → watcher), pump process', orch: own.endToEnd.p50, baseline: own.feed.p50, baselineName: "write sent → etcd's change feed (a direct etcd watch)", unit: 'ms', higherIsBetter: false });
    rows.push({ metric: 'watch delivery p99 end to end (write sent → watcher), pump process', orch: own.endToEnd.p99, baseline: own.feed.p99, baselineName: "write sent → etcd's change feed (a direct etcd watch)", unit: 'ms', higherIsBetter: false });
  }
  if (opts.watchProtocols.includes('h2')) rows.push(...h2DeliveryRows(opts.watchers, results.get('process h2'), own, notServed.get('h2')));
  notes.push(`load average before the watch phase ${loadBefore.toFixed(1)}, after ${loadavg()[0].toFixed(1)}`);
}

async function scaleList({ opts, dir, engines, pkiDir, children, rows }: ScaleRun): Promise<void> {
  const { etcd, nats, redis } = engines;
  // --- a list of N objects from the watch cache vs from etcd (same data, same gateway build)
  const client = new Etcd3({ hosts: etcd.endpoint });
  const ops = Array.from({ length: opts.listSize }, (_, i) => ({
    key: `/registry/registry/core/configmaps/lists/l-${String(i).padStart(6, '0')}`,
    value: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `l-${String(i).padStart(6, '0')}`, namespace: 'lists', uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, creationTimestamp: '2026-01-01T00:00:00Z' }, data: { key: 'value' } }),
  }));
  for (let i = 0; i < ops.length; i += 128) {
    await client.kv.txn({ compare: [], success: ops.slice(i, i + 128).map((o) => ({ request_put: { key: Buffer.from(o.key), value: Buffer.from(o.value) } })) });
  }
  client.close();
  const cached = await startBenchGateway(join(dir, 'cached'), ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`, `--pki-dir=${pkiDir}`]);
  const uncached = await startBenchGateway(join(dir, 'uncached'), ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`, `--pki-dir=${pkiDir}`, '--feature-gates=ConsistentListFromCache=false']);
  children.push(cached.process, uncached.process);
  const listPath = '/api/v1/namespaces/lists/configmaps';
  const tc = target(cached.url, cached.creds, 1);
  const tu = target(uncached.url, uncached.creds, 1);
  const count = JSON.parse((await call(tc, 'GET', listPath)).body).items.length;
  if (count !== opts.listSize) throw new Error(`list from the cache has ${count} items, want ${opts.listSize}`);
  const fromCache = await runLoad(1, opts.durationMs, async () => (await call(tc, 'GET', listPath)).status === 200, 20);
  const fromEtcd = await runLoad(1, opts.durationMs, async () => (await call(tu, 'GET', listPath)).status === 200, 20);
  rows.push({ metric: `list ${opts.listSize} ConfigMaps p50, from the watch cache`, orch: fromCache.p50Ms, baseline: fromEtcd.p50Ms, baselineName: 'from etcd (ConsistentListFromCache=false)', unit: 'ms', higherIsBetter: false });
  // The same list in pages of 500 (limit and continue, as informers list), first page to last.
  const walk = async (t: ReturnType<typeof target>) => {
    let token = '';
    do {
      const page = await call(t, 'GET', `${listPath}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      if (page.status !== 200) return false;
      token = (JSON.parse(page.body) as { metadata: { continue?: string } }).metadata.continue ?? '';
    } while (token);
    return true;
  };
  const pagedCache = await runLoad(1, opts.durationMs, () => walk(tc), 20);
  const pagedEtcd = await runLoad(1, opts.durationMs, () => walk(tu), 20);
  rows.push({ metric: `list ${opts.listSize} ConfigMaps in pages of 500 (limit/continue) p50, from the watch cache`, orch: pagedCache.p50Ms, baseline: pagedEtcd.p50Ms, baselineName: 'from etcd (ConsistentListFromCache=false)', unit: 'ms', higherIsBetter: false });
  cached.process.kill('SIGKILL');
  uncached.process.kill('SIGKILL');
}

/**
 * RSS of the embedded default holding N small objects created within the history retention,
 * watched as a cluster watches them (a controller's informer of every ConfigMap, a
 * label-selected one): what the cache, the history and watch serving keep per object. The
 * retention is 10 min, so that every create is in the history even on a loaded machine
 * (100,000 creates take 2 to 5 min here; the memory history is bounded by age only).
 */
async function scaleRss({ opts, dir, children, rows, notes }: ScaleRun): Promise<void> {
  const gw = await startBenchGateway(join(dir, 'rss'), ['--watch-history-retention=10m']);
  children.push(gw.process);
  const t = target(gw.url, gw.creds, opts.concurrency);
  await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rss' } }));
  const rv = JSON.parse((await call(t, 'GET', '/api/v1/configmaps?limit=1')).body).metadata.resourceVersion;
  const watches = [`/api/v1/configmaps?watch=1&resourceVersion=${rv}`, `/api/v1/namespaces/rss/configmaps?watch=1&resourceVersion=${rv}&labelSelector=app%3Dnone`];
  const watcher = benchChild('watch-client.js', { ORCH_WATCH_CLIENT: JSON.stringify({ watches: watches.map((path) => ({ url: gw.url, path })), ...gw.creds } satisfies WatchClientConfig) });
  children.push(watcher.proc);
  await watcher.next('ready');
  const cpuBefore = await cpuSeconds(gw.process.pid!);
  const made = await runLoad(opts.concurrency, 600_000, async (i) => (await call(t, 'POST', '/api/v1/namespaces/rss/configmaps', configMap('rss', `r-${i}`, { seq: String(i) }))).status === 201, opts.rssObjects);
  if (made.ops !== opts.rssObjects) throw new Error(`created ${made.ops} of ${opts.rssObjects} objects`);
  const cpuPerCreate = ((await cpuSeconds(gw.process.pid!)) - cpuBefore) / made.ops;
  // Right after the storm RSS still holds the V8 heap's room for it (new space, old space
  // not yet collected); settled: the watchers connected, no writes, for RSS_SETTLE_MS.
  await sleep(2000);
  const afterStorm = await rssMiB(gw.process.pid!);
  await sleep(RSS_SETTLE_MS - 2000);
  const settled = await rssMiB(gw.process.pid!);
  const peak = await peakRssMiB(gw.process.pid!);
  watcher.proc.send('stop');
  const delivered = (await watcher.next<WatchClientReport>('done')).seqs.length;
  const mapRss = await plainMapRss(opts.rssObjects);
  const what = `gateway RSS, ${opts.rssObjects} small objects + the history of their creates, 2 watchers (SQLite, memory history)`;
  const row = (when: string, orch: number): Row => ({ metric: `${what}: ${when}`, orch, baseline: mapRss, baselineName: 'the same objects as JSON in a plain Map', unit: 'MiB', higherIsBetter: false });
  rows.push(row(`settled (${RSS_SETTLE_MS / 1000} s after the creates; the goal)`, settled), row('2 s after the creates', afterStorm), row('peak (VmHWM)', peak));
  const within = made.seconds + RSS_SETTLE_MS / 1000 < 600 ? 'all in the history (10 min retention)' : 'LONGER than the 10 min history retention: the oldest events had left the history';
  notes.push(`${opts.rssObjects} creates took ${made.seconds.toFixed(0)} s (${made.opsPerSecond.toFixed(0)}/s, gateway CPU ${(cpuPerCreate * 1000).toFixed(2)} ms per create), ${within}; the watcher of every ConfigMap received ${delivered} of ${opts.rssObjects} events`);
}

/**
 * How long the rss phase waits after the creates for its settled reading. V8 collects the old
 * space after a burst through its memory reducer, which waits for an idle mutator; a gateway
 * always runs some timers, so the reducer's watchdog (100 s after the last full GC) is what
 * starts it (a GC log of the gateway after 100,000 creates: the first full GC 97 s after them).
 */
const RSS_SETTLE_MS = 120_000;

/** The most RSS a process has had (Linux VmHWM). */
async function peakRssMiB(pid: number): Promise<number> {
  const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** RSS of a bare node process holding n ConfigMaps' JSON in a Map (the memory baseline). */
async function plainMapRss(n: number): Promise<number> {
  const code = `const m=new Map();for(let i=0;i<${n};i++){const name='r-'+i;m.set('/registry/core/configmaps/rss/'+name,JSON.stringify({apiVersion:'v1',kind:'ConfigMap',metadata:{name,namespace:'rss',uid:require('crypto').randomUUID(),creationTimestamp:new Date().toISOString()},data:{key:'value'}}))}global.gc&&global.gc();setTimeout(()=>{console.log(process.memoryUsage().rss);process.exit(0)},500)`;
  const child = spawn(process.execPath, ['--expose-gc', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => child.once('exit', r));
  return Number(out.trim()) / 1024 / 1024;
}
