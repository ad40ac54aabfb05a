import { join } from 'node:path';
import { openEtcdStore, openSqliteStore, type Store, type StoreEvent } from '@orch/storage';
import { removeDir, startEtcd, startNats, startRedis, tempDir, type EtcdServer, type NatsServer, type RedisServer } from '@orch/testing';
import { LocalBus, type WatchBus } from './bus';
import { clusterIdentity, watchChannels, type WatchChannels } from './cluster-identity';
import { describeWatchConformance, type WatchBackends } from './conformance';
import { HistoryExpiredError, MemoryHistory, type EventHistory } from './history';
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

/**
 * Every scope is its own cluster: an etcd key prefix (or SQLite file). All share the one
 * nats-server and redis-server, on the subject and stream key the gateway derives from the
 * cluster identity kept in the store: scopes stay apart only if that derivation does.
 */
function backends(storeKind: 'etcd' | 'sqlite', busKind: BusKind, historyKind: HistoryKind): WatchBackends {
  return {
    scope(name) {
      const localBus = new LocalBus();
      let sqlite: Promise<Store> | undefined;
      let channels: Promise<WatchChannels> | undefined;
      const openStore = async (): Promise<Store> => {
        if (storeKind === 'etcd') return openEtcdStore({ endpoints: [etcd.endpoint], prefix: `/${name}`, historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
        // One SQLite file has one writing store: every replica shares it.
        sqlite ??= openSqliteStore(join(dir, `${name}.db`), { historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
        return sqlite;
      };
      /** As a gateway does at start: the identity read from (or first written into) the store. */
      const clusterChannels = () =>
        (channels ??= (async () => {
          const store = await openStore();
          try {
            return watchChannels(await clusterIdentity(store));
          } finally {
            if (storeKind === 'etcd') await store.close();
          }
        })());
      return {
        openStore,
        async openBus(): Promise<WatchBus> {
          if (busKind === 'local') return localBus;
          return NatsBus.connect({ url: nats.url, subject: (await clusterChannels()).subject, log: () => undefined });
        },
        async openHistory(retentionMs, now): Promise<EventHistory> {
          if (historyKind === 'memory') return new MemoryHistory({ retentionMs, now });
          return RedisHistory.connect({ url: redis.url, key: (await clusterChannels()).historyKey, retentionMs, now, log: () => undefined });
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

describe('cluster identity (etcd)', () => {
  it('replicas starting at once agree on one identity; another prefix of the same etcd has another', async () => {
    const open = (prefix: string) => openEtcdStore({ endpoints: [etcd.endpoint], prefix, historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 });
    const stores = await Promise.all([open('/idA'), open('/idA'), open('/idA'), open('/idB')]);
    try {
      const ids = await Promise.all(stores.map((s) => clusterIdentity(s)));
      expect(new Set(ids.slice(0, 3)).size).toBe(1);
      expect(ids[3]).not.toBe(ids[0]);
      expect(await clusterIdentity(stores[1])).toBe(ids[0]);
      const channels = ids.map((id) => watchChannels(id));
      expect(channels[0].subject).not.toBe(channels[3].subject);
      expect(channels[0].historyKey).not.toBe(channels[3].historyKey);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

describe('redis history trim', () => {
  const ev = (revision: number): StoreEvent => ({ type: 'create', key: `/registry/core/configmaps/ns/k${revision}`, revision, value: `v${revision}` });
  // Retention 10 s; times move by hand. `earlier` is a deposed pump leader, `later` its successor.
  it.each([
    { name: 'its own appends, by the times it noted', earlierUntil: 0 },
    { name: "an earlier writer's older appends, by the times in the entries", earlierUntil: 102 },
    { name: 'a stream only an earlier writer appended to', earlierUntil: 104 },
  ])('trims $name', async ({ earlierUntil }) => {
    let now = 1_000_000;
    const key = `trim-${earlierUntil}`;
    const open = () => RedisHistory.connect({ url: redis.url, key, retentionMs: 10_000, now: () => now, log: () => undefined });
    const [earlier, later] = await Promise.all([open(), open()]);
    try {
      // 101 and 102 at t0, 103 and 104 at t0 + 6 s; each by `earlier` up to earlierUntil, else by `later`.
      for (const [revision, at] of [[101, 0], [102, 0], [103, 6_000], [104, 6_000]]) {
        now = 1_000_000 + at;
        await (revision <= earlierUntil ? earlier : later).append(revision - 1, [ev(revision)]);
      }
      now = 1_000_000 + 12_000; // 101 and 102 are 12 s old, 103 and 104 6 s
      await later.trim();
      await expect(later.read(100, 10)).rejects.toBeInstanceOf(HistoryExpiredError);
      expect((await later.read(102, 10)).events.map((e) => e.revision)).toEqual([103, 104]);
    } finally {
      await Promise.all([earlier.close(), later.close()]);
    }
  });
});
