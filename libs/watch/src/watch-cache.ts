import { CompactedError, type KeyValue, type ListResult, type Store, type StoreEvent, type WatchHandle } from '@orch/storage';
import type { BusSubscription, EventBatch, WatchBus } from './bus';
import { HistoryExpiredError, MemoryHistory, type EventHistory } from './history';

export { HistoryExpiredError };

/** The cache lost continuity with the store; every watch is ended and clients relist. */
export class WatchCacheResetError extends Error {}

/** A watcher that did not keep up with the events it must replay or receive is ended with this. */
export class WatcherTooSlowError extends Error {}

export interface WatchSubscriber {
  /** Called in revision order, once per event under the subscribed prefix. */
  onEvent(event: StoreEvent): void;
  /** The subscription ended (history lost, too slow, cache reset); no more events follow. */
  onError(err: Error): void;
}

export interface Subscription {
  unsubscribe(): void;
  /**
   * Every event under the prefix up to this revision has been handed to the subscriber: the
   * only revision a BOOKMARK may carry (a replaying subscriber lags the cache).
   */
  progress(): number;
}

export interface WatchCacheOptions {
  /** Key prefix of everything the cache follows ('/registry/'). */
  prefix: string;
  /** Where the pump's batches arrive (default: a LocalBus nobody publishes on: the store feed is followed directly). */
  bus?: WatchBus;
  /** Where resuming watches replay from (default: memory with retentionMs). */
  history?: EventHistory;
  /** Retention of the default memory history. */
  retentionMs?: number;
  /** Without any bus batch for this long (heartbeats included), the replica follows the store itself (default 3 s). */
  busSilenceMs?: number;
  /** Live events a resuming watch may hold back while it replays older ones (default 10,000). */
  maxCatchUpEvents?: number;
  log?: (message: string) => void;
}

/** One cached object: the stored value (shared with the events that carry it) and its revision. */
interface CachedObject {
  key: string;
  value: string;
  revision: number;
}

interface Sub {
  prefix: string;
  subscriber: WatchSubscriber;
  /** Every event under prefix up to this revision was handed to the subscriber. */
  delivered: number;
  /** Replay done: dispatched events go straight to the subscriber. */
  live: boolean;
  /** Live events held back while replaying. */
  held: StoreEvent[];
  ended: boolean;
  replayFeed?: WatchHandle;
}

export type FeedMode = 'starting' | 'bus' | 'store' | 'resetting' | 'stopped';

export interface WatchCacheStatus {
  mode: FeedMode;
  position: number;
  /** The replica can serve watches: it follows the bus or the store without a failure pending. */
  ready: boolean;
  reason?: string;
}

const REPLAY_PAGE = 1000;
const LIST_PAGE = 10_000;

/**
 * One replica's watch cache: every object under `prefix` (values as stored) and a position in
 * the store's change feed, kept current from the pump's bus batches. Watches subscribe here.
 *
 * Contract:
 * - Continuity: an event is applied only when the cache has every event before it. A bus batch
 *   whose `after` is above the position (a lost batch), or silence on the bus, switches the
 *   replica to following the store's change feed itself from its position; the first bus
 *   batch that continues the position switches it back. If the store no longer has the
 *   history after the position, the cache resets: every subscriber ends with
 *   WatchCacheResetError (clients relist) and the cache relists. It never skips.
 * - A subscriber receives every event under its prefix with revision > fromRevision, exactly
 *   once, in revision order, or onError and nothing more. Older events replay from the
 *   history, then from the store's own feed when the history cannot prove continuity;
 *   HistoryExpiredError only when the store has compacted them too (410).
 * - Memory: the values held by cached objects, history events and subscribers are the same
 *   strings; an update's prevValue is the cached value it replaced, not a second copy.
 */
