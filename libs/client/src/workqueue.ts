import type { Logger } from './types';

/** Counters a metrics exporter can read (upstream workqueue metrics, reduced). */
export interface QueueMetrics {
  /** Keys accepted by `add` (coalesced repeats not counted). */
  adds: number;
  /** Calls of `addRateLimited`. */
  retries: number;
  /** Keys waiting to be handed out now. */
  readonly depth: number;
}

class Counters implements QueueMetrics {
  adds = 0;
  retries = 0;

  constructor(private readonly queue: { len(): number }) {}

  get depth(): number {
    return this.queue.len();
  }
}

/**
 * Work queue of keys (upstream `workqueue.Type`). Contract:
 * - It holds keys, never objects; a key is in the queue at most once: adds of a key already
 *   waiting coalesce.
 * - A key handed out by `get()` is "processing" until `done(key)`; it is never handed out
 *   twice at once. Added again meanwhile, it is queued after `done`.
 * - Keys come out in the order they were first added (FIFO).
 * - `shutDown()`: adds are ignored, waiting keys are dropped, `get()` resolves undefined.
 *   `shutDownWithDrain()`: adds are ignored, `get()` still hands out the waiting keys, and it
 *   resolves once every key is done.
 */
export class WorkQueue<K = string> {
  private queue: K[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private getters: ((key: K | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shutting = false;
  private draining = false;
  readonly metrics: QueueMetrics;

  constructor() {
    this.metrics = new Counters(this);
  }

  /** Queues `key` unless it is already waiting. Ignored after shutdown. */
  add(key: K): void {
    if (this.shutting || this.dirty.has(key)) return;
    this.metrics.adds++;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** The next key (marked processing), waiting if none; undefined once shut down. */
  get(): Promise<K | undefined> {
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of `key`; queues it again if it was added meanwhile. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !(this.shutting && !this.draining)) this.push(key);
    this.checkDrained();
  }

  /** Keys waiting (not processing). */
  len(): number {
    return this.queue.length - this.head;
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  /** Stops now: waiting keys are dropped; blocked and later `get()` calls get undefined. */
  shutDown(): void {
    this.shutting = true;
    this.queue = [];
    this.head = 0;
    this.dirty.clear();
    this.releaseGetters();
    this.checkDrained();
  }

  /** Stops accepting keys, lets workers take the waiting ones, resolves when all are done. */
  shutDownWithDrain(): Promise<void> {
    this.shutting = true;
    this.draining = true;
    const drained = new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    if (this.len() === 0) this.releaseGetters();
    this.checkDrained();
    return drained;
  }

  private push(key: K): void {
    const getter = this.getters.shift();
    if (getter) getter(this.mark(key));
    else this.queue.push(key);
  }

  private take(): K {
    const key = this.queue[this.head++];
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return this.mark(key);
  }

  private mark(key: K): K {
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  private releaseGetters(): void {
    const getters = this.getters;
    this.getters = [];
    for (const g of getters) g(undefined);
  }

  private checkDrained(): void {
    if (!this.shutting) return;
    if (this.draining && this.len() === 0) this.releaseGetters();
    if (this.processing.size === 0 && this.len() === 0 && this.drainWaiters.length) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }
}

/** A work queue that can add keys after a delay (upstream DelayingInterface). */
export class DelayingQueue<K = string> extends WorkQueue<K> {
  private readonly waiting = new Map<K, { readyAt: number; timer: NodeJS.Timeout }>();

  /**
   * Adds `key` after `ms`. A key already waiting keeps the earlier of the two times.
   * `ms <= 0` adds at once. Pending delays are dropped on shutdown.
   */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown()) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = Date.now() + ms;
    const existing = this.waiting.get(key);
    if (existing) {
      if (existing.readyAt <= readyAt) return;
      clearTimeout(existing.timer);
    }
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { readyAt, timer });
  }

  /** Keys waiting for their delay. */
  delayed(): number {
    return this.waiting.size;
  }

  override shutDown(): void {
    this.clearTimers();
    super.shutDown();
  }

  override shutDownWithDrain(): Promise<void> {
    this.clearTimers();
    return super.shutDownWithDrain();
  }

  private clearTimers(): void {
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }
}

/** Decides how long a key waits before its next retry (upstream RateLimiter). */
export interface RateLimiter<K> {
  /** Delay for this retry of `key`; counts the retry. */
  when(key: K): number;
  /** Clears the retry history of `key` (after success). */
  forget(key: K): void;
  numRequeues(key: K): number;
}

/** Per-key exponential backoff: base * 2^failures, capped (defaults 5 ms .. 1000 s). */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * Overall token bucket (default 10 qps, burst 100): each `when` reserves one token and
 * returns how long until it is available. Keys are not tracked.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(_key?: K): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(_key: K): void {
    // The bucket is shared by all keys.
  }

  numRequeues(_key: K): number {
    return 0;
  }
}

/** The longest delay of several limiters. */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(key: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/** Upstream DefaultControllerRateLimiter: per-key 5 ms → 1000 s, overall 10 qps / burst 100. */
export function defaultControllerRateLimiter<K>(): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ItemExponentialFailureRateLimiter<K>(5, 1_000_000), new BucketRateLimiter<K>(10, 100));
}

/** Delaying queue with rate-limited retries (upstream RateLimitingInterface). */
export class RateLimitingQueue<K = string> extends DelayingQueue<K> {
  constructor(private readonly limiter: RateLimiter<K> = defaultControllerRateLimiter<K>()) {
    super();
  }

  /** Re-adds `key` after the limiter's delay for it. */
  addRateLimited(key: K): void {
    this.metrics.retries++;
    this.addAfter(key, this.limiter.when(key));
  }

  /** Forgets the retry history of `key`: call after it synced successfully. */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }
}

export interface RunWorkersOptions {
  logger?: Logger;
  /** After this many failed retries a key is logged and forgotten (default: retry forever). */
  maxRetries?: number;
  /** Aborting shuts the queue down (workers finish their current key and return). */
  signal?: AbortSignal;
}

/**
 * Runs `n` workers that take keys and call `sync(key)`, one key at a time each: success →
 * `forget`, error → `addRateLimited` (logged); `done` either way. Resolves when every worker
 * has returned, i.e. after the queue is shut down and current syncs finished.
 */
export async function runWorkers<K>(queue: RateLimitingQueue<K>, n: number, sync: (key: K) => Promise<void>, opts: RunWorkersOptions = {}): Promise<void> {
  const logger = opts.logger ?? console;
  const onAbort = () => queue.shutDown();
  if (opts.signal?.aborted) queue.shutDown();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const worker = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await sync(key);
        queue.forget(key);
      } catch (err) {
        const msg = `sync ${String(key)} failed: ${(err as Error).message ?? String(err)}`;
        if (opts.maxRetries !== undefined && queue.numRequeues(key) >= opts.maxRetries) {
          logger.error(`${msg}; dropping it after ${opts.maxRetries} retries`);
          queue.forget(key);
        } else {
          logger.warn(`${msg}; retrying`);
          queue.addRateLimited(key);
        }
      } finally {
        queue.done(key);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: n }, worker));
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
