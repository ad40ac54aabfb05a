import { LeaderElector, type LeaseLock } from '@orch/client';
import { CompactedError, type Store, type StoreEvent, type WatchHandle } from '@orch/storage';
import { encodedEventBytes, type WatchBus } from './bus';
import type { EventHistory } from './history';

export interface PumpElection {
  /** Where the pump's Lease lives (see storeLeaseLock: the store itself, not the API). */
  lock: LeaseLock;
  /** Unique per gateway process. */
  identity: string;
  namespace: string;
  name: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Clear the holder on stop so another replica takes over at once (default true; tests of a crash turn it off). */
  releaseOnStop?: boolean;
}

export interface PumpOptions {
  /** Key prefix of the change feed it publishes ('/registry/'). */
  prefix: string;
  /** Where a newly elected pump starts: this replica's watch cache position (receivers drop what they have). */
  startPosition: () => number;
  /** Leader election; without it this pump always publishes (in-process bus: one replica). */
  election?: PumpElection;
  /** A heartbeat batch goes out when nothing was published for this long (default 1 s). */
  heartbeatMs?: number;
  /** Published batches allowed to wait for the shared history before the pump skips some (a hole readers detect). */
  maxPendingAppends?: number;
  /**
   * Publications of events are at least this far apart (ms, default PUBLISH_INTERVAL_MS): events
   * read sooner after the last one wait for the rest of the interval and go out together.
   */
  publishIntervalMs?: number;
  /**
   * Appends to the shared history begin at least this far apart (ms, default APPEND_INTERVAL_MS):
   * what was published meanwhile goes out as one append. After a quiet interval a batch is
   * appended on the next turn, as before.
   */
  appendIntervalMs?: number;
  log?: (message: string) => void;
}

/** Default PumpOptions.publishIntervalMs. */
const PUBLISH_INTERVAL_MS = 5;

/**
 * Default PumpOptions.appendIntervalMs. A Redis append costs the pump's client about 90 us per
 * command plus 12 us per event (real redis-server, ConfigMap-sized values, a micro-bench under
 * load 12, 3-9 rounds each: 24-40 us per event in appends of 5, as the 5 ms publish interval
 * gives at 1,000 events/s; 11-13 us in appends of 20, as this interval gives). The price: the
 * history is up to this much further behind the bus, and a watch resuming from a revision the
 * history does not hold yet replays the rest from the store's feed.
 */
const APPEND_INTERVAL_MS = 20;

/**
 * The pump: the one reader of the store's ordered change feed per cluster. While it leads,
 * it publishes every event once, in revision order, as batches whose `after` lets receivers
 * prove continuity; with a cluster-wide history it appends each batch there too.
 *
 * Two pumps publishing at once (a deposed leader that has not noticed yet) is harmless:
 * both publish the same feed and receivers drop what they already have. Leadership only
 * saves the work of publishing twice. Publishing never waits for the history: a slow or
 * absent Redis leaves a hole in the history, never a stall on the bus.
 */
export class Pump {
  private feed?: WatchHandle;
  /** Every event up to this revision has been published. */
  private last = 0;
  private lastPublishAt = 0;
  private heartbeat?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;
  private retryDelayMs = 100;
  private leading = false;
  private stopped = false;
  private readonly abort = new AbortController();
  private campaign?: Promise<void>;
  /** Events read from the feed and not published yet (see enqueue). */
  private pending: StoreEvent[] = [];
  /** Cancels the publication of `pending` that is scheduled. */
  private cancelFlush?: () => void;
  /** performance.now() of the last publication of events. */
  private lastEventsAt = Number.NEGATIVE_INFINITY;
  /**
   * Published batches waiting for the history, as runs of contiguous ones (each run goes out as
   * one append): while an append is in flight, the batches published meanwhile join the next.
   */
  private appendQueue: { after: number; events: StoreEvent[]; batches: number }[] = [];
  /** Batches queued or being appended. */
  private pendingAppends = 0;
  private appending?: Promise<void>;
  /** performance.now() when the last history append began. */
  private lastAppendAt = Number.NEGATIVE_INFINITY;
  private readonly log: (message: string) => void;