export class WatchCache {
  /** Cached objects by directory (the key up to its last '/': a namespace of a resource, or a cluster-scoped resource), then key. */
  private readonly objects = new Map<string, Map<string, CachedObject>>();
  /** Objects of a directory ordered by key (list pages); dropped when the directory gains or loses a key. */
  private readonly sorted = new Map<string, CachedObject[]>();
  private position = 0;
  private mode: FeedMode = 'starting';
  private failure?: string;
  private direct?: WatchHandle;
  private busSub?: BusSubscription;
  private lastBatchAt = 0;
  private silenceTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = 100;
  private readonly subsByPrefix = new Map<string, Set<Sub>>();
  /** Subscribers whose prefix does not end in '/', matched by startsWith. */
  private readonly oddSubs = new Set<Sub>();
  private waiters: { revision: number; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }[] = [];
  readonly bus?: WatchBus;
  readonly history: EventHistory;
  private readonly log: (message: string) => void;

  constructor(
    private readonly store: Store,
    private readonly opts: WatchCacheOptions,
  ) {
    this.bus = opts.bus;
    this.history = opts.history ?? new MemoryHistory({ retentionMs: opts.retentionMs ?? 5 * 60_000 });
    this.log = opts.log ?? ((m) => console.warn(m));
  }

  /** Lists the store, then follows the feed from the list's revision. */
  async start(): Promise<void> {
    await this.relist();
    this.followStore();
    if (this.bus) {
      this.busSub = this.bus.subscribe((batch) => this.onBatch(batch));
      const silence = this.opts.busSilenceMs ?? 3000;
      this.silenceTimer = setInterval(() => {
        if (this.mode === 'bus' && Date.now() - this.lastBatchAt > silence) {
          this.log(`watch cache: no batch on the ${this.bus!.name} bus for ${silence} ms; following the store at ${this.position}`);
          this.followStore();
        }
      }, Math.max(10, Math.floor(silence / 3)));
      this.silenceTimer.unref?.();
    }
  }

  /** The newest revision the cache has applied: every event up to it is in the cache. */
  currentRevision(): number {
    return this.position;
  }

  status(): WatchCacheStatus {
    const ready = (this.mode === 'bus' || this.mode === 'store') && !this.failure;
    return { mode: this.mode, position: this.position, ready, reason: ready ? undefined : (this.failure ?? `watch cache is ${this.mode}`) };
  }

  /** The cached object at key, if any (as of currentRevision()). */
  get(key: string): KeyValue | undefined {
    const o = this.objects.get(directoryOf(key))?.get(key);
    return o && { key: o.key, value: o.value, createRevision: 0, modRevision: o.revision };
  }

