import type { Store, StoreOptions } from './store';

/**
 * Time-based compaction for any revisioned store: every intervalMs it samples
 * (now, currentRevision) and compacts to the newest sampled revision that is at least
 * retentionMs old, so history is kept for between retentionMs and retentionMs + intervalMs.
 * Ticks never overlap; a failed tick is reported and the next one tries again.
 */
export class TimedCompactor {
  private samples: { at: number; revision: number }[] = [];
  private compacted = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly opts: {
      retentionMs: number;
      intervalMs: number;
      currentRevision: () => Promise<number>;
      compact: (revision: number) => Promise<void>;
      onError: (err: Error) => void;
    },
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a running tick to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One sampling and (maybe) compaction step at time `now`. */
  async tick(now = Date.now()): Promise<void> {
    try {
      this.samples.push({ at: now, revision: await this.opts.currentRevision() });
      let due = -1;
      while (due + 1 < this.samples.length && this.samples[due + 1].at <= now - this.opts.retentionMs) due++;
      if (due < 0) return;
      const target = this.samples[due].revision;
      this.samples.splice(0, due);
      if (target > this.compacted) {
        await this.opts.compact(target);
        this.compacted = target;
      }
    } catch (err) {
      // After stop() the store is closing: its failures are expected.
      if (!this.stopped) this.opts.onError(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

export const DEFAULT_HISTORY_RETENTION_MS = 5 * 60 * 1000;
export const DEFAULT_COMPACTION_INTERVAL_MS = 30 * 1000;

/**
 * The running compactor of a store, set by the StoreOptions every backend takes (defaults: 5
 * minutes of history, a tick every 30 s, failures to console.warn naming the backend). The
 * store stops it when it closes.
 */
export function startStoreCompactor(store: Pick<Store, 'backend' | 'currentRevision' | 'compact'>, opts: StoreOptions): TimedCompactor {
  const compactor = new TimedCompactor({
    retentionMs: opts.historyRetentionMs ?? DEFAULT_HISTORY_RETENTION_MS,
    intervalMs: opts.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS,
    currentRevision: () => store.currentRevision(),
    compact: (revision) => store.compact(revision),
    onError: opts.onBackgroundError ?? ((err) => console.warn(`${store.backend} store compaction: ${err.message}`)),
  });
  compactor.start();
  return compactor;
}
