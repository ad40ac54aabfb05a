import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { connect } from 'nats';
import { openEtcdStore, type Store } from '@orch/storage';
import { startEtcd, startNats, startRedis, type EtcdServer, type NatsServer, type RedisServer } from '@orch/testing';
import { startBenchGateway, type BenchGateway } from './gateway-process';
import { call, percentile, rssMiB, runLoad, target } from './load';
import type { Row } from './report';

export interface ScaleBenchOptions {
  durationMs: number;
  concurrency: number;
  watchers: number;
  eventsPerSecond: number;
  listSize: number;
  rssObjects: number;
}

const configMap = (ns: string, name: string, data = 'value') => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { key: data } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Engines {
  etcd: EtcdServer;
  nats: NatsServer;
  redis: RedisServer;
}

/** Three gateways (etcd, NATS, Redis) sharing one PKI; `nodeArgs` go to every gateway's node. */
async function startReplicas(dir: string, engines: Engines, count: number, extra: string[] = [], nodeArgs: (i: number) => string[] = () => []): Promise<BenchGateway[]> {
  const args = ['--storage-backend=etcd', `--etcd-servers=${engines.etcd.endpoint}`, `--nats-url=${engines.nats.url}`, `--redis-url=${engines.redis.url}`, `--pki-dir=${join(dir, 'pki')}`, ...extra];
  const first = await startBenchGateway(join(dir, 'gw-0'), args, nodeArgs(0));
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => startBenchGateway(join(dir, `gw-${i + 1}`), args, nodeArgs(i + 1))));
  return [first, ...rest];
}

/** CPU seconds (user + system) a process has used so far (Linux /proc). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

/**
 * Watch delivery latency: `watchers` watch connections spread round-robin over the gateways,
 * one namespace each out of `namespaces`; objects written straight into etcd at `rate`/s spread
 * over the namespaces (so the gateways' CPU goes to delivery, not to serving creates); latency =
 * etcd write sent → event received, per watcher: the etcd commit, the pump, NATS, the replica's
 * cache and the HTTPS stream.
 */
async function watchDelivery(gws: BenchGateway[], store: Store, opts: { watchers: number; namespaces: number; rate: number; durationMs: number }): Promise<{ p50: number; p99: number; delivered: number; expected: number; achievedRate: number }> {
  const admin = target(gws[0].url, gws[0].creds, 64);
  for (let n = 0; n < opts.namespaces; n++) await call(admin, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `wd-${n}` } }));
  const rv = JSON.parse((await call(admin, 'GET', '/api/v1/configmaps?limit=1')).body).metadata.resourceVersion;
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let delivered = 0;
  const reqs: ClientRequest[] = [];
  const agents = gws.map((g) => new https.Agent({ keepAlive: true, maxSockets: opts.watchers, ca: g.creds.ca, cert: g.creds.cert, key: g.creds.key }));
  const perNamespace = new Array<number>(opts.namespaces).fill(0);
  await Promise.all(
    Array.from({ length: opts.watchers }, (_, w) => {
      const g = w % gws.length;
      const ns = w % opts.namespaces;
      perNamespace[ns]++;
      return new Promise<void>((resolve, reject) => {
        const req = https.get(`${gws[g].url}/api/v1/namespaces/wd-${ns}/configmaps?watch=1&resourceVersion=${rv}`, { agent: agents[g] }, (res) => {
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            const now = performance.now();
            buf += d;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              const name = /"name":"([^"]+)"/.exec(line)?.[1];
              const at = name && sent.get(name);
              if (at) {
                latencies.push(now - at);
                delivered++;
              }
            }
          });
          resolve();
        });
        req.on('error', reject);
        reqs.push(req);
      });
    }),
  );
  await sleep(500);
  const total = Math.floor((opts.rate * opts.durationMs) / 1000);
  const started = performance.now();
  let expected = 0;
  const inflight = new Set<Promise<unknown>>();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / opts.rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const ns = i % opts.namespaces;
    const name = `e-${i}`;
    expected += perNamespace[ns];
    sent.set(name, performance.now());
    const p = store.create(`/registry/core/configmaps/wd-${ns}/${name}`, configMap(`wd-${ns}`, name)).finally(() => inflight.delete(p));
    inflight.add(p);
    if (inflight.size >= 256) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  const achievedRate = total / ((performance.now() - started) / 1000);
  const deadline = Date.now() + 30_000;
  while (delivered < expected && Date.now() < deadline) await sleep(50);
  for (const r of reqs) r.destroy();
  for (const a of agents) a.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), delivered, expected, achievedRate };
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

