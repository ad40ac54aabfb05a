/** Time and timers, injectable so queue backoff and permit timeouts are testable. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** A manual clock: time moves only through `step`, which fires due timers in time order. */
export class FakeClock implements Clock {
  private timers: FakeTimer[] = [];
  private nextId = 1;

  constructor(private current = 1_700_000_000_000) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, at: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Advances time by `ms`, running each timer due on the way at its own time. */
  step(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = end;
  }

  /** Number of pending timers. */
  pendingTimers(): number {
    return this.timers.length;
  }
}
