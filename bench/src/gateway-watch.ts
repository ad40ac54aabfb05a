/**
 * Watch fan-out of one gateway to many watchers: the watches are held by watcher processes of
 * their own (watch-client.ts, so their TLS and parsing stay off the bench's event loop), a writer
 * creates ConfigMaps through the gateway, and each delivery's latency is create sent → event
 * arrived at the watcher (wall clock, comparable across processes). The watcher processes share
 * the machine's cores with the gateway, so they are kept cheap (raw TLS, one shared read buffer,
 * a scan for the seq marker instead of a JSON parse) while still reading every byte of every
 * event: what the row measures is delivery, the client's CPU per delivery is reported beside it.
 * `protocol` says how the watcher processes hold their watches: `http/1.1`, a TLS connection per
 * watch; `h2`, all the watches of a process as streams of one HTTP/2 session, as client-go and
 * kubectl do (one TLS connection carries every event of the process's watches).
 *
 * The events go out in rounds over the same watches, and the p99 reported is the median of the
 * rounds' p99s: one event is a thousand deliveries, a tenth of a round's hundred thousand, so a
 * single late event (a GC pause, a slow fsync of its create, a scheduler hiccup on a busy
 * machine) sets a round's p99 alone; the rounds' spread says how often that happens.
 */
import { benchChild } from './scale';
import { call, cpuSeconds, percentile, type HttpsTarget } from './load';
import { wallClockMs, type WatchClientConfig, type WatchClientReport, type WatchProtocol } from './watch-client';

export interface FanOutResult {
  p50: number;
  /** Median of the rounds' p99s. */
  p99: number;
  /** Each round's p99, in order. */
  roundP99s: number[];
  delivered: number;
  expected: number;
  /** CPU of the gateway process per event (all its watchers' writes and the create), ms. */
  gatewayCpuMsPerEvent: number;
  /** CPU of the watcher processes per delivery, µs. */
  clientCpuUsPerDelivery: number;
  /** Connections the watcher processes held (HTTP/1.1: one per watch; h2: the sessions). */
  connections: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sorted = (values: number[]) => values.sort((a, b) => a - b);

/** `watchers` watches of one namespace over `clients` processes; `rounds` × `events` creates `gapMs` apart. */
export async function watchFanOut(
  t: HttpsTarget,
  gateway: { url: string; pid: number; creds: { ca: string; cert: string; key: string } },
  opts: { namespace: string; watchers: number; events: number; rounds: number; gapMs: number; clients: number; protocol: WatchProtocol },
): Promise<FanOutResult> {
  await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } }));
  const rv = JSON.parse((await call(t, 'GET', `/api/v1/namespaces/${opts.namespace}/configmaps`)).body).metadata.resourceVersion;
  const configs: WatchClientConfig[] = Array.from({ length: opts.clients }, () => ({ watches: [], ...gateway.creds, protocol: opts.protocol }));
  for (let w = 0; w < opts.watchers; w++) configs[w % opts.clients].watches.push({ url: gateway.url, path: `/api/v1/namespaces/${opts.namespace}/configmaps?watch=1&resourceVersion=${rv}` });
  const clients = configs.map((cfg) => benchChild('watch-client.js', { ORCH_WATCH_CLIENT: JSON.stringify(cfg) }));
  try {
    await Promise.all(clients.map((c) => c.next('ready')));
    const total = opts.events * opts.rounds;
    const sentAt: number[] = [];
    const gatewayCpuBefore = cpuSeconds(gateway.pid);
    for (let i = 0; i < total; i++) {
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `f-${i}`, namespace: opts.namespace }, data: { seq: String(i) } };
      sentAt[i] = wallClockMs();
      const r = await call(t, 'POST', `/api/v1/namespaces/${opts.namespace}/configmaps`, JSON.stringify(body));
      if (r.status !== 201) throw new Error(`fan-out create ${i}: ${r.status} ${r.body}`);
      await sleep(opts.gapMs);
    }
    // The last events need a moment to arrive (bounded: a lost delivery shows in the count).
    await sleep(2000);
    const gatewayCpu = cpuSeconds(gateway.pid) - gatewayCpuBefore;
    const reports = await Promise.all(clients.map((c) => (c.proc.send('stop'), c.next<WatchClientReport>('done'))));
    const latencies: number[] = [];
    const byRound: number[][] = Array.from({ length: opts.rounds }, () => []);
    for (const r of reports) {
      r.seqs.forEach((seq, k) => {
        const latency = r.arrivals[k] - sentAt[seq];
        latencies.push(latency);
        byRound[Math.floor(seq / opts.events)]?.push(latency);
      });
    }
    const roundP99s = byRound.map((round) => percentile(sorted(round), 99));
    return {
      p50: percentile(sorted(latencies), 50),
      p99: percentile(sorted([...roundP99s]), 50),
      roundP99s,
      delivered: latencies.length,
      expected: opts.watchers * total,
      gatewayCpuMsPerEvent: (gatewayCpu * 1000) / total,
      clientCpuUsPerDelivery: (reports.reduce((sum, r) => sum + r.cpuSeconds, 0) * 1e6) / Math.max(1, latencies.length),
      connections: reports.reduce((sum, r) => sum + r.connections, 0),
    };
  } finally {
    for (const c of clients) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  }
}
