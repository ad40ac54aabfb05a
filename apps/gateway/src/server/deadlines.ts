/** One pending deadline of FixedDelayDeadlines (the handle `add` returns, for `cancel`). */
export interface Deadline<T> {
  readonly value: T;
  /** performance.now() at which it is due. */
  readonly due: number;
}

/**
 * Deadlines that all fall the same fixed delay after they are added (the per-request
 * --request-timeout): since they come due in the order they were added, one timer armed for
 * the oldest serves them all, instead of a setTimeout and a clearTimeout per request. `fire`
 * gets each value once, no earlier than `delayMs` after its `add`, unless it was cancelled
 * first. The timer is unref'd: a pending deadline does not keep the process alive by itself.
 */
export class FixedDelayDeadlines<T> {
  /** In insertion order, which is due order. */
  private readonly pending = new Set<Deadline<T>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly fire: (value: T) => void,
  ) {}

  add(value: T): Deadline<T> {
    const d: Deadline<T> = { value, due: performance.now() + this.delayMs };
    this.pending.add(d);
    if (!this.timer) this.arm(this.delayMs);
    return d;
  }

  cancel(d: Deadline<T>): void {
    // The timer stays armed: when it fires with nothing due it re-arms for the next deadline or stops.
    this.pending.delete(d);
  }

  /** Deadlines added and neither fired nor cancelled. */
  get size(): number {
    return this.pending.size;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(ms))).unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const d of this.pending) {
      if (d.due > now) {
        this.arm(d.due - now);
        return;
      }
      this.pending.delete(d);
      this.fire(d.value);
    }
  }
}