/** Top functions by self time in the .cpuprofile files of a directory, as shares of the busy (non-idle) time. */
async function profileSummary(dir: string, top = 12): Promise<string[]> {
  const self = new Map<string, number>();
  let total = 0;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(await readFile(join(dir, f), 'utf8')) as { nodes: { id: number; hitCount?: number; callFrame: { functionName: string; url: string; lineNumber: number } }[] };
    for (const n of prof.nodes) {
      const hits = n.hitCount ?? 0;
      if (n.callFrame.functionName === '(idle)') continue;
      total += hits;
      const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
      const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`.trim();
      self.set(key, (self.get(key) ?? 0) + hits);
    }
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${((100 * v) / Math.max(1, total)).toFixed(1)}% ${k}`);
}

/** The scale-out benchmarks (issue: watch delivery, creates through 3 vs 1 gateways, list from cache, RSS). */
export async function scaleBench(opts: ScaleBenchOptions): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-scale-'));
  const children: ChildProcess[] = [];
  const [etcd, nats, redis] = await Promise.all([startEtcd(), startNats(), startRedis()]);
  const engines = { etcd, nats, redis };
  try {
    // --- 1. creates/s through one gateway, then through three (same etcd), with CPU shares and a profile
    const one = await startBenchGateway(join(dir, 'one'), ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`]);
    children.push(one.process);
    const t1 = target(one.url, one.creds, opts.concurrency);
    await call(t1, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }));
    const single = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(t1, 'POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', `one-${i}`))).status === 201);
    one.process.kill('SIGKILL');

    const profDir = join(dir, 'prof');
    const gws = await startReplicas(join(dir, 'ha'), engines, 3, [], () => ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    children.push(...gws.map((g) => g.process));
    const targets = gws.map((g) => target(g.url, g.creds, Math.ceil(opts.concurrency / 3)));
    const pids = { gateways: gws.map((g) => g.process.pid!), etcd: etcd.pid, nats: nats.pid, redis: redis.pid };
    const cpuBefore = await Promise.all([...pids.gateways, pids.etcd, pids.nats, pids.redis].map(cpuSeconds));
    const selfBefore = process.cpuUsage();
    const t0 = performance.now();
    const triple = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(targets[i % 3], 'POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', `three-${i}`))).status === 201);
    const wall = (performance.now() - t0) / 1000;
    const cpuAfter = await Promise.all([...pids.gateways, pids.etcd, pids.nats, pids.redis].map(cpuSeconds));
    const self = process.cpuUsage(selfBefore);
    const share = (i: number) => (cpuAfter[i] - cpuBefore[i]) / wall;
    rows.push({ metric: `creates/s through 3 gateways (${opts.concurrency} clients)`, orch: triple.opsPerSecond, baseline: single.opsPerSecond, baselineName: '1 gateway, same etcd', unit: '/s', higherIsBetter: true });
    // The ceiling below them: the same number of concurrent creates straight into etcd.
    const direct = await openEtcdStore({ endpoints: [etcd.endpoint], prefix: '/registry' });
    const rawEtcd = await runLoad(opts.concurrency, opts.durationMs, async (i) => {
      await direct.create(`/registry/core/configmaps/raw/r-${i}`, configMap('raw', `r-${i}`));
      return true;
    });
    rows.push({ metric: 'creates/s through 3 gateways vs raw etcd', orch: triple.opsPerSecond, baseline: rawEtcd.opsPerSecond, baselineName: `EtcdStore.create, ${opts.concurrency} concurrent, no gateway`, unit: '/s', higherIsBetter: true });
    notes.push(
      `CPU during the 3-gateway create run (cores busy, of 2): gateways ${[0, 1, 2].map(share).map((c) => c.toFixed(2)).join(' + ')}, etcd ${share(3).toFixed(2)}, nats ${share(4).toFixed(2)}, redis ${share(5).toFixed(2)}, bench client ${((self.user + self.system) / 1e6 / wall).toFixed(2)}`,
    );

    // --- 2. watch delivery to W watchers over three gateways at R events/s; baseline raw NATS
    const delivery = await watchDelivery(gws, direct, { watchers: opts.watchers, namespaces: 100, rate: opts.eventsPerSecond, durationMs: opts.durationMs });
    const raw = await natsDelivery(nats.url, { watchers: opts.watchers, namespaces: 100, rate: opts.eventsPerSecond, durationMs: opts.durationMs });
    rows.push({ metric: `watch delivery p50 (${opts.watchers} watchers, 3 gateways, ${Math.round(delivery.achievedRate)} events/s)`, orch: delivery.p50, baseline: raw.p50, baselineName: 'raw NATS publish→receive', unit: 'ms', higherIsBetter: false });
    rows.push({ metric: `watch delivery p99 (${opts.watchers} watchers, 3 gateways)`, orch: delivery.p99, baseline: raw.p99, baselineName: 'raw NATS publish→receive', unit: 'ms', higherIsBetter: false });
    notes.push(`watch delivery: ${delivery.delivered} of ${delivery.expected} expected deliveries arrived; target rate ${opts.eventsPerSecond}/s, achieved ${delivery.achievedRate.toFixed(0)}/s`);
    // Stop the replicas so their CPU profiles are written, then summarize them.
    for (const g of gws) g.process.kill('SIGINT');
    await Promise.all(gws.map((g) => new Promise((r) => (g.process.exitCode !== null ? r(null) : g.process.once('exit', r)))));
    notes.push(`gateway CPU profile (self time of the busy time, 3 replicas, start-up, creates and watch delivery):\n    ${(await profileSummary(profDir)).join('\n    ')}`);

    await direct.close();

    // --- 3. a list of N objects from the watch cache vs from etcd (same data, same gateway build)
    const client = new Etcd3({ hosts: etcd.endpoint });
    const ops = Array.from({ length: opts.listSize }, (_, i) => ({
      key: `/registry/registry/core/configmaps/lists/l-${String(i).padStart(6, '0')}`,
      value: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `l-${String(i).padStart(6, '0')}`, namespace: 'lists', uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, creationTimestamp: '2026-01-01T00:00:00Z' }, data: { key: 'value' } }),
    }));
    for (let i = 0; i < ops.length; i += 128) {
      await client.kv.txn({ compare: [], success: ops.slice(i, i + 128).map((o) => ({ request_put: { key: Buffer.from(o.key), value: Buffer.from(o.value) } })) });
    }
    client.close();
    const cached = await startBenchGateway(join(dir, 'cached'), ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`, `--pki-dir=${join(dir, 'ha', 'pki')}`]);
    const uncached = await startBenchGateway(join(dir, 'uncached'), ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`, `--pki-dir=${join(dir, 'ha', 'pki')}`, '--feature-gates=ConsistentListFromCache=false']);
    children.push(cached.process, uncached.process);
    const listPath = '/api/v1/namespaces/lists/configmaps';
    const tc = target(cached.url, cached.creds, 1);
    const tu = target(uncached.url, uncached.creds, 1);
    const count = JSON.parse((await call(tc, 'GET', listPath)).body).items.length;
    if (count !== opts.listSize) throw new Error(`list from the cache has ${count} items, want ${opts.listSize}`);
    const fromCache = await runLoad(1, opts.durationMs, async () => (await call(tc, 'GET', listPath)).status === 200, 20);
    const fromEtcd = await runLoad(1, opts.durationMs, async () => (await call(tu, 'GET', listPath)).status === 200, 20);
    rows.push({ metric: `list ${opts.listSize} ConfigMaps p50, from the watch cache`, orch: fromCache.p50Ms, baseline: fromEtcd.p50Ms, baselineName: 'from etcd (ConsistentListFromCache=false)', unit: 'ms', higherIsBetter: false });
    cached.process.kill('SIGKILL');
    uncached.process.kill('SIGKILL');
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all([etcd.stop(), nats.stop(), redis.stop()]);
  }

  // --- 4. RSS of the embedded default holding N small objects created within the history retention
  try {
    const gw = await startBenchGateway(join(dir, 'rss'));
    children.push(gw.process);
    const t = target(gw.url, gw.creds, opts.concurrency);
    await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rss' } }));
    const made = await runLoad(opts.concurrency, 600_000, async (i) => (await call(t, 'POST', '/api/v1/namespaces/rss/configmaps', configMap('rss', `r-${i}`))).status === 201, opts.rssObjects);
    if (made.ops !== opts.rssObjects) throw new Error(`created ${made.ops} of ${opts.rssObjects} objects`);
    await sleep(2000);
    const orchRss = await rssMiB(gw.process.pid!);
    const mapRss = await plainMapRss(opts.rssObjects);
    rows.push({ metric: `gateway RSS, ${opts.rssObjects} small objects + their history (SQLite, memory history, 5 min retention)`, orch: orchRss, baseline: mapRss, baselineName: 'the same objects as JSON in a plain Map', unit: 'MiB', higherIsBetter: false });
    notes.push(`${opts.rssObjects} creates took ${made.seconds.toFixed(0)} s (${made.opsPerSecond.toFixed(0)}/s), all within the history retention`);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
  return { rows, notes };
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
