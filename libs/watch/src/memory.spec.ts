import { join } from 'node:path';
import { openSqliteStore, type Store, type StoreEvent } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { MemoryHistory } from './history';
import { EventMemo } from './event-memo';
import { WatchCache } from './watch-cache';

const create = (revision: number, value: string): StoreEvent => ({ type: 'create', key: `/registry/k/${revision}`, revision, value });
const update = (revision: number, value: string, prevValue: string): StoreEvent => ({ type: 'update', key: '/registry/k/u', revision, value, prevValue });

describe('MemoryHistory bounds', () => {
  it.each([
    // Creates hold nothing the cache does not hold: only the count and the age bound them.
    { name: 'creates are not superseded values', events: [create(1, 'a'.repeat(100)), create(2, 'b'.repeat(100))], maxSupersededChars: 10, oldest: 0, size: 2 },
    { name: 'previous values beyond the bound trim the oldest events', events: [create(1, 'v1'), update(2, 'v2', 'x'.repeat(6)), update(3, 'v3', 'y'.repeat(6))], maxSupersededChars: 10, oldest: 2, size: 1 },
    { name: 'within the bound nothing is trimmed', events: [create(1, 'v1'), update(2, 'v2', 'x'.repeat(5)), update(3, 'v3', 'y'.repeat(5))], maxSupersededChars: 10, oldest: 0, size: 3 },
    { name: 'the event count bounds too', events: [create(1, 'a'), create(2, 'b'), create(3, 'c')], maxEvents: 2, oldest: 1, size: 2 },
  ])('$name', ({ events, maxSupersededChars, maxEvents, oldest, size }) => {
    const h = new MemoryHistory({ retentionMs: 60_000, maxSupersededChars, maxEvents });
    h.appendSync(0, events);
    expect(h.size()).toBe(size);
    if (oldest > 0) expect(() => h.readSync(oldest - 1, 10)).toThrow(/too old resource version/);
    expect(h.readSync(oldest, 10).events.map((e) => e.revision)).toEqual(events.slice(events.length - size).map((e) => e.revision));
  });

  it('trims by age, the events appended in one batch together', () => {
    let now = 1_000;
    const h = new MemoryHistory({ retentionMs: 100, now: () => now });
    h.appendSync(0, [create(1, 'a'), create(2, 'b')]);
    now = 1_050;
    h.appendSync(2, [create(3, 'c')]);
    now = 1_120;
    expect(h.readSync(2, 10).events.map((e) => e.revision)).toEqual([3]);
    expect(() => h.readSync(1, 10)).toThrow(/too old resource version/);
  });
});

describe('EventMemo', () => {
  const keys = Array.from({ length: 5 }, () => ({}));
  it.each([
    { name: 'keeps entries while they weigh no more than the bound', weights: [3, 3, 3], max: 10, kept: [0, 1, 2] },
    { name: 'drops the oldest beyond the bound', weights: [3, 3, 3, 3], max: 10, kept: [1, 2, 3] },
    { name: 'keeps the newest entry even when it alone weighs more', weights: [3, 20], max: 10, kept: [1] },
    { name: 'an entry set again keeps its place and weight', weights: [3, 3, 3], again: 0, max: 10, kept: [0, 1, 2] },
    // get answers the key it found last without a lookup: never a value set over or dropped since.
    { name: 'an entry read last, then dropped, is gone', weights: [3, 3, 3, 3], read: 0, max: 10, kept: [1, 2, 3] },
    { name: 'an entry read last, then set again, has its new value', weights: [3, 3, 3], read: 0, again: 0, max: 10, kept: [0, 1, 2] },
  ])('$name', ({ weights, max, kept, again, read }) => {
    const memo = new EventMemo<object, number>(max);
    weights.forEach((w, i) => {
      memo.set(keys[i], i, w);
      if (read === i) memo.get(keys[i]);
    });
    if (again !== undefined) memo.set(keys[again], 100 + again, weights[again]);
    const want = (i: number) => (!kept.includes(i) ? undefined : i === again ? 100 + i : i);
    // The key read last first (a lookup of another key would replace it).
    if (read !== undefined) expect(memo.get(keys[read])).toBe(want(read));
    expect(kept.map((i) => memo.get(keys[i]))).toEqual(kept.map(want));
    expect(keys.map((k, i) => (memo.get(k) !== undefined ? i : -1)).filter((i) => i >= 0)).toEqual(kept);
    expect(memo.size).toBe(kept.length);
  });
});

/** A history bounded below the retention loses nothing: a resume from before it replays from the store. */
describe('watch cache with a small memory history (real SQLite store)', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  let history: MemoryHistory;
  beforeAll(async () => {
    dir = await tempDir('watch-memory-');
    store = await openSqliteStore(join(dir, 'db'));
    history = new MemoryHistory({ retentionMs: 60_000, maxSupersededChars: 50 });
    cache = new WatchCache(store, { prefix: '/registry/', history, log: () => undefined });
    await cache.start();
  });
  afterAll(async () => {
    cache.stop();
    await store.close();
    await removeDir(dir);
  });

  it('a watch from before the oldest retained event gets every event, in order, from the store', async () => {
    const from = cache.currentRevision();
    await store.create('/registry/cm/ns/a', 'v0');
    for (let i = 1; i <= 20; i++) await store.update('/registry/cm/ns/a', `value-${i}`);
    await store.delete('/registry/cm/ns/a');
    expect(await cache.waitForRevision(from + 22, 5000)).toBe(true);
    expect(() => history.readSync(from, 100)).toThrow(/too old resource version/);

    const got: string[] = [];
    const sub = cache.subscribe('/registry/cm/', from, { onEvent: (e) => void got.push([e.type, e.value, e.prevValue].filter((v) => v !== undefined).join(' ')), onError: (err) => got.push(`error ${err.message}`) });
    for (let i = 0; i < 100 && got.length < 22; i++) await new Promise((r) => setTimeout(r, 20));
    sub.unsubscribe();
    expect(got).toEqual(['create v0', ...Array.from({ length: 20 }, (_, i) => `update value-${i + 1} ${i === 0 ? 'v0' : `value-${i}`}`), 'delete value-20']);
  });
});
