import {
  CompactedError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  KeyValue,
  ListResult,
  RevisionConflictError,
  Store,
  StoreError,
  StoreEvent,
  StoreOptions,
} from './store';

/**
 * Opens a Store for one test. Stores opened by one factory may share a backend (e.g. one
 * etcd), so the suite never assumes revisions start at 1 or are contiguous.
 */
export type StoreFactory = (opts: StoreOptions) => Promise<Store>;

type ErrorClass = new (...args: never[]) => StoreError;

/** A watch that records what it receives, with a way to wait for it. */
interface Recorder {
  events: StoreEvent[];
  errors: Error[];
  stop(): void;
  /** Resolves once `n` events arrived; rejects on a watch error or after timeoutMs. */
  waitFor(n: number, timeoutMs?: number): Promise<StoreEvent[]>;
  /** Resolves with the first watch error. */
  waitForError(timeoutMs?: number): Promise<Error>;
}

function record(store: Store, prefix: string, afterRevision: number): Recorder {
  const events: StoreEvent[] = [];
  const errors: Error[] = [];
  const poll = <T>(ready: () => T | undefined, what: string, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const check = () => {
        let value: T | undefined;
        try {
          value = ready();
        } catch (err) {
          return reject(err);
        }
        if (value !== undefined) return resolve(value);
        if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}; got ${events.length} events, errors: ${errors.join('; ')}`));
        setTimeout(check, 5);
      };
      check();
    });
  const handle = store.watch(prefix, afterRevision, {
    onEvents: (batch) => events.push(...batch),
    onError: (err) => errors.push(err),
  });
  return {
    events,
    errors,
    stop: () => handle.stop(),
    waitFor: (n, timeoutMs = 5000) =>
      poll(
        () => {
          if (errors.length > 0) throw errors[0];
          return events.length >= n ? events : undefined;
        },
        `${n} events`,
        timeoutMs,
      ),
    waitForError: (timeoutMs = 5000) => poll(() => errors[0], 'a watch error', timeoutMs),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same table-driven tests for every Store backend. */
export function describeStoreConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    const opened: Store[] = [];
    let store: Store;
    let p: string;
    let run = 0;
    const noCompaction: StoreOptions = { historyRetentionMs: 3_600_000, compactionIntervalMs: 3_600_000 };
    const open = async (opts: StoreOptions = noCompaction) => {
      const s = await factory(opts);
      opened.push(s);
      return s;
    };

    beforeEach(async () => {
      store = await open();
      p = `/conformance/${process.pid}-${++run}/`;
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    describe('writes', () => {
      const cases: {
        name: string;
        present: boolean;
        act: (s: Store, key: string, current?: KeyValue) => Promise<unknown>;
        wantError?: ErrorClass;
        /** The value afterwards; undefined: the key is absent. */
        want: string | undefined;
      }[] = [
        // create
        { name: 'create an absent key', present: false, act: (s, k) => s.create(k, 'new'), want: 'new' },
        { name: 'create a present key', present: true, act: (s, k) => s.create(k, 'new'), wantError: KeyExistsError, want: 'old' },
        // update
        { name: 'update', present: true, act: (s, k) => s.update(k, 'new'), want: 'new' },
        { name: 'update at the current revision', present: true, act: (s, k, c) => s.update(k, 'new', c!.modRevision), want: 'new' },
        { name: 'update at a stale revision', present: true, act: (s, k, c) => s.update(k, 'new', c!.modRevision - 1), wantError: RevisionConflictError, want: 'old' },
        { name: 'update an absent key', present: false, act: (s, k) => s.update(k, 'new'), wantError: KeyNotFoundError, want: undefined },
        { name: 'update an absent key at a revision', present: false, act: (s, k) => s.update(k, 'new', 1), wantError: KeyNotFoundError, want: undefined },
        { name: 'update an absent key at revision 0', present: false, act: (s, k) => s.update(k, 'new', 0), wantError: KeyNotFoundError, want: undefined },
        // delete
        { name: 'delete', present: true, act: (s, k) => s.delete(k), want: undefined },
        { name: 'delete at the current revision', present: true, act: (s, k, c) => s.delete(k, c!.modRevision), want: undefined },
        { name: 'delete at a stale revision', present: true, act: (s, k, c) => s.delete(k, c!.modRevision - 1), wantError: RevisionConflictError, want: 'old' },
        { name: 'delete an absent key', present: false, act: (s, k) => s.delete(k), wantError: KeyNotFoundError, want: undefined },
        { name: 'delete an absent key at revision 0', present: false, act: (s, k) => s.delete(k, 0), wantError: KeyNotFoundError, want: undefined },
      ];
      it.each(cases)('$name', async ({ present, act, wantError, want }) => {
        const key = `${p}k`;
        const current = present ? await store.create(key, 'old') : undefined;
        const before = await store.currentRevision();
        const result = act(store, key, current);
        if (wantError) {
          await expect(result).rejects.toBeInstanceOf(wantError);
          await expect(result).rejects.toMatchObject({ key, name: wantError.name });
          expect(await store.currentRevision()).toBe(before); // a failed write takes no revision
        } else {
          await result;
          expect(await store.currentRevision()).toBeGreaterThan(before);
        }
        expect((await store.get(key))?.value).toBe(want);
      });

      it('returns the revisions of each write, strictly increasing', async () => {
        const key = `${p}k`;
        const created = await store.create(key, 'v1');
        expect(created).toEqual({ key, value: 'v1', createRevision: created.modRevision, modRevision: created.modRevision });
        expect(await store.get(key)).toEqual(created);

        const updated = await store.update(key, 'v2', created.modRevision);
        expect(updated).toEqual({ key, value: 'v2', createRevision: created.createRevision, modRevision: updated.modRevision });
        expect(updated.modRevision).toBeGreaterThan(created.modRevision);

        const deleted = await store.delete(key, updated.modRevision);
        expect(deleted).toEqual({ prev: updated, revision: deleted.revision });
        expect(deleted.revision).toBeGreaterThan(updated.modRevision);

        const recreated = await store.create(key, 'v3');
        expect(recreated.createRevision).toBe(recreated.modRevision);
        expect(recreated.createRevision).toBeGreaterThan(deleted.revision);
        expect(await store.currentRevision()).toBe(recreated.modRevision);
      });

      it('reports the actual revision on a conflict', async () => {
        const key = `${p}k`;
        const kv = await store.create(key, 'v');
        await expect(store.update(key, 'x', kv.modRevision + 100)).rejects.toMatchObject({ actualRevision: kv.modRevision });
      });

      it('gives concurrent writes distinct, increasing revisions and one winner per precondition', async () => {
        const key = `${p}contended`;
        const kv = await store.create(key, 'v0');
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.update(key, `v${i + 1}`, kv.modRevision)));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof RevisionConflictError)).toBe(true);

        const created = await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(`${p}c${i}`, 'v')));
        const revisions = created.map((c) => c.modRevision).sort((a, b) => a - b);
        expect(new Set(revisions).size).toBe(50);
        expect(revisions[0]).toBeGreaterThan(kv.modRevision);
      });
    });

    describe('reads at a revision', () => {
      it('get sees each revision of a key, and fails for future revisions', async () => {
        const key = `${p}k`;
        const base = await store.currentRevision();
        const v1 = await store.create(key, 'v1');
        const v2 = await store.update(key, 'v2');
        const del = await store.delete(key);
        const v3 = await store.create(key, 'v3');
        const cases: { at: number; want: KeyValue | undefined }[] = [
          // (revision 0 means latest, so a store that was empty has no "before" to read)
          ...(base > 0 ? [{ at: base, want: undefined }] : []),
          { at: v1.modRevision, want: v1 },
          { at: v2.modRevision, want: v2 },
          { at: del.revision, want: undefined },
          { at: v3.modRevision, want: v3 },
          { at: 0, want: v3 },
        ];
        for (const { at, want } of cases) expect({ at, got: await store.get(key, at) }).toEqual({ at, got: want });
        const future = (await store.currentRevision()) + 1000;
        await expect(store.get(key, future)).rejects.toBeInstanceOf(FutureRevisionError);
        await expect(store.list(p, { revision: future })).rejects.toBeInstanceOf(FutureRevisionError);
      });

      it('list at an old revision returns that snapshot', async () => {
        await store.create(`${p}a`, 'a1');
        await store.create(`${p}b`, 'b1');
        const mid = await store.currentRevision();
        await store.update(`${p}a`, 'a2');
        await store.delete(`${p}b`);
        await store.create(`${p}c`, 'c1');

        const old = await store.list(p, { revision: mid });
        expect(old.revision).toBe(mid);
        expect(old.items.map((kv) => [kv.key, kv.value])).toEqual([
          [`${p}a`, 'a1'],
          [`${p}b`, 'b1'],
        ]);
        const now = await store.list(p);
        expect(now.items.map((kv) => [kv.key, kv.value])).toEqual([
          [`${p}a`, 'a2'],
          [`${p}c`, 'c1'],
        ]);
      });
    });

    describe('list and count', () => {
      const keys = ['a/b', 'a/b/c', 'a/b/d', 'a/bc', 'a/c', 'b'];
      it.each([
        { name: 'directory prefix excludes siblings with a longer name', prefix: 'a/b/', want: ['a/b/c', 'a/b/d'] },
        { name: 'plain string prefix', prefix: 'a/b', want: ['a/b', 'a/b/c', 'a/b/d', 'a/bc'] },
        { name: 'nested', prefix: 'a/', want: ['a/b', 'a/b/c', 'a/b/d', 'a/bc', 'a/c'] },
        { name: 'everything, ordered by key', prefix: '', want: keys },
        { name: 'nothing', prefix: 'z', want: [] },
      ])('$name', async ({ prefix, want }) => {
        for (const k of [...keys].reverse()) await store.create(`${p}${k}`, k);
        const res = await store.list(`${p}${prefix}`);
        expect(res.items.map((kv) => kv.key.slice(p.length))).toEqual(want);
        expect(res.items.every((kv) => kv.value === kv.key.slice(p.length))).toBe(true);
        expect(res.remaining).toBe(0);
        expect(res.revision).toBe(await store.currentRevision());
        expect(await store.count(`${p}${prefix}`)).toBe(want.length);
      });

      it.each([
        { name: 'limit below the size', opts: { limit: 2 }, want: ['k0', 'k1'], remaining: 3 },
        { name: 'limit equal to the size', opts: { limit: 5 }, want: ['k0', 'k1', 'k2', 'k3', 'k4'], remaining: 0 },
        { name: 'limit above the size', opts: { limit: 50 }, want: ['k0', 'k1', 'k2', 'k3', 'k4'], remaining: 0 },
        { name: 'limit 0 means all', opts: { limit: 0 }, want: ['k0', 'k1', 'k2', 'k3', 'k4'], remaining: 0 },
        { name: 'startAfter', opts: { startAfter: 'k1', limit: 2 }, want: ['k2', 'k3'], remaining: 1 },
        { name: 'startAfter between keys', opts: { startAfter: 'k1x' }, want: ['k2', 'k3', 'k4'], remaining: 0 },
        { name: 'startAfter the last key', opts: { startAfter: 'k4', limit: 2 }, want: [], remaining: 0 },
      ])('paging: $name', async ({ opts, want, remaining }) => {
        for (let i = 0; i < 5; i++) await store.create(`${p}k${i}`, `v${i}`);
        const res = await store.list(p, { ...opts, startAfter: opts.startAfter && `${p}${opts.startAfter}` });
        expect(res.items.map((kv) => kv.key.slice(p.length))).toEqual(want);
        expect(res.remaining).toBe(remaining);
      });

      it('pages over one snapshot while writes happen in between', async () => {
        const original = new Map<string, string>();
        for (let i = 0; i < 10; i++) {
          const key = `${p}k${String(i).padStart(2, '0')}`;
          await store.create(key, `v${i}`);
          original.set(key, `v${i}`);
        }
        await store.create(`${p.slice(0, -1)}x/outside`, 'x');
        const seen: [string, string][] = [];
        let page = await store.list(p, { limit: 3 });
        const snapshot = page.revision;
        expect(page.remaining).toBe(7);
        for (let round = 0; ; round++) {
          seen.push(...page.items.map((kv): [string, string] => [kv.key, kv.value]));
          expect(page.revision).toBe(snapshot);
          expect(page.remaining).toBe(10 - seen.length);
          if (page.remaining === 0) break;
          // Writes between pages must not show up in the snapshot.
          await store.delete(`${p}k0${round + 4}`);
          await store.update(`${p}k09`, `changed${round}`);
          await store.create(`${p}k${round}-new`, 'new');
          page = await store.list(p, { limit: 3, revision: snapshot, startAfter: page.items[page.items.length - 1].key });
        }
        expect(seen).toEqual([...original.entries()]);
        expect(await store.count(p)).toBe(10 - 3 + 3);
      });

      it('counts live keys only', async () => {
        for (let i = 0; i < 4; i++) await store.create(`${p}k${i}`, 'v');
        await store.delete(`${p}k1`);
        expect(await store.count(p)).toBe(3);
        expect(await store.count(`${p}k1`)).toBe(0);
        expect(await store.count(`${p}nothing`)).toBe(0);
      });
    });

    describe('compaction', () => {
      it('makes older revisions unreadable and keeps the compacted one', async () => {
        const key = `${p}k`;
        const v1 = await store.create(key, 'v1');
        const v2 = await store.update(key, 'v2');
        const v3 = await store.update(key, 'v3');
        const gone = await store.create(`${p}gone`, 'x');
        const deleted = await store.delete(`${p}gone`);
        await store.compact(v2.modRevision);
        expect(await store.compactedRevision()).toBeGreaterThanOrEqual(v2.modRevision);

        await expect(store.get(key, v1.modRevision)).rejects.toBeInstanceOf(CompactedError);
        await expect(store.get(key, v1.modRevision)).rejects.toMatchObject({ requested: v1.modRevision, compacted: v2.modRevision });
        await expect(store.list(p, { revision: v1.modRevision })).rejects.toBeInstanceOf(CompactedError);
        expect(await store.get(key, v2.modRevision)).toEqual(v2);
        expect(await store.get(key)).toEqual(v3);
        expect((await store.list(p)).items.map((kv) => kv.value)).toEqual(['v3']);

        const watchFromOld = record(store, p, v1.modRevision);
        expect(await watchFromOld.waitForError()).toBeInstanceOf(CompactedError);
        expect(watchFromOld.events).toEqual([]);
        const watchFromCompacted = record(store, p, v2.modRevision);
        const events = await watchFromCompacted.waitFor(3);
        watchFromCompacted.stop();
        expect(events.map((e) => [e.type, e.revision, e.prevValue])).toEqual([
          ['update', v3.modRevision, 'v2'],
          ['create', gone.modRevision, undefined],
          ['delete', deleted.revision, 'x'],
        ]);

        await expect(store.compact(v1.modRevision)).resolves.toBeUndefined();
        await expect(store.compact((await store.currentRevision()) + 100)).rejects.toBeInstanceOf(FutureRevisionError);
      });

      it('keeps every snapshot and event at or after the compacted revision', async () => {
        // A deterministic mix of creates, updates and deletes over a few keys.
        const live = new Set<string>();
        for (let i = 0; i < 60; i++) {
          const key = `${p}k${(i * 7) % 8}`;
          if (!live.has(key)) {
            await store.create(key, `v${i}`);
            live.add(key);
          } else if (i % 3 === 0) {
            await store.delete(key);
            live.delete(key);
          } else {
            await store.update(key, `v${i}`);
          }
        }
        const last = await store.currentRevision();
        const cut = last - 25;
        const snapshots = new Map<number, ListResult['items']>();
        for (let rev = cut; rev <= last; rev++) snapshots.set(rev, (await store.list(p, { revision: rev })).items);
        const before = record(store, p, cut);
        const eventsBefore = await before.waitFor(25);
        before.stop();

        await store.compact(cut);
        for (const [rev, items] of snapshots) expect({ rev, items: (await store.list(p, { revision: rev })).items }).toEqual({ rev, items });
        await expect(store.list(p, { revision: cut - 1 })).rejects.toBeInstanceOf(CompactedError);
        const after = record(store, p, cut);
        expect(await after.waitFor(25)).toEqual(eventsBefore);
        after.stop();
      });

      it('compacts history older than the retention on its own', async () => {
        const timed = await open({ historyRetentionMs: 150, compactionIntervalMs: 30 });
        const first = await timed.create(`${p}k`, 'v1');
        await timed.update(`${p}k`, 'v2');
        const deadline = Date.now() + 5000;
        while ((await timed.compactedRevision()) < first.modRevision + 1) {
          if (Date.now() > deadline) throw new Error(`not compacted; compactedRevision ${await timed.compactedRevision()}`);
          await sleep(30);
        }
        await expect(timed.get(`${p}k`, first.modRevision)).rejects.toBeInstanceOf(CompactedError);
        expect((await timed.get(`${p}k`))?.value).toBe('v2');
      });
    });

    describe('watch', () => {
      it('replays history from a revision, then delivers live events', async () => {
        const base = await store.currentRevision();
        const a1 = await store.create(`${p}a`, 'a1');
        const a2 = await store.update(`${p}a`, 'a2');
        const del = await store.delete(`${p}a`);
        const b1 = await store.create(`${p}b`, 'b1');
        await store.create(`${p.slice(0, -1)}-other/x`, 'not mine');

        const all = record(store, p, base);
        expect(await all.waitFor(4)).toEqual([
          { type: 'create', key: `${p}a`, revision: a1.modRevision, value: 'a1' },
          { type: 'update', key: `${p}a`, revision: a2.modRevision, value: 'a2', prevValue: 'a1' },
          { type: 'delete', key: `${p}a`, revision: del.revision, prevValue: 'a2' },
          { type: 'create', key: `${p}b`, revision: b1.modRevision, value: 'b1' },
        ]);
        const fromMiddle = record(store, p, a2.modRevision);
        expect((await fromMiddle.waitFor(2)).map((e) => e.revision)).toEqual([del.revision, b1.modRevision]);

        const b2 = await store.update(`${p}b`, 'b2');
        const b3 = await store.delete(`${p}b`);
        expect((await all.waitFor(6)).slice(4)).toEqual([
          { type: 'update', key: `${p}b`, revision: b2.modRevision, value: 'b2', prevValue: 'b1' },
          { type: 'delete', key: `${p}b`, revision: b3.revision, prevValue: 'b2' },
        ]);
        expect((await fromMiddle.waitFor(4)).map((e) => e.revision)).toEqual([del.revision, b1.modRevision, b2.modRevision, b3.revision]);
        all.stop();
        fromMiddle.stop();
      });

      it('filters by prefix: /a/b/ does not see /a/bc', async () => {
        const base = await store.currentRevision();
        const dir = record(store, `${p}a/b/`, base);
        const str = record(store, `${p}a/b`, base);
        for (const k of ['a/bc', 'a/b/x', 'a/c', 'a/b']) await store.create(`${p}${k}`, k);
        await str.waitFor(3);
        await dir.waitFor(1);
        await sleep(50);
        expect(dir.events.map((e) => e.key.slice(p.length))).toEqual(['a/b/x']);
        expect(str.events.map((e) => e.key.slice(p.length))).toEqual(['a/bc', 'a/b/x', 'a/b']);
        dir.stop();
        str.stop();
      });

      it('sees each of 200 concurrent creates once, in revision order, even when started mid-burst', async () => {
        const base = await store.currentRevision();
        const before = record(store, p, base);
        const burst = Array.from({ length: 200 }, (_, i) => store.create(`${p}k${i}`, `v${i}`));
        // Let part of the burst commit, then start a watch whose replay races live events.
        await Promise.race(burst);
        const during = record(store, p, base);
        const created = await Promise.all(burst);
        const want = created.map((kv) => kv.modRevision).sort((a, b) => a - b);
        for (const w of [before, during]) {
          const events = await w.waitFor(200);
          await sleep(50);
          expect(events.map((e) => e.revision)).toEqual(want);
          expect(new Set(events.map((e) => e.key)).size).toBe(200);
          w.stop();
        }
      });

      it('stop() ends delivery', async () => {
        const w = record(store, p, await store.currentRevision());
        await store.create(`${p}a`, 'v');
        await w.waitFor(1);
        w.stop();
        await store.create(`${p}b`, 'v');
        await store.update(`${p}a`, 'v2');
        await sleep(100);
        expect(w.events).toHaveLength(1);
        expect(w.errors).toEqual([]);
      });

      it('a watch from a revision not yet reached waits for it', async () => {
        const now = await store.currentRevision();
        const w = record(store, p, now + 1);
        const first = await store.create(`${p}a`, 'v');
        const second = await store.create(`${p}b`, 'v');
        expect(first.modRevision).toBe(now + 1);
        expect((await w.waitFor(1)).map((e) => e.revision)).toEqual([second.modRevision]);
        w.stop();
      });
    });
  });
}
