import { memoryLogger, waitFor } from '@orch/testing';
import {
  BucketRateLimiter,
  DelayingQueue,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  RateLimitingQueue,
  WorkQueue,
  defaultControllerRateLimiter,
  runWorkers,
  type RateLimiter,
} from './workqueue';

/**
 * Runs a script against a fresh queue. Steps: `add k`, `get k` (next key must be k),
 * `done k`, `len n`.
 */
async function runScript(steps: string[]): Promise<void> {
  const q = new WorkQueue<string>();
  for (const step of steps) {
    const [op, arg] = step.split(' ');
    if (op === 'add') q.add(arg);
    else if (op === 'done') q.done(arg);
    else if (op === 'get') expect({ step, got: await q.get() }).toEqual({ step, got: arg });
    else if (op === 'len') expect({ step, len: q.len() }).toEqual({ step, len: Number(arg) });
    else throw new Error(`bad step ${step}`);
  }
}

describe('WorkQueue', () => {
  it.each([
    { name: 'FIFO order', steps: ['add c', 'add a', 'add b', 'get c', 'get a', 'get b', 'len 0'] },
    { name: 'repeated adds while queued coalesce', steps: ['add a', 'add a', 'add b', 'add a', 'len 2', 'get a', 'get b', 'len 0'] },
    { name: 'add while processing waits for done', steps: ['add a', 'get a', 'add a', 'len 0', 'done a', 'len 1', 'get a'] },
    { name: 'several adds while processing queue it once', steps: ['add a', 'get a', 'add a', 'add a', 'add b', 'done a', 'len 2', 'get b', 'get a', 'len 0'] },
    { name: 'done without re-add leaves nothing', steps: ['add a', 'get a', 'done a', 'len 0', 'add a', 'len 1'] },
    { name: 'a re-queued key goes to the back', steps: ['add a', 'get a', 'add a', 'add b', 'done a', 'get b', 'get a'] },
  ])('$name', async ({ steps }) => {
    await runScript(steps);
  });

  it('get waits for an add; waiting getters are served in order', async () => {
    const q = new WorkQueue<string>();
    const first = q.get();
    const second = q.get();
    q.add('x');
    q.add('y');
    expect([await first, await second]).toEqual(['x', 'y']);
  });

  it('shutDown drops waiting keys, ignores adds and releases getters', async () => {
    const q = new WorkQueue<string>();
    const blocked = q.get();
    expect(await Promise.race([blocked, new Promise((r) => setTimeout(() => r('still waiting'), 10))])).toBe('still waiting');
    q.shutDown();
    expect(await blocked).toBeUndefined();
    q.add('a');
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(q.shuttingDown()).toBe(true);
  });

  it('shutDownWithDrain hands out waiting keys and resolves when all are done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    const inFlight = await q.get();
    let drained = false;
    const p = q.shutDownWithDrain().then(() => (drained = true));
    q.add('c'); // ignored
    expect(await q.get()).toBe('b');
    q.done('b');
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    q.done(inFlight as string);
    await p;
    expect(await q.get()).toBeUndefined();
  });

  it('counts adds and reports depth', () => {
    const q = new WorkQueue<string>();
    for (const k of ['a', 'b', 'a', 'c']) q.add(k);
    expect({ adds: q.metrics.adds, depth: q.metrics.depth }).toEqual({ adds: 3, depth: 3 });
  });
});

describe('DelayingQueue', () => {
  it('adds after the delay; an earlier time wins; shutdown clears timers', async () => {
    const q = new DelayingQueue<string>();
    q.addAfter('late', 30);
    q.addAfter('late', 500); // later time: ignored
    q.addAfter('now', 0);
    expect(q.len()).toBe(1);
    expect(q.delayed()).toBe(1);
    await waitFor(() => q.len() === 2, 'delayed key');
    expect([await q.get(), await q.get()]).toEqual(['now', 'late']);
    q.addAfter('x', 60_000);
    q.shutDown();
    expect(q.delayed()).toBe(0);
  });
});