  constructor(
    private readonly store: Store,
    private readonly bus: WatchBus,
    /** Set only for a cluster-scope history (the pump appends what it publishes). */
    private readonly history: EventHistory | undefined,
    private readonly opts: PumpOptions,
  ) {
    this.log = opts.log ?? ((m) => console.warn(m));
  }

  start(): void {
    const election = this.opts.election;
    if (!election) {
      this.lead();
      return;
    }
    const elector = new LeaderElector({
      lock: election.lock,
      identity: election.identity,
      namespace: election.namespace,
      name: election.name,
      leaseDurationMs: election.leaseDurationMs,
      renewDeadlineMs: election.renewDeadlineMs,
      retryPeriodMs: election.retryPeriodMs,
      releaseOnCancel: election.releaseOnStop ?? true,
      logger: { info: (m) => this.log(m), warn: (m) => this.log(m), error: (m) => this.log(m) },
      onStartedLeading: (signal) => {
        this.lead();
        signal.addEventListener('abort', () => this.unlead(), { once: true });
      },
    });
    this.campaign = (async () => {
      while (!this.abort.signal.aborted) {
        await elector.run(this.abort.signal);
        this.unlead();
        if (!this.abort.signal.aborted) await new Promise((r) => setTimeout(r, election.retryPeriodMs ?? 2000));
      }
    })();
  }

  /** Whether this pump publishes now. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The revision up to which this pump has published (while leading). */
  publishedRevision(): number {
    return this.last;
  }

  /** Publishes what it has read (no wait for the interval), stops leading and following the feed, and waits for the history appends. */
  async stop(): Promise<void> {
    this.publishPending();
    this.stopped = true;
    this.abort.abort();
    this.unlead();
    await this.campaign;
    await this.appending;
  }

