import { join } from 'node:path';
import { openSqliteStore, type Store, type StoreEvent, type WatchCallbacks } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { LocalBus, type EventBatch } from './bus';
import { MemoryHistory, type EventHistory } from './history';
import { Pump } from './pump';

/** A cluster-scope history kept in memory whose appends first go through `beforeAppend`. */
function clusterHistory(beforeAppend: (after: number, events: StoreEvent[]) => void | Promise<void>): { memory: MemoryHistory; history: EventHistory } {
  const memory = new MemoryHistory({ retentionMs: 60_000 });
  const history: EventHistory = {
    name: 'wrapped memory',
    scope: 'cluster',
    append: async (after, events) => {
      await beforeAppend(after, events);
      await memory.append(after, events);
    },
    read: (after, limit) => memory.read(after, limit),
    close: () => memory.close(),
  };
  return { memory, history };
}

/**
 * Writes that show an interval's rule: `first`; then four writes `pauseMs` apart, within the
 * interval that follows it; then, after a whole quiet interval, `quiet`. `reached` resolves once
 * the step under test (publication, append) has the given revision.
 */
async function firstStreamQuiet(store: Store, dir: string, intervalMs: number, pauseMs: number, reached: (revision: number) => Promise<void>): Promise<{ first: number; stream: number[]; quiet: number; writtenAt: number }> {
  const first = (await store.create(`/registry/core/configmaps/${dir}/first`, '{}')).modRevision;
  await reached(first);
  const stream: number[] = [];
  for (let i = 0; i < 4; i++) {
    stream.push((await store.create(`/registry/core/configmaps/${dir}/s${i}`, '{}')).modRevision);
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  }
  await reached(stream[3]);
  await new Promise((r) => setTimeout(r, intervalMs));
  const writtenAt = performance.now();
  const quiet = (await store.create(`/registry/core/configmaps/${dir}/quiet`, '{}')).modRevision;
  await reached(quiet);
  return { first, stream, quiet, writtenAt };
}

/**
 * The pump publishes what it read from the feed in one turn of the event loop as one batch.
 * The real SQLite store's feed is wrapped to hand each event over in a callback of its own
 * (as etcd hands over one watch response per revision under load), all in the same turn.
 */
