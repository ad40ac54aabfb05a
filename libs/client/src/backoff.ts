export interface BackoffOptions {
  /** First delay (default 800 ms, like the upstream reflector). */
  initialMs?: number;
  /** Cap on any delay, jitter included (default 30 s). */
  maxMs?: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Each delay is d + random() * jitter * d (default 1.0, i.e. up to 2x). */
  jitter?: number;
  /** Source of randomness in [0, 1); injectable for tests. */
  random?: () => number;
}

/** Exponential backoff with jitter. `next()` returns the delay to wait and grows the base; `reset()` after success. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private current: number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 800;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 1;
    this.random = opts.random ?? Math.random;
    this.current = this.initialMs;
  }

  next(): number {
    const base = Math.min(this.current, this.maxMs);
    this.current = Math.min(this.current * this.factor, this.maxMs);
    return Math.min(this.maxMs, Math.round(base + this.random() * this.jitter * base));
  }

  reset(): void {
    this.current = this.initialMs;
  }
}

/**
 * Resolves after `ms`, or early when `signal` aborts; resolves true if the full time passed.
 * Leaves no timer or listener behind either way.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `fn` with a signal that aborts after `ms` or when `parent` aborts, whichever is
 * first; the timer is cleared when `fn` settles.
 */
export async function withDeadline<T>(ms: number, parent: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`deadline of ${ms} ms exceeded`)), ms);
  const onParent = () => ac.abort(parent?.reason ?? new Error('aborted'));
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  try {
    return await fn(ac.signal);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParent);
  }
}
