import { join } from 'node:path';
import { openEtcdStore, openSqliteStore, type Store } from '@orch/storage';
import { removeDir, startEtcd, startNats, startRedis, tempDir, type EtcdServer, type NatsServer, type RedisServer } from '@orch/testing';
import { LocalBus, type WatchBus } from './bus';
import { describeWatchConformance, type WatchBackends } from './conformance';
import { MemoryHistory, type EventHistory } from './history';
import { NatsBus } from './nats-bus';
import { RedisHistory } from './redis-history';

// Real engines for the whole file: one etcd, one nats-server, one redis-server.
let etcd: EtcdServer;
let nats: NatsServer;
let redis: RedisServer;
let dir: string;
beforeAll(async () => {
  [etcd, nats, redis, dir] = await Promise.all([startEtcd(), startNats(), startRedis(), tempDir('watch-')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([etcd?.stop(), nats?.stop(), redis?.stop()]);
  if (dir) await removeDir(dir);
});

type BusKind = 'local' | 'nats';
type HistoryKind = 'memory' | 'redis';

/** Every scope is its own cluster: an etcd key prefix (or SQLite file), a NATS subject, a Redis key. */
function backends(storeKind: 'etcd' | 'sqlite', busKind: BusKind, historyKind: HistoryKind): WatchBackends {
  return {
    scope(name) {
      const localBus = new LocalBus();
      let sqlite: Promise<Store> | undefined;
      return {
        async openStore() {
          if (storeKind === 'etcd') return openEtcdStore({ endpoints: [etcd.endpoint], prefix: `/${name}`, historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
          // One SQLite file has one writing store: every replica shares it.
          sqlite ??= openSqliteStore(join(dir, `${name}.db`), { historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
          return sqlite;
        },
        async openBus(): Promise<WatchBus> {
          return busKind === 'local' ? localBus : NatsBus.connect({ url: nats.url, subject: `orch.test.${name}`, log: () => undefined });
        },
        async openHistory(retentionMs, now): Promise<EventHistory> {
          if (historyKind === 'memory') return new MemoryHistory({ retentionMs, now });
          return RedisHistory.connect({ url: redis.url, key: `orch:test:${name}`, retentionMs, now, log: () => undefined });
        },
      };
    },
  };
}

// The embedded default, then every bus × history combination over etcd.
describeWatchConformance('sqlite, local bus, memory history', backends('sqlite', 'local', 'memory'));
describe.each([
  ['local', 'memory'],
  ['local', 'redis'],
  ['nats', 'memory'],
  ['nats', 'redis'],
] as [BusKind, HistoryKind][])('etcd', (busKind, historyKind) => {
  describeWatchConformance(`etcd, ${busKind} bus, ${historyKind} history`, backends('etcd', busKind, historyKind));
});