describe('pump batching (real SQLite store)', () => {
  let dir: string;
  let store: Store;

  beforeAll(async () => {
    dir = await tempDir('pump-');
    const real = await openSqliteStore(join(dir, 'db'));
    const watchOneByOne = (prefix: string, after: number, cb: WatchCallbacks) => real.watch(prefix, after, { ...cb, onEvents: (events) => events.forEach((e) => cb.onEvents([e])) });
    store = new Proxy(real, { get: (t, p) => (p === 'watch' ? watchOneByOne : (t as never)[p]) }) as Store;
  });
  afterAll(async () => {
    await store.close();
    await removeDir(dir);
  });

  it('events read in one turn go out as one batch, in order, continuing the last one', async () => {
    const bus = new LocalBus();
    const batches: EventBatch[] = [];
    bus.subscribe((b) => b.events.length > 0 && batches.push(b));
    const pump = new Pump(store, bus, undefined, { prefix: '/registry/', startPosition: () => 0, heartbeatMs: 60_000 });
    pump.start();
    try {
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 20; i++) writes.push(store.create(`/registry/core/configmaps/p/c${String(i).padStart(2, '0')}`, '{}'));
      await Promise.all(writes);
      const last = await store.currentRevision();
      while (pump.publishedRevision() < last) await new Promise((r) => setTimeout(r, 10));
      const events = batches.flatMap((b) => b.events);
      expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 20 }, (_, i) => events[0].revision + i));
      // The writer commits concurrent writes in groups: one batch per group, not one per event.
      expect(batches.length).toBeLessThan(20);
      batches.forEach((b, i) => expect(b.after).toBe(i === 0 ? 0 : batches[i - 1].events.at(-1)!.revision));
    } finally {
      await pump.stop();
    }
  });

  it('publications are an interval apart: events read within it wait for its end and go out together; one after a quiet interval goes out at once', async () => {
    const bus = new LocalBus();
    const batches: { revisions: number[]; at: number }[] = [];
    bus.subscribe((b) => b.events.length > 0 && batches.push({ revisions: b.events.map((e) => e.revision), at: performance.now() }));
    const start = await store.currentRevision();
    const intervalMs = 1000;
    const pump = new Pump(store, bus, undefined, { prefix: '/registry/', startPosition: () => start, heartbeatMs: 60_000, publishIntervalMs: intervalMs });
    pump.start();
    const published = async (revision: number) => {
      while (pump.publishedRevision() < revision) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      const { first, stream, quiet, writtenAt } = await firstStreamQuiet(store, 'i', intervalMs, 0, published);
      expect(batches.map((b) => b.revisions)).toEqual([[first], stream, [quiet]]);
      // (Node's timers count from the event loop's cached time, which may be a few ms old.)
      expect(batches[1].at - batches[0].at).toBeGreaterThan(intervalMs / 2);
      expect(batches[2].at - writtenAt).toBeLessThan(intervalMs / 2);
    } finally {
      await pump.stop();
    }
  });

  it('a batch is on the bus, and past the bus client\'s microtask flush, before the history gets it', async () => {
    const bus = new LocalBus();
    // What the bus has sent: NATS writes its published messages to the socket in a microtask.
    const sent = new Set<number>();
    bus.subscribe((b) => queueMicrotask(() => b.events.forEach((e) => sent.add(e.revision))));
    const unsentWhenAppended: number[] = [];
    const { memory, history } = clusterHistory((_after, events) => {
      unsentWhenAppended.push(...events.filter((e) => !sent.has(e.revision)).map((e) => e.revision));
    });
    const start = await store.currentRevision();
    const pump = new Pump(store, bus, history, { prefix: '/registry/', startPosition: () => start, heartbeatMs: 60_000 });
    pump.start();
    try {
      for (let i = 0; i < 10; i++) await store.create(`/registry/core/configmaps/o/c${i}`, '{}');
      const last = await store.currentRevision();
      while (pump.publishedRevision() < last) await new Promise((r) => setTimeout(r, 10));
      await pump.stop(); // waits for the appends
      expect((await memory.read(start, 1000)).events.map((e) => e.revision)).toEqual(Array.from({ length: last - start }, (_, i) => start + 1 + i));
      expect(unsentWhenAppended).toEqual([]);
    } finally {
      await pump.stop();
    }
  });

  it('history appends are an interval apart: batches published within it go as one append; one after a quiet interval is appended at once', async () => {
    const bus = new LocalBus();
    const appends: { after: number; revisions: number[]; at: number }[] = [];
    const { memory, history } = clusterHistory((after, events) => void appends.push({ after, revisions: events.map((e) => e.revision), at: performance.now() }));
    const start = await store.currentRevision();
    const intervalMs = 1000;
    // Every event its own publication (no publish interval): only the append interval groups them.
    const pump = new Pump(store, bus, history, { prefix: '/registry/', startPosition: () => start, heartbeatMs: 60_000, publishIntervalMs: 0, appendIntervalMs: intervalMs });
    pump.start();
    const appended = async (revision: number) => {
      while (!appends.some((a) => a.revisions.includes(revision))) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      // 20 ms apart: each its own publication, all within the append interval.
      const { first, stream, quiet, writtenAt } = await firstStreamQuiet(store, 'a', intervalMs, 20, appended);
      expect(appends.map((a) => a.revisions)).toEqual([[first], stream, [quiet]]);
      appends.forEach((a, i) => expect(a.after).toBe(i === 0 ? start : appends[i - 1].revisions.at(-1)));
      expect(appends[1].at - appends[0].at).toBeGreaterThan(intervalMs / 2);
      expect(appends[2].at - writtenAt).toBeLessThan(intervalMs / 2);
      expect((await memory.read(start, 100)).events.map((e) => e.revision)).toEqual([first, ...stream, quiet]);
    } finally {
      await pump.stop();
    }
  });

  it('batches published while a history append is in flight go to the history together, in order, with no gap', async () => {
    const bus = new LocalBus();
    const batches: EventBatch[] = [];
    bus.subscribe((b) => b.events.length > 0 && batches.push(b));
    // A real in-memory history behind a slow connection: each append takes 30 ms.
    const appends: { after: number; revisions: number[] }[] = [];
    const { memory, history } = clusterHistory(async (after, events) => {
      appends.push({ after, revisions: events.map((e) => e.revision) });
      await new Promise((r) => setTimeout(r, 30));
    });
    const start = await store.currentRevision();
    const pump = new Pump(store, bus, history, { prefix: '/registry/', startPosition: () => start, heartbeatMs: 60_000 });
    pump.start();
    try {
      for (let i = 0; i < 30; i++) {
        await store.create(`/registry/core/configmaps/h/c${String(i).padStart(2, '0')}`, '{}');
        await new Promise((r) => setImmediate(r));
      }
      const last = await store.currentRevision();
      await pump.stop(); // waits for the appends
      const all = Array.from({ length: last - start }, (_, i) => start + 1 + i);
      expect((await memory.read(start, 1000)).events.map((e) => e.revision)).toEqual(all);
      expect(appends.flatMap((a) => a.revisions)).toEqual(all);
      appends.forEach((a, i) => expect(a.after).toBe(i === 0 ? start : appends[i - 1].revisions.at(-1)));
      expect(appends.length).toBeLessThan(batches.length);
    } finally {
      await pump.stop();
    }
  });
});
