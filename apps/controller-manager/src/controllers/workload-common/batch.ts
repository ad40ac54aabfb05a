/** upstream controller.SlowStartInitialBatchSize. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

/**
 * upstream slowStartBatch: calls `fn` `count` times in batches of 1, 2, 4, ... run in
 * parallel, stopping after the first batch with a failure. Returns how many calls succeeded
 * and the first error, so callers can forget the expectations of calls never made.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: (index: number) => Promise<unknown>): Promise<{ successes: number; error?: Error }> {
  let remaining = count;
  let successes = 0;
  let started = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, (_, i) => fn(started + i)));
    started += batch;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { successes, error: failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason)) };
    remaining -= batch;
  }
  return { successes };
}
