import { join } from 'node:path';
import { openSqliteStore, type Store, type StoreEvent } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { HistoryExpiredError, WatchCache } from './watch-cache';

const PREFIX = '/registry/core/configmaps/';

describe('WatchCache over a real SQLite store', () => {
  let dir: string;
  let store: Store;
  let now = 1_000_000;
  let cache: WatchCache;

  beforeEach(async () => {
    dir = await tempDir('orch-watch-');
    store = await openSqliteStore(join(dir, 'db'));
    now = 1_000_000;
    cache = new WatchCache(store, { prefix: '/registry/', retentionMs: 60_000, now: () => now });
    await cache.start();
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
    await removeDir(dir);
  });

  const collect = () => {
    const events: StoreEvent[] = [];
    return { events, subscriber: { onEvent: (e: StoreEvent) => events.push(e), onError: (e: Error) => events.push({ type: 'delete', key: `error:${e.message}`, revision: -1 }) } };
  };

  it('replays retained history after fromRevision, then delivers live events, in order', async () => {
    const a = await store.create(`${PREFIX}ns/a`, '{}');
    await store.create(`${PREFIX}ns/b`, '{}');
    expect(await cache.waitForRevision(a.modRevision + 1, 2000)).toBe(true);
    const c = collect();
    cache.subscribe(PREFIX, a.modRevision, c.subscriber);
    expect(c.events.map((e) => e.key)).toEqual([`${PREFIX}ns/b`]);
    await store.update(`${PREFIX}ns/a`, '{"x":1}');
    await cache.waitForRevision(a.modRevision + 2, 2000);
    expect(c.events.map((e) => [e.type, e.key])).toEqual([
      ['create', `${PREFIX}ns/b`],
      ['update', `${PREFIX}ns/a`],
    ]);
  });

  it.each([
    { name: 'resource prefix', prefix: PREFIX, want: 2 },
    { name: 'namespace prefix', prefix: `${PREFIX}ns1/`, want: 1 },
    { name: 'other resource', prefix: '/registry/core/secrets/', want: 0 },
  ])('delivers only keys under the subscribed prefix: $name', async ({ prefix, want }) => {
    const c = collect();
    cache.subscribe(prefix, cache.currentRevision(), c.subscriber);
    await store.create(`${PREFIX}ns1/x`, '{}');
    const last = await store.create(`${PREFIX}ns2/y`, '{}');
    await cache.waitForRevision(last.modRevision, 2000);
    expect(c.events).toHaveLength(want);
  });

  it('fails a watch from before the retained history with HistoryExpiredError', async () => {
    const first = await store.create(`${PREFIX}ns/a`, '{}');
    await cache.waitForRevision(first.modRevision, 2000);
    now += 61_000;
    const second = await store.create(`${PREFIX}ns/b`, '{}');
    await cache.waitForRevision(second.modRevision, 2000);
    expect(() => cache.subscribe(PREFIX, first.modRevision - 1, collect().subscriber)).toThrow(HistoryExpiredError);
    expect(() => cache.subscribe(PREFIX, first.modRevision, collect().subscriber)).not.toThrow();
  });

  it('waitForRevision resolves false when the revision does not arrive in time', async () => {
    expect(await cache.waitForRevision(cache.currentRevision() + 100, 50)).toBe(false);
  });

  it('unsubscribe stops delivery', async () => {
    const c = collect();
    const sub = cache.subscribe(PREFIX, cache.currentRevision(), c.subscriber);
    sub.unsubscribe();
    const kv = await store.create(`${PREFIX}ns/z`, '{}');
    await cache.waitForRevision(kv.modRevision, 2000);
    expect(c.events).toEqual([]);
  });
});
