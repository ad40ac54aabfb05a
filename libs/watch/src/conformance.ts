import type { Store, StoreEvent } from '@orch/storage';
import type { EventBatch, WatchBus } from './bus';
import { HistoryExpiredError, type EventHistory } from './history';
import { storeLeaseLock } from './lease-lock';
import { Pump } from './pump';
import { WatchCache } from './watch-cache';

/**
 * One isolated cluster for one test: every call opens a new client (a new "replica") of the
 * same data, bus and history; different scopes never see each other.
 */
export interface WatchBackendScope {
  openStore(): Promise<Store>;
  openBus(): Promise<WatchBus>;
  /** `now` lets retention tests move time. */
  openHistory(retentionMs: number, now?: () => number): Promise<EventHistory>;
}

export interface WatchBackends {
  scope(name: string): WatchBackendScope;
}

/** Scopes are unique across every suite of the file (each gets its own data). */
let scopes = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits are liveness bounds, not performance checks: far above any delay a loaded machine
 * causes, and each test's own bound is above the sum of its waits, so a watch that really
 * stalls fails in `until` with what it got, never as a bare jest timeout.
 */
const WAIT_MS = 20_000;
const TEST_TIMEOUT_MS = 120_000;

async function until(cond: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const ev = (type: StoreEvent['type'], key: string, revision: number, value?: string, prevValue?: string): StoreEvent => {
  const e: StoreEvent = { type, key, revision };
  if (value !== undefined) e.value = value;
  if (prevValue !== undefined) e.prevValue = prevValue;
  return e;
};

/** What one watch received: events, or the error that ended it. */
interface Recording {
  events: StoreEvent[];
  errors: Error[];
  stop(): void;
}

/** The store's own change feed under prefix: the truth every watch is compared with. */
function truth(store: Store, prefix: string, after: number): Recording {
  const rec: Recording = { events: [], errors: [], stop: () => handle.stop() };
  const handle = store.watch(prefix, after, { onEvents: (evs) => rec.events.push(...evs), onError: (e) => rec.errors.push(e) });
  return rec;
}

function watchOn(cache: WatchCache, prefix: string, from: number): Recording {
  const rec: Recording = { events: [], errors: [], stop: () => sub.unsubscribe() };
  const sub = cache.subscribe(prefix, from, { onEvent: (e) => rec.events.push(e), onError: (e) => rec.errors.push(e) });
  return rec;
}

/** Type, key, revision and value of each event (prevValue is checked where it matters). */
const shape = (events: StoreEvent[]) => events.map((e) => [e.type, e.key, e.revision, e.value ?? null]);

/**
 * The same tests for every combination of watch bus and event history, over a real store:
 * the seams' own contracts, then the whole path store → pump → bus → watch caches of several
 * replicas, with failover, lost batches and resumes.
 */
export function describeWatchConformance(name: string, backends: WatchBackends): void {
  describe(`Watch conformance: ${name}`, () => {
    jest.setTimeout(TEST_TIMEOUT_MS);
    const cleanups: (() => Promise<void> | void)[] = [];
    let scope: WatchBackendScope;
    const later = <T>(value: T, close: (v: T) => Promise<void> | void): T => {
      cleanups.push(() => close(value));
      return value;
    };
    const newScope = () => backends.scope(`c${process.pid}x${++scopes}`);
    beforeEach(() => {
      scope = newScope();
    });
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    const openStore = async (sc = scope) => later(await sc.openStore(), (s) => s.close());
    const openBus = async (sc = scope) => later(await sc.openBus(), (b) => b.close());
    const openHistory = async (retentionMs = 60_000, now?: () => number, sc = scope) => later(await sc.openHistory(retentionMs, now), (h) => h.close());

    /** A replica of the test's cluster (or of `cluster`): its own store client, bus connection, history and watch cache, and a pump candidate. */
    const replica = async (opts: { pump?: boolean; identity?: string; releaseOnStop?: boolean; cluster?: WatchBackendScope; appendIntervalMs?: number } = {}) => {
      const sc = opts.cluster ?? scope;
      const store = await openStore(sc);
      const bus = await openBus(sc);
      const history = await openHistory(60_000, undefined, sc);
      const cache = later(new WatchCache(store, { prefix: '/registry/', bus, history, busSilenceMs: 600, log: () => undefined }), (c) => c.stop());
      await cache.start();
      let pump: Pump | undefined;
      if (opts.pump !== false) {
        pump = new Pump(store, bus, history.scope === 'cluster' ? history : undefined, {
          prefix: '/registry/',
          startPosition: () => cache.currentRevision(),
          heartbeatMs: 100,
          appendIntervalMs: opts.appendIntervalMs,
          election: bus.distributed
            ? {
                lock: storeLeaseLock(store, '/registry/coordination.orch.io/leases/orch-system/orch-watch-pump'),
                identity: opts.identity ?? `replica-${Math.random().toString(36).slice(2)}`,
                namespace: 'orch-system',
                name: 'orch-watch-pump',
                leaseDurationMs: 1500,
                renewDeadlineMs: 1000,
                retryPeriodMs: 200,
                releaseOnStop: opts.releaseOnStop,
              }
            : undefined,
          log: () => undefined,
        });
        const p = pump;
        cleanups.push(() => p.stop());
        pump.start();
      }
      return { store, bus, history, cache, pump };
    };

    describe('bus', () => {
      it('delivers each publisher’s batches in order and intact to every subscriber', async () => {
        const publisher = await openBus();
        const receivers = [await openBus(), await openBus()];
        const got: EventBatch[][] = receivers.map(() => []);
        receivers.forEach((b, i) => b.subscribe((batch) => got[i].push(batch)));
        await Promise.all(receivers.map((b) => b.flush())); // the subscriptions reached the server
        const batches: EventBatch[] = [
          { after: 10, events: [ev('create', '/registry/core/configmaps/a/x', 11, '{"a":"ü ✓ \\n"}'), ev('update', '/registry/core/configmaps/a/x', 12, '')] },
          { after: 12, events: [] },
          { after: 12, events: [ev('delete', '/registry/core/configmaps/a/x', 13)] },
          { after: 13, events: Array.from({ length: 500 }, (_, i) => ev('create', `/registry/core/secrets/b/s${i}`, 14 + i, 'v'.repeat(i))) },
        ];
        for (const b of batches) publisher.publish(b);
        for (let i = 0; i < receivers.length; i++) {
          await until(() => got[i].length === batches.length, `receiver ${i} to get ${batches.length} batches`);
          expect(got[i].map((b) => ({ after: b.after, events: shape(b.events) }))).toEqual(batches.map((b) => ({ after: b.after, events: shape(b.events) })));
        }
      });

      it('hands its own subscribers each batch it publishes once, at publish (no round trip)', async () => {
        const bus = await openBus();
        const other = await openBus();
        const got: number[] = [];
        bus.subscribe((b) => got.push(b.after));
        await Promise.all([bus.flush(), other.flush()]);
        bus.publish({ after: 1, events: [] });
        expect(got).toEqual([1]);
        other.publish({ after: 2, events: [] });
        await other.flush();
        await until(() => got.length === 2, 'the other publisher’s batch');
        bus.publish({ after: 3, events: [] });
        // A server echo of 1 or 3 would have arrived before the answer to this ping.
        await bus.flush();
        expect(got).toEqual([1, 2, 3]);
      });

      it('stops delivering after unsubscribe and advertises a batch size limit', async () => {
        const bus = await openBus();
        const got: EventBatch[] = [];
        const sentinel: EventBatch[] = [];
        const sub = bus.subscribe((b) => got.push(b));
        bus.subscribe((b) => sentinel.push(b));
        await bus.flush();
        bus.publish({ after: 1, events: [] });
        await until(() => got.length === 1 && sentinel.length === 1, 'the first batch');
        sub.unsubscribe();
        await bus.flush();
        bus.publish({ after: 2, events: [] });
        // The sentinel, subscribed on the same connection, gets the second batch: the unsubscribed listener would have by then.
        await until(() => sentinel.length === 2, 'the second batch on the sentinel');
        expect(got).toHaveLength(1);
        expect(bus.maxBatchBytes).toBeGreaterThan(64 * 1024);
        expect(bus.connected()).toBe(true);
      });
    });

    describe('history', () => {
      const k = (n: number) => `/registry/core/configmaps/ns/k${n}`;
      const fill = async (h: EventHistory) => {
        await h.append(100, [ev('create', k(1), 101, 'v1'), ev('update', k(1), 103, 'v2', 'v1')]);
        await h.append(103, [ev('delete', k(1), 105, undefined, 'v2'), ev('create', k(2), 106, 'x')]);
      };
      it.each([
        { name: 'from the start', after: 100, want: [101, 103, 105, 106] },
        { name: 'from between two events', after: 102, want: [103, 105, 106] },
        { name: 'from an event', after: 103, want: [105, 106] },
        { name: 'from the newest', after: 106, want: [] },
        { name: 'from beyond the newest', after: 200, want: [] },
      ])('reads $name', async ({ after, want }) => {
        const h = await openHistory();
        await fill(h);
        const read = await h.read(after, 1000);
        expect(read.events.map((e) => e.revision)).toEqual(want);
        expect(read.more).toBe(false);
        expect(read.through).toBeGreaterThanOrEqual(want.length ? want[want.length - 1] : after);
      });

      it('keeps values and previous values, pages with a limit', async () => {
        const h = await openHistory();
        await fill(h);
        const first = await h.read(100, 2);
        expect(first.events).toEqual([ev('create', k(1), 101, 'v1'), ev('update', k(1), 103, 'v2', 'v1')]);
        expect(first).toMatchObject({ through: 103, more: true });
        const rest = await h.read(first.through, 2);
        expect(rest.events).toEqual([ev('delete', k(1), 105, undefined, 'v2'), ev('create', k(2), 106, 'x')]);
      });

      it('refuses to replay from before what it retains', async () => {
        const h = await openHistory();
        await fill(h);
        await expect(h.read(99, 10)).rejects.toBeInstanceOf(HistoryExpiredError);
      });

      it('skips events appended twice (two writers) and never replays across a gap', async () => {
        const h = await openHistory();
        await fill(h);
        await h.append(103, [ev('delete', k(1), 105, undefined, 'v2'), ev('create', k(2), 106, 'x'), ev('create', k(3), 107, 'y')]);
        expect((await h.read(100, 100)).events.map((e) => e.revision)).toEqual([101, 103, 105, 106, 107]);
        // 108..109 never appended: the history holds 110 but cannot prove nothing is missing before it.
        await h.append(109, [ev('create', k(4), 110, 'z')]);
        await expect(h.read(108, 10)).rejects.toBeInstanceOf(HistoryExpiredError);
        // From before the gap: either what came before it, stopping in front of it (a shared
        // history keeps it), or nothing at all (a replica's own history restarts at a gap).
        const fromOld = await h.read(100, 100).catch((err: Error) => err);
        if (fromOld instanceof Error) expect(fromOld).toBeInstanceOf(HistoryExpiredError);
        else expect({ revisions: fromOld.events.map((e) => e.revision), through: fromOld.through, more: fromOld.more }).toEqual({ revisions: [101, 103, 105, 106, 107], through: 107, more: false });
        expect((await h.read(109, 10)).events.map((e) => e.revision)).toEqual([110]);
      });

      it('trims events older than the retention', async () => {
        let now = 1_000_000;
        const h = await openHistory(10_000, () => now);
        await h.append(100, [ev('create', k(1), 101, 'a')]);
        now += 6_000;
        await h.append(101, [ev('create', k(2), 102, 'b')]);
        now += 6_000; // the first event is 12 s old, the second 6 s
        await h.append(102, [ev('create', k(3), 103, 'c')]);
        await expect(h.read(100, 10)).rejects.toBeInstanceOf(HistoryExpiredError);
        expect((await h.read(101, 10)).events.map((e) => e.revision)).toEqual([102, 103]);
      });
    });

    describe('pump → bus → watch caches', () => {
      const CM = '/registry/core/configmaps/';

      it('every replica’s watchers see exactly the store’s history of their prefix, in order', async () => {
        const replicas = [await replica(), await replica(), await replica()];
        const writer = replicas[0].store;
        const base = await writer.currentRevision();
        expect(await Promise.all(replicas.map((r) => r.cache.waitForRevision(base, WAIT_MS)))).toEqual([true, true, true]);
        const all = truth(writer, CM, base);
        const watches = replicas.flatMap((r) => [watchOn(r.cache, CM, base), watchOn(r.cache, `${CM}ns1/`, base)]);
        // Concurrent writers on two replicas' store clients: 80 objects created, some updated,
        // some deleted, all at once (each object's own writes in order).
        const written = await Promise.all(
          [replicas[0].store, replicas[1].store].flatMap((s, w) =>
            Array.from({ length: 40 }, async (_, i) => {
              const key = `${CM}ns${i % 2}/w${w}-${i}`;
              let revision = (await s.create(key, `{"i":${i}}`)).modRevision;
              if (i % 3 === 0) revision = (await s.update(key, `{"i":${i},"u":true}`)).modRevision;
              if (i % 5 === 0) revision = (await s.delete(key)).revision;
              return revision;
            }),
          ),
        );
        // The newest write under the prefix (not the store's revision: a pump's Lease renewal may follow it).
        const last = Math.max(...written);
        await until(() => all.events.at(-1)?.revision === last, 'the store feed');
        for (const [i, w] of watches.entries()) {
          const want = i % 2 === 0 ? all.events : all.events.filter((e) => e.key.startsWith(`${CM}ns1/`));
          await until(() => w.events.length >= want.length || w.errors.length > 0, `watch ${i}`).catch((err: Error) => {
            // Say where it stopped: the modes and positions of the replicas, and what the watch got.
            throw new Error(`${err.message}: got ${w.events.length} of ${want.length} events (last ${w.events.at(-1)?.revision}, want ${want.at(-1)?.revision}); replicas ${JSON.stringify(replicas.map((r) => r.cache.status()))}`);
          });
          expect(w.errors).toEqual([]);
          expect(shape(w.events)).toEqual(shape(want));
          // Deletes carry the last state; updates the state they replaced.
          expect(w.events.filter((e) => e.type !== 'create').every((e) => e.prevValue !== undefined)).toBe(true);
        }
        for (const r of replicas) expect(r.cache.list(CM).items.map((kv) => [kv.key, kv.value])).toEqual((await writer.list(CM)).items.map((kv) => [kv.key, kv.value]));
      });

      it('a watch resumes from an older revision on a replica started later, and gets 410 only when nothing retains it', async () => {
        const bare = await openStore();
        const early: number[] = [];
        for (let i = 0; i < 3; i++) early.push((await bare.create(`${CM}ns/e${i}`, `e${i}`)).modRevision);
        const first = await replica();
        const writes: number[] = [];
        for (let i = 0; i < 10; i++) writes.push((await first.store.create(`${CM}ns/r${i}`, `v${i}`)).modRevision);
        const late = await replica();
        const resumed = watchOn(late.cache, CM, writes[3]);
        const after = await first.store.create(`${CM}ns/after`, 'x');
        await until(() => resumed.events.length >= 7 || resumed.errors.length > 0, 'the resumed watch');
        expect(resumed.errors).toEqual([]);
        expect(resumed.events.map((e) => e.revision)).toEqual([...writes.slice(4), after.modRevision]);

        // Older than any history and compacted in the store: 410.
        await bare.compact(early[2]);
        const gone = watchOn(late.cache, CM, early[0]);
        await until(() => gone.errors.length > 0, 'a 410 for a compacted revision');
        expect(gone.errors[0]).toBeInstanceOf(HistoryExpiredError);
        expect(gone.events).toEqual([]);
      });

      it('a watch resuming from a revision published but not yet in the history gets the rest from the store: no gap, no duplicate', async () => {
        // Appends to a cluster history at most every 3 s: once `first` is there, the next append is seconds away.
        const r = await replica({ appendIntervalMs: 3_000 });
        const first = (await r.store.create(`${CM}lag/first`, 'f')).modRevision;
        await until(() => r.pump!.publishedRevision() >= first, 'the publication of the first write');
        const deadline = Date.now() + WAIT_MS;
        while (r.history.scope === 'cluster' && (await r.history.read(first - 1, 10)).through < first) {
          if (Date.now() > deadline) throw new Error('timed out waiting for the first write in the history');
          await sleep(10);
        }
        const writes: number[] = [];
        for (let i = 0; i < 5; i++) writes.push((await r.store.create(`${CM}lag/w${i}`, `v${i}`)).modRevision);
        const late = await replica({ pump: false });
        expect(await late.cache.waitForRevision(writes[4], WAIT_MS)).toBe(true);
        // The history does not hold what is resumed (a cluster history lags; a replica's own starts at its start).
        expect(await late.history.read(writes[1], 10).then((h) => h.through, () => -1)).toBeLessThan(writes[4]);
        const resumed = watchOn(late.cache, `${CM}lag/`, writes[1]);
        const after = (await r.store.create(`${CM}lag/after`, 'x')).modRevision;
        await until(() => resumed.events.length >= 4 || resumed.errors.length > 0, 'the resumed watch');
        await sleep(100);
        expect(resumed.errors).toEqual([]);
        expect(resumed.events.map((e) => e.revision)).toEqual([...writes.slice(2), after]);
      });

      it('a batch that does not continue a replica’s position sends it to the store, never past a gap', async () => {
        const r = await replica();
        const other = await replica({ pump: false });
        const base = await r.store.currentRevision();
        expect(await other.cache.waitForRevision(base, WAIT_MS)).toBe(true);
        const w = watchOn(other.cache, CM, base);
        // A forged batch claims history the replica never saw, then real writes follow.
        r.bus.publish({ after: base + 1000, events: [ev('create', `${CM}ns/forged`, base + 1001, 'x')] });
        const created: number[] = [];
        for (let i = 0; i < 5; i++) created.push((await r.store.create(`${CM}ns/g${i}`, 'v')).modRevision);
        await until(() => w.events.length >= 5, 'the real events');
        await sleep(100);
        expect(w.events.map((e) => e.revision)).toEqual(created);
        expect(other.cache.get(`${CM}ns/forged`)).toBeUndefined();
      });

      it('when the pump leader dies another replica takes over; watchers see no gap', async () => {
        const a = await replica({ identity: 'a', releaseOnStop: false });
        await until(() => a.pump!.isLeader(), 'a to lead');
        const b = await replica({ identity: 'b' });
        const base = await b.store.currentRevision();
        expect(await b.cache.waitForRevision(base, WAIT_MS)).toBe(true);
        const w = watchOn(b.cache, CM, base);
        const all = truth(b.store, CM, base);
        let writing = true;
        let last = base;
        const writer = (async () => {
          for (let i = 0; writing; i++) {
            last = (await b.store.create(`${CM}ns/f${i}`, 'v')).modRevision;
            await sleep(5);
          }
        })();
        await sleep(200);
        await a.pump!.stop(); // a crash: the lease is not released
        a.cache.stop();
        if (b.bus.distributed) await until(() => b.pump!.isLeader(), 'b to take over');
        await sleep(300);
        writing = false;
        await writer;
        await until(() => all.events.at(-1)?.revision === last && w.events.at(-1)?.revision === last, 'the last write to reach the watch');
        expect(w.errors).toEqual([]);
        expect(shape(w.events)).toEqual(shape(all.events));
        expect(b.cache.status()).toMatchObject({ ready: true });
      });

      it('two clusters sharing the bus and history engines never see each other’s events', async () => {
        const other = newScope();
        const mine = [await replica(), await replica({ pump: false })];
        const theirs = [await replica({ cluster: other }), await replica({ cluster: other, pump: false })];
        const clusters = [mine, theirs];
        // Where each cluster's watches start: past everything its replicas hold. (Not the store's
        // revision: clusters on prefixes of one etcd share its revisions, and a cache moves only
        // with its own cluster's events.)
        const bases = clusters.map((c) => Math.max(...c.map((r) => r.cache.currentRevision())));
        const truths = clusters.map((c, n) => truth(c[0].store, CM, bases[n]));
        const watches = clusters.map((c, n) => c.map((r) => watchOn(r.cache, CM, bases[n])));
        // The same keys in both clusters, written at the same time, with values that say whose they are.
        const written = await Promise.all(
          clusters.map((c, n) =>
            Promise.all(
              Array.from({ length: 20 }, async (_, i) => {
                const key = `${CM}ns/k${i}`;
                const created = await c[i % 2].store.create(key, `{"cluster":${n},"i":${i}}`);
                return i % 4 === 0 ? (await c[0].store.update(key, `{"cluster":${n},"i":${i},"u":true}`)).modRevision : created.modRevision;
              }),
            ),
          ),
        );
        const lasts = written.map((revisions) => Math.max(...revisions));
        for (const [n, c] of clusters.entries()) {
          const want = truths[n];
          await until(() => want.events.at(-1)?.revision === lasts[n], `cluster ${n}'s store feed`);
          for (const [i, w] of watches[n].entries()) {
            await until(() => w.events.length >= want.events.length || w.errors.length > 0, `cluster ${n}, replica ${i}`).catch((err: Error) => {
              throw new Error(`${err.message}: got ${w.events.length} of ${want.events.length} events; replicas ${JSON.stringify(c.map((r) => r.cache.status()))}`);
            });
            expect(w.errors).toEqual([]);
            expect(shape(w.events)).toEqual(shape(want.events));
          }
          // A shared history holds this cluster's events only (the pump appends them soon after publishing).
          const history = c[0].history;
          if (history.scope === 'cluster') {
            const read = () => history.read(bases[n], 1000).catch((err: Error) => err);
            let got = await read();
            for (const deadline = Date.now() + WAIT_MS; !(got instanceof Error) && got.through < lasts[n] && Date.now() < deadline; got = await read()) await sleep(20);
            // (The history has every event of the cluster: its pump's Lease renewals too.)
            expect(got instanceof Error ? got : shape(got.events.filter((e) => e.key.startsWith(CM)))).toEqual(shape(want.events));
          }
          // A resume on a replica started later replays this cluster's history only (its own history, or the shared one).
          const late = await replica({ cluster: c === mine ? scope : other, pump: false });
          expect(await late.cache.waitForRevision(lasts[n], WAIT_MS)).toBe(true);
          const resumed = watchOn(late.cache, CM, bases[n]);
          await until(() => resumed.events.length >= want.events.length || resumed.errors.length > 0, `cluster ${n}'s resumed watch`);
          expect(resumed.errors).toEqual([]);
          expect(shape(resumed.events)).toEqual(shape(want.events));
          expect(late.cache.list(CM).items.map((kv) => kv.value)).toEqual((await c[0].store.list(CM)).items.map((kv) => kv.value));
        }
        expect(truths.map((t) => t.events.filter((e) => e.type === 'create').map((e) => JSON.parse(e.value!).cluster))).toEqual([Array(20).fill(0), Array(20).fill(1)]);
      });
    });
  });
}
