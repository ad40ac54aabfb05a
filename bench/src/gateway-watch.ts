/**
 * Watch fan-out of one gateway to many watchers: the watches are held by watcher processes of
 * their own (watch-client.ts, so their TLS and parsing stay off the bench's event loop), a writer
 * creates ConfigMaps through the gateway, and each delivery's latency is create sent → event
 * arrived at the watcher (wall clock, comparable across processes).
 */
import { benchChild } from './scale';
import { call, percentile, type HttpsTarget } from './load';
import { wallClockMs, type WatchClientConfig, type WatchClientReport } from './watch-client';

export interface FanOutResult {
  p50: number;
  p99: number;
  delivered: number;
  expected: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `watchers` watches of one namespace over `clients` processes; `events` creates `gapMs` apart. */
export async function watchFanOut(
  t: HttpsTarget,
  gateway: { url: string; creds: { ca: string; cert: string; key: string } },
  opts: { namespace: string; watchers: number; events: number; gapMs: number; clients: number },
): Promise<FanOutResult> {
  await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } }));
  const rv = JSON.parse((await call(t, 'GET', `/api/v1/namespaces/${opts.namespace}/configmaps`)).body).metadata.resourceVersion;
  const configs: WatchClientConfig[] = Array.from({ length: opts.clients }, () => ({ watches: [], ...gateway.creds }));
  for (let w = 0; w < opts.watchers; w++) configs[w % opts.clients].watches.push({ url: gateway.url, path: `/api/v1/namespaces/${opts.namespace}/configmaps?watch=1&resourceVersion=${rv}` });
  const clients = configs.map((cfg) => benchChild('watch-client.js', { ORCH_WATCH_CLIENT: JSON.stringify(cfg) }));
  try {
    await Promise.all(clients.map((c) => c.next('ready')));
    const sentAt: number[] = [];
    for (let i = 0; i < opts.events; i++) {
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `f-${i}`, namespace: opts.namespace }, data: { seq: String(i) } };
      sentAt[i] = wallClockMs();
      const r = await call(t, 'POST', `/api/v1/namespaces/${opts.namespace}/configmaps`, JSON.stringify(body));
      if (r.status !== 201) throw new Error(`fan-out create ${i}: ${r.status} ${r.body}`);
      await sleep(opts.gapMs);
    }
    // The last events need a moment to arrive (bounded: a lost delivery shows in the count).
    await sleep(2000);
    const reports = await Promise.all(clients.map((c) => (c.proc.send('stop'), c.next<WatchClientReport>('done'))));
    const latencies: number[] = [];
    for (const r of reports) r.seqs.forEach((seq, k) => latencies.push(r.arrivals[k] - sentAt[seq]));
    latencies.sort((a, b) => a - b);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), delivered: latencies.length, expected: opts.watchers * opts.events };
  } finally {
    for (const c of clients) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  }
}
