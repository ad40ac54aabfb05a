/** Polls `cond` every 5 ms; rejects with `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean, what = 'condition', timeoutMs = 3000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Polls `probe` until it answers a value other than undefined, and answers that value. A probe
 * that throws counts as "not yet"; after `timeoutMs` rejects naming `what` and the last error.
 * Polls soon at first (5 ms) and backs off to one poll every `intervalMs`.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let pause = Math.min(5, intervalMs); ; pause = Math.min(pause * 2, intervalMs)) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message ?? String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** A logger that keeps lines for assertions instead of printing them. */
export function memoryLogger(): { lines: string[]; info(m: string): void; warn(m: string): void; error(m: string): void } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
  };
}