  /**
   * The cached objects under prefix, ordered by key, as of currentRevision(): with `startAfter`
   * only keys after it, with `limit` at most that many (the Store's list page, so a list can
   * continue in the store at the same revision). createRevision is not kept (0).
   */
  list(prefix: string, page: { startAfter?: string; limit?: number } = {}): ListResult {
    const after = page.startAfter ?? '';
    const limit = page.limit && page.limit > 0 ? page.limit : Number.POSITIVE_INFINITY;
    // Directories under the prefix (a namespace of a resource is one), and those around it (filtered).
    const dirs = [...this.objects.keys()].filter((dir) => dir.startsWith(prefix) || prefix.startsWith(dir)).sort();
    // A directory's keys all sort together unless another directory begins with it (keys of
    // a cluster-scoped resource beside namespaced ones under it): then one sort of them all.
    const nested = dirs.some((dir, i) => i > 0 && dir.startsWith(dirs[i - 1]));
    const runs: CachedObject[][] = nested
      ? [dirs.flatMap((dir) => this.sortedBucket(dir)).sort((a, b) => compareKeys(a.key, b.key))]
      : dirs.map((dir) => this.sortedBucket(dir));
    const items: KeyValue[] = [];
    let remaining = 0;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r];
      // A run of one directory under the prefix matches whole: its rest is counted, not walked.
      const whole = !nested && dirs[r].startsWith(prefix);
      for (let i = firstAfter(run, after); i < run.length; i++) {
        const o = run[i];
        if (!whole && !o.key.startsWith(prefix)) continue;
        if (items.length < limit) {
          items.push({ key: o.key, value: o.value, createRevision: 0, modRevision: o.revision });
          continue;
        }
        if (!whole) {
          remaining++;
          continue;
        }
        remaining += run.length - i;
        break;
      }
    }
    return { items, revision: this.position, remaining };
  }

  /** A directory's objects ordered by key (kept until an object is added to it or removed). */
  private sortedBucket(dir: string): CachedObject[] {
    let sorted = this.sorted.get(dir);
    if (!sorted) {
      sorted = [...(this.objects.get(dir)?.values() ?? [])].sort((a, b) => compareKeys(a.key, b.key));
      this.sorted.set(dir, sorted);
    }
    return sorted;
  }

  /** Number of cached objects under `prefix` (priority and fairness estimates a list's cost from it). */
  count(prefix: string): number {
    let n = 0;
    for (const [dir, bucket] of this.objects) if (dir.startsWith(prefix)) n += bucket.size;
    return n;
  }

  /** Number of cached objects (metrics, tests). */
  size(): number {
    let n = 0;
    for (const bucket of this.objects.values()) n += bucket.size;
    return n;
  }

  /**
   * Subscribes to events under prefix with revision > fromRevision (see the class contract).
   * Replayed events may arrive before this returns; failures arrive through onError.
   */
  subscribe(prefix: string, fromRevision: number, subscriber: WatchSubscriber): Subscription {
    const sub: Sub = { prefix, subscriber, delivered: fromRevision, live: fromRevision >= this.position, held: [], ended: false };
    this.index(sub);
    if (!sub.live) void this.replay(sub, this.position);
    return { unsubscribe: () => this.end(sub), progress: () => (sub.live ? Math.max(sub.delivered, this.position) : sub.delivered) };
  }

  /** Resolves true once the cache has applied `revision`, false after timeoutMs. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.position >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        revision,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs),
      };
      waiter.timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  stop(): void {
    this.mode = 'stopped';
    this.direct?.stop();
    this.direct = undefined;
    this.busSub?.unsubscribe();
    clearInterval(this.silenceTimer);
    clearTimeout(this.retryTimer);
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
    for (const sub of this.allSubs()) this.end(sub);
  }

  // ---------------------------------------------------------------- feed

  private isStopped(): boolean {
    return this.mode === 'stopped';
  }

  private onBatch(batch: EventBatch): void {
    if (this.mode === 'stopped' || this.mode === 'resetting' || this.mode === 'starting') return;
    this.lastBatchAt = Date.now();
    if (batch.after > this.position) {
      if (this.mode === 'bus') {
        this.log(`watch cache: bus batch after ${batch.after} does not continue position ${this.position}; following the store`);
        this.followStore();
      }
      return;
    }
    this.apply(batch.events);
    if (this.mode === 'store') {
      // The bus continues our position again: it is the feed from now on.
      this.direct?.stop();
      this.direct = undefined;
      clearTimeout(this.retryTimer);
      this.mode = 'bus';
      this.failure = undefined;
    }
  }

  /** Follows the store's change feed from the position (until the bus continues it). */
  private followStore(): void {
    if (this.mode === 'stopped' || this.mode === 'resetting') return;
    this.mode = 'store';
    this.direct?.stop();
    clearTimeout(this.retryTimer);
    this.direct = this.store.watch(this.opts.prefix, this.position, {
      onEvents: (events) => {
        this.retryDelayMs = 100;
        this.failure = undefined;
        this.apply(events);
      },
      onError: (err) => {
        this.direct = undefined;
        if (this.mode !== 'store') return;
        if (err instanceof CompactedError) {
          void this.reset(`the store no longer has the history after ${this.position}: ${err.message}`);
          return;
        }
        this.failure = `store change feed failed: ${err.message}`;
        this.log(`watch cache: ${this.failure}`);
        const delay = this.retryDelayMs * (0.5 + Math.random());
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
        this.retryTimer = setTimeout(() => {
          if (this.mode === 'store' && !this.direct) this.followStore();
        }, delay);
        this.retryTimer.unref?.();
      },
    });
  }

  /** Continuity lost: end every subscriber, relist, follow again. */
  private async reset(reason: string): Promise<void> {
    this.log(`watch cache: reset: ${reason}`);
    this.mode = 'resetting';
    this.failure = reason;
    this.direct?.stop();
    this.direct = undefined;
    for (const sub of this.allSubs()) this.fail(sub, new WatchCacheResetError(`watch cache lost continuity: ${reason}`));
    for (;;) {
      try {
        await this.relist();
        break;
      } catch (err) {
        if (this.isStopped()) return;
        this.failure = `relist failed: ${(err as Error).message}`;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    if (this.isStopped()) return;
    this.failure = undefined;
    this.mode = 'store';
    this.followStore();
  }

  /** Replaces the cached objects with a snapshot of the store. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, Map<string, CachedObject>>();
    let revision: number | undefined;
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.store.list(this.opts.prefix, { revision, startAfter, limit: LIST_PAGE });
      revision = page.revision;
      for (const kv of page.items) bucketOf(fresh, kv.key).set(kv.key, { key: kv.key, value: kv.value, revision: kv.modRevision });
      if (page.remaining === 0 || page.items.length === 0) break;
      startAfter = page.items[page.items.length - 1].key;
    }
    this.objects.clear();
    this.sorted.clear();
    for (const [k, v] of fresh) this.objects.set(k, v);
    this.position = revision ?? 0;
    if (this.history.scope === 'replica') await this.history.append(this.position, []);
  }

  /** Applies events in order (those at or below the position are duplicates and skipped). */
  private apply(events: StoreEvent[]): void {
    const after = this.position;
    const applied: StoreEvent[] = [];
    for (const e of events) {
      if (e.revision <= this.position) continue;
      const bucket = bucketOf(this.objects, e.key);
      const cached = bucket.get(e.key);
      const key = cached?.key ?? e.key;
      // prevValue is the cached value it replaces: one string for the object, the history and every watcher.
      // Every field in one literal: V8 keeps them in the object (no second, out-of-object array per event).
      const prevValue = e.type === 'create' ? undefined : (cached?.value ?? e.prevValue);
      const event: StoreEvent = { type: e.type, key, revision: e.revision, value: e.value, prevValue };
      if (e.type === 'delete') {
        bucket.delete(key);
        this.sorted.delete(directoryOf(key));
        if (bucket.size === 0) this.objects.delete(directoryOf(key));
      } else if (cached) {
        cached.value = e.value!;
        cached.revision = e.revision;
      } else {
        bucket.set(key, { key, value: e.value!, revision: e.revision });
        this.sorted.delete(directoryOf(key));
      }
      this.position = e.revision;
      applied.push(event);
      this.dispatch(event);
    }
    if (applied.length === 0) return;
    if (this.history.scope === 'replica') void this.history.append(after, applied);
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.revision <= this.position);
      this.waiters = this.waiters.filter((w) => w.revision > this.position);
      for (const w of ready) {
        clearTimeout(w.timer);
        w.resolve(true);
      }
    }
  }

  // ---------------------------------------------------------------- subscribers

  private dispatch(event: StoreEvent): void {
    if (this.subsByPrefix.size > 0) {
      const key = event.key;
      for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) {
        const set = this.subsByPrefix.get(key.slice(0, i + 1));
        if (set) for (const sub of set) this.deliver(sub, event);
      }
    }
    for (const sub of this.oddSubs) if (event.key.startsWith(sub.prefix)) this.deliver(sub, event);
  }

  private deliver(sub: Sub, event: StoreEvent): void {
    if (sub.ended) return;
    if (!sub.live) {
      if (sub.held.length >= (this.opts.maxCatchUpEvents ?? 10_000)) {
        this.fail(sub, new WatcherTooSlowError(`watch replay did not catch up with ${sub.held.length} newer events`));
        return;
      }
      sub.held.push(event);
      return;
    }
    if (event.revision <= sub.delivered) return;
    sub.delivered = event.revision;
    try {
      sub.subscriber.onEvent(event);
    } catch (err) {
      this.fail(sub, err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Replays (from, upTo] to a new subscriber: history first, then the store's feed; then live. */
  private async replay(sub: Sub, upTo: number): Promise<void> {
    let at = sub.delivered;
    try {
      for (;;) {
        const page = await this.history.read(at, REPLAY_PAGE);
        if (sub.ended) return;
        this.deliverReplayed(sub, page.events);
        at = page.through;
        if (!page.more) break;
      }
    } catch (err) {
      if (sub.ended) return;
      if (!(err instanceof HistoryExpiredError)) this.log(`watch cache: ${this.history.name} history read failed, replaying from the store: ${(err as Error).message}`);
    }
    if (at >= upTo || sub.delivered > upTo) {
      this.goLive(sub);
      return;
    }
    sub.delivered = Math.max(at, sub.delivered);
    this.replayFromStore(sub, upTo, 100);
  }

  /**
   * The store's own feed has the rest of a replay (or says it is compacted: 410). A broken feed
   * (a store member going away) is followed again from what the subscriber has, with backoff;
   * the held live events stay bounded meanwhile.
   */
  private replayFromStore(sub: Sub, upTo: number, retryDelayMs: number): void {
    sub.replayFeed = this.store.watch(sub.prefix, sub.delivered, {
      onEvents: (events) => {
        if (sub.ended || sub.live) return;
        this.deliverReplayed(sub, events);
        // Past upTo, the store's feed has delivered all that came before the held events.
        if (sub.delivered > upTo) this.goLive(sub);
      },
      onError: (err) => {
        if (sub.ended || sub.live) return;
        if (err instanceof CompactedError) {
          this.fail(sub, new HistoryExpiredError(err.requested, err.compacted));
          return;
        }
        const retry = setTimeout(() => {
          if (!sub.ended && !sub.live) this.replayFromStore(sub, upTo, Math.min(retryDelayMs * 2, 5000));
        }, retryDelayMs * (0.5 + Math.random()));
        retry.unref?.();
      },
    });
  }

  private deliverReplayed(sub: Sub, events: StoreEvent[]): void {
    for (const e of events) {
      if (sub.ended) return;
      if (e.revision <= sub.delivered || !e.key.startsWith(sub.prefix)) continue;
      sub.delivered = e.revision;
      try {
        sub.subscriber.onEvent(e);
      } catch (err) {
        this.fail(sub, err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private goLive(sub: Sub): void {
    sub.replayFeed?.stop();
    sub.replayFeed = undefined;
    const held = sub.held;
    sub.held = [];
    sub.live = true;
    for (const e of held) this.deliver(sub, e);
  }

  private index(sub: Sub): void {
    if (!sub.prefix.endsWith('/')) {
      this.oddSubs.add(sub);
      return;
    }
    let set = this.subsByPrefix.get(sub.prefix);
    if (!set) this.subsByPrefix.set(sub.prefix, (set = new Set()));
    set.add(sub);
  }

  private end(sub: Sub): void {
    if (sub.ended) return;
    sub.ended = true;
    sub.replayFeed?.stop();
    sub.held = [];
    this.oddSubs.delete(sub);
    const set = this.subsByPrefix.get(sub.prefix);
    if (set) {
      set.delete(sub);
      if (set.size === 0) this.subsByPrefix.delete(sub.prefix);
    }
  }

  private fail(sub: Sub, err: Error): void {
    if (sub.ended) return;
    this.end(sub);
    sub.subscriber.onError(err);
  }

  private allSubs(): Sub[] {
    return [...[...this.subsByPrefix.values()].flatMap((s) => [...s]), ...this.oddSubs];
  }
}

function bucketOf(objects: Map<string, Map<string, CachedObject>>, key: string): Map<string, CachedObject> {
  const dir = directoryOf(key);
  let bucket = objects.get(dir);
  if (!bucket) objects.set(dir, (bucket = new Map()));
  return bucket;
}

/** The key up to and including its last '/'. */
function directoryOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Index of the first object whose key is greater than `after` in a run ordered by key. */
function firstAfter(run: CachedObject[], after: string): number {
  if (!after) return 0;
  let lo = 0;
  let hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (run[mid].key <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
