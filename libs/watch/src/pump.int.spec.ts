import { join } from 'node:path';
import { openSqliteStore, type Store, type WatchCallbacks } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { LocalBus, type EventBatch } from './bus';
import { Pump } from './pump';

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
});