describe('rate limiters', () => {
  // Each row: a limiter and the delays of successive `when` calls; `forget` resets a key.
  it.each([
    { name: 'per-item exponential from 5 ms', make: () => new ItemExponentialFailureRateLimiter<string>(), calls: ['a', 'a', 'a', 'a', 'b'], want: [5, 10, 20, 40, 5] },
    { name: 'per-item exponential capped', make: () => new ItemExponentialFailureRateLimiter<string>(1000, 3000), calls: ['a', 'a', 'a', 'a'], want: [1000, 2000, 3000, 3000] },
    { name: 'per-item cap of default limiter is 1000 s', make: () => new ItemExponentialFailureRateLimiter<string>(), calls: Array(40).fill('a'), want: null, last: 1_000_000 },
    { name: 'forget resets', make: () => new ItemExponentialFailureRateLimiter<string>(), calls: ['a', 'a', 'forget a', 'a'], want: [5, 10, 5] },
    { name: 'bucket burst then qps', make: () => new BucketRateLimiter<string>(2, 3, () => 0), calls: ['a', 'b', 'c', 'd', 'e'], want: [0, 0, 0, 500, 1000] },
    { name: 'max of bucket and per-item', make: () => new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter(5), new BucketRateLimiter(1, 1, () => 0)), calls: ['a', 'a', 'a'], want: [5, 1000, 2000] },
    { name: 'default controller limiter', make: () => defaultControllerRateLimiter<string>(), calls: ['a', 'a', 'b'], want: [5, 10, 5] },
  ])('$name', ({ make, calls, want, last }) => {
    const limiter: RateLimiter<string> = make();
    const got: number[] = [];
    for (const c of calls) {
      if (c.startsWith('forget ')) limiter.forget(c.slice(7));
      else got.push(limiter.when(c));
    }
    if (want) expect(got).toEqual(want);
    if (last !== undefined) expect(got[got.length - 1]).toBe(last);
  });

  it('refills the bucket with time', () => {
    let now = 0;
    const b = new BucketRateLimiter<string>(10, 1, () => now);
    expect([b.when(), b.when()]).toEqual([0, 100]);
    now = 300; // 3 tokens refilled, capped at burst 1, minus the one reserved
    expect(b.when()).toBe(0);
  });

  it('counts requeues per key in a rate-limiting queue', () => {
    const q = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter(60_000));
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect({ requeues: q.numRequeues('a'), retries: q.metrics.retries, delayed: q.delayed() }).toEqual({ requeues: 2, retries: 2, delayed: 1 });
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    q.shutDown();
  });
});

describe('runWorkers', () => {
  it('forgets on success, retries failures with backoff, and never syncs one key twice at once', async () => {
    const q = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter(1, 10));
    const log = memoryLogger();
    const active = new Set<string>();
    const attempts = new Map<string, number>();
    let overlap = false;
    const done = runWorkers(
      q,
      4,
      async (key) => {
        if (active.has(key)) overlap = true;
        active.add(key);
        attempts.set(key, (attempts.get(key) ?? 0) + 1);
        if (key === 'busy' && attempts.get(key)! < 5) q.add('busy'); // re-added while processing
        await new Promise((r) => setTimeout(r, 2));
        active.delete(key);
        if (key === 'flaky' && attempts.get(key)! < 3) throw new Error('not yet');
      },
      { logger: log },
    );
    for (const k of ['ok', 'flaky', 'busy']) q.add(k);
    await waitFor(() => attempts.get('flaky') === 3 && attempts.get('busy') === 5 && q.len() === 0, 'work done');
    await new Promise((r) => setTimeout(r, 20));
    q.shutDown();
    await done;
    expect(overlap).toBe(false);
    expect(attempts.get('ok')).toBe(1);
    expect(q.numRequeues('flaky')).toBe(0);
    expect(log.lines.filter((l) => l.includes('sync flaky failed: not yet; retrying'))).toHaveLength(2);
  });

  it('drops a key after maxRetries', async () => {
    const q = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter(1, 2));
    const log = memoryLogger();
    let calls = 0;
    const done = runWorkers(
      q,
      1,
      async () => {
        calls++;
        throw new Error('always');
      },
      { logger: log, maxRetries: 2 },
    );
    q.add('bad');
    await waitFor(() => log.lines.some((l) => l.includes('dropping it after 2 retries')), 'dropped');
    q.shutDown();
    await done;
    expect(calls).toBe(3);
    expect(q.numRequeues('bad')).toBe(0);
  });

  it('stops on abort after the current sync finishes', async () => {
    const q = new RateLimitingQueue<string>();
    const ac = new AbortController();
    let finished = false;
    const done = runWorkers(
      q,
      2,
      async () => {
        ac.abort();
        await new Promise((r) => setTimeout(r, 10));
        finished = true;
      },
      { signal: ac.signal },
    );
    q.add('a');
    await done;
    expect(finished).toBe(true);
    expect(q.shuttingDown()).toBe(true);
  });
});
