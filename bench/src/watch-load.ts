import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchGateway } from './gateway-process';
import type { IdleWatchesConfig, IdleWatchesReady } from './idle-watch-client';
import { call, percentile, rssMiB, target, type HttpsTarget } from './load';
import type { Row } from './report';
import { benchChild } from './scale';

export interface WatchLoadOptions {
  /** Watches the idle client opens and never reads. */
  watches: number;
  /** GETs per latency sample. */
  gets: number;
  /** Writes per second while the watches are open (events the idle watches do not read). */
  writesPerSecond: number;
  /** How long the writes go on. */
  writeSeconds: number;
}

const NS = 'watchload';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

/** Sequential GETs of one object: p50 and p99 latency (ms). */
async function getLatency(t: HttpsTarget, n: number): Promise<{ p50: number; p99: number }> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const r = await call(t, 'GET', `${CMS}/target`);
    if (r.status !== 200) throw new Error(`GET answered ${r.status}: ${r.body.slice(0, 200)}`);
    lat.push(performance.now() - start);
  }
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/**
 * One client opens `watches` watches (one connection each, as HTTP/1.1 clients do) and never
 * reads them (idle-watch-client.ts, a process of its own), while writes keep producing events
 * for them; another client's GET latency is measured against the same GETs before the watches
 * (baseline, same run), and the gateway's RSS is sampled throughout (its growth bounded by the
 * per-watch limits: WatchStreams).
 */
export async function watchLoadBench(opts: WatchLoadOptions): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-watchload-'));
  const gw = await startBenchGateway(join(dir, 'gw'), [`--max-watches-per-user=${opts.watches + 100}`, `--max-watches=${opts.watches + 1000}`]);
  let idleClient: ReturnType<typeof benchChild> | undefined;
  try {
    const reader = target(gw.url, gw.creds, 4);
    const writer = target(gw.url, gw.creds, 8);
    const ns = await call(writer, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.body}`);
    await call(writer, 'POST', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data: { a: 'b' } }));
    await getLatency(reader, 200); // warm-up
    const idle = await getLatency(reader, opts.gets);
    const rssBefore = await rssMiB(gw.process.pid!);

    const config: IdleWatchesConfig = { host: '127.0.0.1', port: gw.port, path: `${CMS}?watch=1&allowWatchBookmarks=true`, watches: opts.watches, ...gw.creds };
    idleClient = benchChild('idle-watch-client.js', { ORCH_IDLE_WATCHES: JSON.stringify(config) });
    const { opened, refused } = await idleClient.next<IdleWatchesReady>('ready');
    let rssMax = await rssMiB(gw.process.pid!);
    const sampler = setInterval(() => void rssMiB(gw.process.pid!).then((v) => (rssMax = Math.max(rssMax, v)), () => undefined), 200);

    // The watches held open, nothing written: what holding them costs the other client.
    const held = await getLatency(reader, opts.gets);
    const rssHeld = await rssMiB(gw.process.pid!);

    // Then events the idle watches never read (every event goes to every watch), while the other client's GETs are timed.
    const data = 'x'.repeat(2000);
    let writes = 0;
    const writing = (async () => {
      const end = Date.now() + opts.writeSeconds * 1000;
      for (let i = 0; Date.now() < end; i++) {
        const start = Date.now();
        const r = await call(writer, 'POST', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}` }, data: { d: data } }));
        if (r.status === 201) writes++;
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 / opts.writesPerSecond - (Date.now() - start))));
      }
    })();
    const loaded = await getLatency(reader, opts.gets);
    await writing;
    clearInterval(sampler);
    const rssAfter = await rssMiB(gw.process.pid!);
    idleClient.proc.send('stop');
    const { ended } = await idleClient.next<{ ended: number }>('done');
    const baseline = { baselineName: 'no watches (same run)', unit: 'ms', higherIsBetter: false };
    const rss = { baselineName: 'gateway RSS before the watches', unit: 'MiB', higherIsBetter: false };
    const fed = `${writes} events of 2 KB in ${opts.writeSeconds} s`;
    return [
      { metric: `get p50, ${opened} unread watches held (${refused} refused)`, orch: held.p50, baseline: idle.p50, ...baseline },
      { metric: `get p99, ${opened} unread watches held (goal ≤ 2x)`, orch: held.p99, baseline: idle.p99, ...baseline },
      { metric: `get p50, the same watches fed ${fed} (${ended} ended by the gateway)`, orch: loaded.p50, baseline: idle.p50, ...baseline },
      { metric: `get p99, the same watches fed ${fed}`, orch: loaded.p99, baseline: idle.p99, ...baseline },
      { metric: `gateway RSS with ${opened} unread watches held`, orch: rssHeld, baseline: rssBefore, ...rss },
      { metric: `gateway RSS peak, ${fed} to the unread watches`, orch: rssMax, baseline: rssBefore, ...rss },
      { metric: 'gateway RSS after the writes', orch: rssAfter, baseline: rssBefore, ...rss },
    ];
  } finally {
    if (idleClient?.proc.exitCode === null) idleClient.proc.kill('SIGKILL');
    gw.process.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}
