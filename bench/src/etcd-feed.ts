/**
 * The scale benchmark's etcd side of watch delivery, in processes of their own (spawned with
 * IPC by scale.ts) so that neither waits behind the other or behind the watchers:
 *
 * - `write`: creates ConfigMap `e-<seq>` (data.seq = seq) in namespace `<nsPrefix><seq % namespaces>`
 *   straight into etcd at `rate`/s, `total` in all, and reports when it sent each one;
 * - `probe`: watches etcd's change feed from `fromRevision` and reports when each of those
 *   objects appeared on it, until told `stop`; with `bus`, also when the pump published each
 *   one on the NATS watch bus (the feed → bus → watcher split of the gateways' part).
 *
 * Config as JSON in ORCH_ETCD_FEED; the process sends `{ ready }`, then (write) `{ done }` at
 * the end or (probe) `{ done }` after `stop`, then exits. Times are wall-clock ms.
 */
import { connect } from 'nats';
import { openEtcdStore } from '@orch/storage';
import { decodeBatch } from '@orch/watch';
import { wallClockMs } from './watch-client';

export interface EtcdFeedConfig {
  role: 'write' | 'probe';
  endpoint: string;
  /** The gateways' --etcd-prefix. */
  prefix: string;
  total: number;
  rate: number;
  namespaces: number;
  /** Namespaces are `<nsPrefix><n>` (each run of the phase has its own). */
  nsPrefix: string;
  fromRevision: number;
  /** The cluster's NATS watch bus (probe only). */
  bus?: { url: string; subject: string };
}

export interface EtcdFeedReport {
  /** By seq: when the write was sent (write) or when the event was on the feed (probe); 0 = never. */
  times: number[];
  cpuSeconds: number;
  /** The writer's achieved rate (writes/s). */
  rate?: number;
  /** By seq: when the event was published on the watch bus (probe with `bus`); 0 = never. */
  busTimes?: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFIX = '/registry/core/configmaps/';
const MAX_IN_FLIGHT = 1024;

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.ORCH_ETCD_FEED ?? '{}') as EtcdFeedConfig;
  const store = await openEtcdStore({ endpoints: [cfg.endpoint], prefix: cfg.prefix, historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
  const times = new Array<number>(cfg.total).fill(0);
  const cpu = process.cpuUsage();
  const finish = (extra: Partial<EtcdFeedReport> = {}) => {
    const used = process.cpuUsage(cpu);
    const report: EtcdFeedReport = { times, cpuSeconds: (used.user + used.system) / 1e6, ...extra };
    process.send!({ done: report }, () => void store.close().then(() => process.exit(0)));
  };
  if (cfg.role === 'probe') {
    const feed = store.watch(PREFIX, cfg.fromRevision, {
      onEvents: (events) => {
        const now = wallClockMs();
        for (const e of events) {
          const seq = /\/e-(\d+)$/.exec(e.key);
          if (seq && e.type === 'create') times[Number(seq[1])] = now;
        }
      },
      onError: (err) => process.send!({ error: `etcd change feed failed: ${err.message}` }),
    });
    const busTimes = cfg.bus ? new Array<number>(cfg.total).fill(0) : undefined;
    const nats = cfg.bus ? await connect({ servers: cfg.bus.url, name: 'bench-bus-probe' }) : undefined;
    if (nats && busTimes) {
      nats.subscribe(cfg.bus!.subject, {
        callback: (_err, msg) => {
          const now = wallClockMs();
          for (const e of decodeBatch(msg.data).events) {
            const seq = /\/e-(\d+)$/.exec(e.key);
            if (seq && e.type === 'create' && Number(seq[1]) < busTimes.length) busTimes[Number(seq[1])] = now;
          }
        },
      });
      await nats.flush();
    }
    process.on('message', (msg) => {
      if (msg !== 'stop') return;
      feed.stop();
      void (nats?.close() ?? Promise.resolve()).then(() => finish({ busTimes }));
    });
    process.send!({ ready: true });
    return;
  }
  process.send!({ ready: true });
  await new Promise((resolve) => process.once('message', resolve)); // 'start'
  // etcd batches concurrent writes into one fsync: enough in flight keeps the rate when each
  // write is slow. A counter and one waiter, not Promise.race over the set: that attaches a
  // reaction to every pending write on each call and turns the writer itself into the bottleneck.
  let inflight = 0;
  let slotFreed: (() => void) | undefined;
  let failure: Error | undefined;
  const started = performance.now();
  for (let i = 0; i < cfg.total && !failure; i++) {
    const wait = started + (i * 1000) / cfg.rate - performance.now();
    if (wait > 1) await sleep(wait);
    if (inflight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (slotFreed = r));
    const ns = `${cfg.nsPrefix}${i % cfg.namespaces}`;
    times[i] = wallClockMs();
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `e-${i}`, namespace: ns }, data: { seq: String(i) } });
    inflight++;
    store
      .create(`${PREFIX}${ns}/e-${i}`, body)
      .catch((err: Error) => (failure ??= err))
      .finally(() => {
        inflight--;
        slotFreed?.();
        slotFreed = undefined;
      });
  }
  while (inflight > 0) await new Promise<void>((r) => (slotFreed = r));
  if (failure) throw failure;
  finish({ rate: cfg.total / ((performance.now() - started) / 1000) });
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.send?.({ error: err.message });
    process.exit(1);
  });
}
