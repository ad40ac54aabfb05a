import type { StoreEvent } from '@orch/storage';

/** The history cannot prove it holds every event after `requested` (trimmed, or a hole). */
export class HistoryExpiredError extends Error {
  constructor(
    readonly requested: number,
    /** Events after this revision are retained (best knowledge; 0 when unknown). */
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
    this.name = 'HistoryExpiredError';
  }
}

export interface HistoryRead {
  /** Events with revision > after, in revision order, with prevValue for updates and deletes. */
  events: StoreEvent[];
  /** Every event in (after, through] is in `events`; the history knows nothing beyond it. */
  through: number;
  /** The read stopped at its limit: read again from `through`. */
  more: boolean;
}

/**
 * The event-history seam: the retained tail of the change feed, for watches that resume
 * from an older resourceVersion.
 *
 * Contract (every backend, see conformance.ts):
 * - append(after, events) adds events that follow `after` with nothing missing in between;
 *   events at or below the newest retained revision are skipped, so several writers may
 *   append the same feed. Appending after a gap (after above the newest revision) is
 *   allowed: the history then cannot replay across the gap.
 * - read(after) returns only a contiguous run: it throws HistoryExpiredError when it cannot
 *   prove that no event after `after` is missing (trimmed by retention, or a gap), and it
 *   stops before a gap further on (`through` tells how far it got).
 * - events older than the retention are trimmed.
 */
export interface EventHistory {
  /** A short name for logs ('memory', 'redis'). */
  readonly name: string;
  /**
   * 'replica': each replica keeps its own and appends what it applies;
   * 'cluster': one history shared by every replica, appended by the pump.
   */
  readonly scope: 'replica' | 'cluster';
  append(after: number, events: StoreEvent[]): Promise<void>;
  read(after: number, limit: number): Promise<HistoryRead>;
  close(): Promise<void>;
}

export interface MemoryHistoryOptions {
  /** How long events stay replayable (--watch-history-retention). */
  retentionMs: number;
  /** Upper bound on retained events, whatever their age (default 1,000,000). */
  maxEvents?: number;
  /**
   * Upper bound on the superseded values the history keeps (in characters: the previous values
   * of its updates and deletes, which the cache no longer holds), whatever their age (default
   * 64 Mi). Creates cost nothing here: their values are the cached objects'.
   */
  maxSupersededChars?: number;
  now?: () => number;
}

/**
 * The in-process history of the embedded default: a ring of the events this replica applied.
 * It keeps references to the events themselves (whose values the watch cache shares), never
 * copies of the objects, and their times in an array of numbers beside them (no object per
 * event). What it trims early (the bounds) is not lost: a resume from before its oldest event
 * replays from the store's own change feed (WatchCache), which keeps the retention's history.
 */
export class MemoryHistory implements EventHistory {
  readonly name = 'memory';
  readonly scope = 'replica';
  private events: StoreEvent[] = [];
  /** When each event was appended (ms), index for index with `events`. */
  private times: number[] = [];
  private head = 0;
  /** Characters of the prevValues of events[head..]. */
  private supersededChars = 0;
  /** Every event after `oldest` up to the newest entry is retained. */
  private oldest = 0;
  /** The newest revision appended (or the `after` of an empty start). */
  private newest = 0;
  private started = false;
  private readonly now: () => number;

  constructor(private readonly opts: MemoryHistoryOptions) {
    this.now = opts.now ?? Date.now;
  }

  async append(after: number, events: StoreEvent[]): Promise<void> {
    this.appendSync(after, events);
  }

  /** append without a promise (the watch cache calls it on every applied batch). */
  appendSync(after: number, events: StoreEvent[]): void {
    if (!this.started || after > this.newest) {
      // First append, or a gap: nothing before `after` can be replayed any more.
      this.clear();
      this.oldest = after;
      this.newest = after;
      this.started = true;
    }
    const time = this.now();
    for (const event of events) {
      if (event.revision <= this.newest) continue;
      this.events.push(event);
      this.times.push(time);
      if (event.prevValue !== undefined) this.supersededChars += event.prevValue.length;
      this.newest = event.revision;
    }
    this.trim();
  }

  async read(after: number, limit: number): Promise<HistoryRead> {
    return this.readSync(after, limit);
  }

  readSync(after: number, limit: number): HistoryRead {
    this.trim();
    if (!this.started || after < this.oldest) throw new HistoryExpiredError(after, this.oldest);
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid].revision <= after) lo = mid + 1;
      else hi = mid;
    }
    const end = Math.min(this.events.length, lo + limit);
    const events = this.events.slice(lo, end);
    const more = end < this.events.length;
    return { events, through: more ? events[events.length - 1].revision : Math.max(after, this.newest), more };
  }

  /** Number of retained events (metrics, tests). */
  size(): number {
    return this.events.length - this.head;
  }

  async close(): Promise<void> {
    this.clear();
  }

  private clear(): void {
    this.events = [];
    this.times = [];
    this.head = 0;
    this.supersededChars = 0;
  }

  private trim(): void {
    const cutoff = this.now() - this.opts.retentionMs;
    const maxEvents = this.opts.maxEvents ?? 1_000_000;
    const maxChars = this.opts.maxSupersededChars ?? 64 * 1024 * 1024;
    while (this.head < this.events.length && (this.times[this.head] < cutoff || this.events.length - this.head > maxEvents || this.supersededChars > maxChars)) {
      const event = this.events[this.head];
      if (event.prevValue !== undefined) this.supersededChars -= event.prevValue.length;
      this.oldest = event.revision;
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }
}