  private lead(): void {
    if (this.leading || this.stopped) return;
    this.leading = true;
    this.last = this.opts.startPosition();
    this.follow();
    this.publish([]);
    const every = this.opts.heartbeatMs ?? 1000;
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastPublishAt >= every) this.publish([]);
    }, Math.max(10, Math.floor(every / 2)));
    this.heartbeat.unref?.();
  }

  private unlead(): void {
    if (!this.leading) return;
    this.leading = false;
    this.feed?.stop();
    this.feed = undefined;
    clearInterval(this.heartbeat);
    clearTimeout(this.retry);
    this.cancelFlush?.();
    this.cancelFlush = undefined;
    this.pending = [];
  }

  private follow(): void {
    this.feed = this.store.watch(this.opts.prefix, this.last, {
      onEvents: (events) => {
        this.retryDelayMs = 100;
        this.enqueue(events);
      },
      onError: (err) => {
        this.feed = undefined;
        if (!this.leading) return;
        this.log(`watch pump: change feed failed at ${this.last}: ${err.message}`);
        // History lost: continue from now; receivers see the gap and recover from the store or relist.
        const restart = err instanceof CompactedError ? this.store.currentRevision().then((rev) => (this.last = rev)) : Promise.resolve();
        void restart.catch(() => undefined).then(() => this.scheduleFollow());
      },
    });
  }

  private scheduleFollow(): void {
    if (!this.leading) return;
    const delay = this.retryDelayMs * (0.5 + Math.random());
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
    this.retry = setTimeout(() => {
      if (this.leading && !this.feed) this.follow();
    }, delay);
    this.retry.unref?.();
  }

  /**
   * Feed responses that arrive in one turn of the event loop go out as one publication at its end
   * (setImmediate), and publications of events are at least publishIntervalMs apart: an event
   * after a quiet interval goes out at once; under a steady stream, what arrived during the
   * interval goes out as one batch at its end. Each batch costs the pump a NATS message (history
   * appends are further apart: appendIntervalMs), and every replica a receive and a turn of
   * socket writes to its watchers, whose cost per write falls with the writes per turn. Scale
   * bench, 1,000 watchers on 3 gateways at 400 events/s, same run under load: about 1.4 events
   * per batch without the interval, 8 with 20 ms; the gateways' CPU per event 0.71 -> 0.42 ms
   * (h2) and 0.74 -> 0.59 ms (HTTP/1.1), the median delivery 10 ms later. The price is at most
   * an interval's wait.
   */
  private enqueue(events: StoreEvent[]): void {
    for (const e of events) this.pending.push(e);
    if (this.cancelFlush) return;
    const flush = () => this.publishPending();
    const wait = this.lastEventsAt + (this.opts.publishIntervalMs ?? PUBLISH_INTERVAL_MS) - performance.now();
    if (wait > 1) {
      const timer = setTimeout(flush, wait);
      this.cancelFlush = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(flush);
      this.cancelFlush = () => clearImmediate(immediate);
    }
  }

  /** Publishes the events read and not published yet (while leading). */
  private publishPending(): void {
    this.cancelFlush?.();
    this.cancelFlush = undefined;
    // A restart of the feed may have moved past some of them (compaction): never publish below last.
    const ready = this.pending.filter((e) => e.revision > this.last);
    this.pending = [];
    if (!this.leading || ready.length === 0) return;
    this.lastEventsAt = performance.now();
    this.publish(ready);
  }

  /** Publishes events (all > last, in order) in batches the bus can carry; [] is a heartbeat. */
  private publish(events: StoreEvent[]): void {
    this.lastPublishAt = Date.now();
    if (events.length === 0) {
      this.bus.publish({ after: this.last, events });
      return;
    }
    const max = this.bus.maxBatchBytes;
    let start = 0;
    while (start < events.length) {
      let end = start;
      let bytes = 0;
      while (end < events.length && (end === start || bytes + encodedEventBytes(events[end]) <= max)) bytes += encodedEventBytes(events[end++]);
      const chunk = end === start + 1 && bytes > max ? undefined : events.slice(start, end);
      if (chunk) {
        this.bus.publish({ after: this.last, events: chunk });
        this.appendToHistory(this.last, chunk);
      } else {
        // One event bigger than the bus carries: say only "continue after it"; receivers
        // below it see a gap and read it from the store.
        this.bus.publish({ after: events[start].revision, events: [] });
      }
      this.last = events[end - 1].revision;
      start = end;
    }
  }

  private appendToHistory(after: number, events: StoreEvent[]): void {
    const history = this.history;
    if (!history) return;
    if (this.pendingAppends >= (this.opts.maxPendingAppends ?? 1000)) return; // a hole, detected by readers
    this.pendingAppends++;
    const run = this.appendQueue[this.appendQueue.length - 1];
    if (run && run.events[run.events.length - 1].revision === after) {
      for (const e of events) run.events.push(e);
      run.batches++;
    } else {
      this.appendQueue.push({ after, events: events.slice(), batches: 1 });
    }
    this.appending ??= this.drainAppends(history);
  }

  /**
   * Appends the queued runs one after another, until none is left: each on a later turn than its
   * publication (the batches of that turn reach the bus's socket first: NATS flushes in a
   * microtask, before the history's client spends its time on them) and at least
   * appendIntervalMs after the last append began.
   */
  private async drainAppends(history: EventHistory): Promise<void> {
    while (this.appendQueue.length > 0) {
      const wait = this.lastAppendAt + (this.opts.appendIntervalMs ?? APPEND_INTERVAL_MS) - performance.now();
      await new Promise((resolve) => (wait > 1 ? setTimeout(resolve, wait) : setImmediate(resolve)));
      const run = this.appendQueue.shift()!;
      this.lastAppendAt = performance.now();
      try {
        await history.append(run.after, run.events);
      } catch (err) {
        this.log(`watch pump: history append failed after ${run.after}: ${(err as Error).message}`);
      } finally {
        this.pendingAppends -= run.batches;
      }
    }
    this.appending = undefined;
  }
}
