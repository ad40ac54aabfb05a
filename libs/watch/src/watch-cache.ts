import type { Store, StoreEvent, WatchHandle } from '@orch/storage';
import { CompactedError } from '@orch/storage';

/** A watch asked for history that is no longer retained (the client must relist: 410). */
export class HistoryExpiredError extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
    this.name = 'HistoryExpiredError';
  }
}

/** The cache lost continuity with the store; every watch is ended and clients relist. */
export class WatchCacheResetError extends Error {}

export interface WatchSubscriber {
  /** Called in revision order, once per event under the subscribed prefix. */
  onEvent(event: StoreEvent): void;
  /** The subscription ended (history lost); no more events follow. */
  onError(err: Error): void;
}

export interface Subscription {
  unsubscribe(): void;
}

export interface WatchCacheOptions {
  /** Key prefix of everything the cache follows. */
  prefix: string;
  /** How long events stay replayable (SPEC Limits: 5 minutes). */
  retentionMs: number;
  /** Upper bound on retained events, whatever their age. */
  maxEvents?: number;
  now?: () => number;
}

interface TimedEvent {
  event: StoreEvent;
  time: number;
}

interface Sub {
  prefix: string;
  subscriber: WatchSubscriber;
}

/**
 * Follows the store's change feed and keeps a time-bounded event history so watches can
 * start from any retained resourceVersion (SPEC Events 5-6).
 *
 * Contract: a subscriber receives every event with revision > fromRevision under its
 * prefix, exactly once, in revision order, with no gap; or onError and nothing more.
 * Watches from a revision older than the retained history fail with HistoryExpiredError.
 */
export class WatchCache {
  private history: TimedEvent[] = [];
  private head = 0;
  /** Latest revision the cache has seen (all events up to it are in history or trimmed). */
  private revision = 0;
  /** Events with revision > oldest are all retained. */
  private oldest = 0;
  private readonly subsByResource = new Map<string, Set<Sub>>();
  private handle?: WatchHandle;
  private waiters: { revision: number; resolve: () => void }[] = [];
  private stopped = false;
  private restartTimer?: NodeJS.Timeout;
  private restartDelayMs = 100;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly opts: WatchCacheOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts following the store from its current revision. */
  async start(): Promise<void> {
    const rev = await this.store.currentRevision();
    this.revision = rev;
    this.oldest = rev;
    this.follow();
  }

  /** The newest revision the cache has delivered. */
  currentRevision(): number {
    return this.revision;
  }

  /** The oldest revision a watch may start from. */
  oldestRevision(): number {
    this.trim();
    return this.oldest;
  }

  /**
   * Subscribes to events under prefix with revision > fromRevision. Replayed events are
   * delivered synchronously before this returns; live ones follow as they come.
   */
  subscribe(prefix: string, fromRevision: number, subscriber: WatchSubscriber): Subscription {
    this.trim();
    if (fromRevision < this.oldest) throw new HistoryExpiredError(fromRevision, this.oldest);
    const sub: Sub = { prefix, subscriber };
    // Replay: binary search the first event after fromRevision.
    let lo = this.head;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid].event.revision <= fromRevision) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.history.length; i++) {
      const e = this.history[i].event;
      if (e.key.startsWith(prefix)) subscriber.onEvent(e);
    }
    const rk = resourceKey(prefix);
    let set = this.subsByResource.get(rk);
    if (!set) this.subsByResource.set(rk, (set = new Set()));
    set.add(sub);
    return {
      unsubscribe: () => {
        set!.delete(sub);
        if (set!.size === 0 && this.subsByResource.get(rk) === set) this.subsByResource.delete(rk);
      },
    };
  }

  /** Resolves true once the cache has seen `revision`, false after timeoutMs. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  stop(): void {
    this.stopped = true;
    this.handle?.stop();
    clearTimeout(this.restartTimer);
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  private follow(): void {
    this.handle = this.store.watch(this.opts.prefix, this.revision, {
      onEvents: (events) => this.onEvents(events),
      onError: (err) => this.onFeedError(err),
    });
  }

  private onEvents(events: StoreEvent[]): void {
    const time = this.now();
    for (const event of events) {
      if (event.revision <= this.revision) continue; // duplicate after a restart
      this.history.push({ event, time });
      this.revision = event.revision;
      const set = this.subsByResource.get(resourceKey(event.key));
      if (set) {
        for (const sub of set) {
          if (event.key.startsWith(sub.prefix)) sub.subscriber.onEvent(event);
        }
      }
    }
    this.restartDelayMs = 100;
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.revision <= this.revision);
      this.waiters = this.waiters.filter((w) => w.revision > this.revision);
      for (const w of ready) w.resolve();
    }
    this.trim();
  }

  /** Re-follows the feed with backoff; if continuity is lost, every subscriber is ended. */
  private onFeedError(err: Error): void {
    if (this.stopped) return;
    this.handle = undefined;
    if (err instanceof CompactedError) {
      const subs = [...this.subsByResource.values()].flatMap((s) => [...s]);
      this.subsByResource.clear();
      for (const s of subs) s.subscriber.onError(new WatchCacheResetError(`watch cache lost continuity: ${err.message}`));
      this.history = [];
      this.head = 0;
      void this.store.currentRevision().then((rev) => {
        this.revision = rev;
        this.oldest = rev;
        this.scheduleRestart();
      }, () => this.scheduleRestart());
      return;
    }
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopped) return;
    const delay = this.restartDelayMs * (0.5 + Math.random());
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, 10_000);
    this.restartTimer = setTimeout(() => {
      if (!this.stopped) this.follow();
    }, delay);
    this.restartTimer.unref?.();
  }

  private trim(): void {
    const cutoff = this.now() - this.opts.retentionMs;
    const max = this.opts.maxEvents ?? 500_000;
    while (this.head < this.history.length && (this.history[this.head].time < cutoff || this.history.length - this.head > max)) {
      this.oldest = this.history[this.head].event.revision;
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.history.length) {
      this.history = this.history.slice(this.head);
      this.head = 0;
    }
  }
}

/** `/registry/<group>/<resource>/` of a key or prefix: subscribers are indexed by it. */
function resourceKey(keyOrPrefix: string): string {
  let slashes = 0;
  for (let i = 0; i < keyOrPrefix.length; i++) {
    if (keyOrPrefix.charCodeAt(i) === 47 && ++slashes === 4) return keyOrPrefix.slice(0, i + 1);
  }
  return keyOrPrefix;
}
