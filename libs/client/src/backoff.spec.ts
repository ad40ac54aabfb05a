import { Backoff, sleep, withDeadline } from './backoff';

describe('Backoff', () => {
  // Delays of successive next() calls for a fixed random value.
  it.each([
    { name: 'no jitter doubles to the cap', opts: { initialMs: 100, maxMs: 1000, jitter: 0 }, random: 0.5, want: [100, 200, 400, 800, 1000, 1000] },
    { name: 'full jitter at random 0.5 adds half', opts: { initialMs: 100, maxMs: 30_000 }, random: 0.5, want: [150, 300, 600, 1200] },
    { name: 'jitter never exceeds the cap', opts: { initialMs: 800, maxMs: 30_000 }, random: 0.999, want: [1599, 3198, 6397, 12794, 25587, 30000, 30000] },
    { name: 'defaults: 800 ms doubling, 30 s cap', opts: {}, random: 0, want: [800, 1600, 3200, 6400, 12800, 25600, 30000] },
    { name: 'factor 3', opts: { initialMs: 10, factor: 3, jitter: 0 }, random: 0, want: [10, 30, 90, 270] },
  ])('$name', ({ opts, random, want }) => {
    const b = new Backoff({ ...opts, random: () => random });
    expect(want.map(() => b.next())).toEqual(want);
  });

  it('starts over after reset', () => {
    const b = new Backoff({ initialMs: 5, jitter: 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(5);
  });
});

describe('sleep and withDeadline', () => {
  it('sleep resolves true after the time, false on abort', async () => {
    expect(await sleep(1)).toBe(true);
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort();
    expect(await p).toBe(false);
    expect(await sleep(10, ac.signal)).toBe(false);
  });

  it.each([
    { name: 'finishes in time', ms: 1000, work: 1, parentAbort: false, want: 'done' },
    { name: 'deadline passes', ms: 10, work: 1000, parentAbort: false, want: 'deadline of 10 ms exceeded' },
    { name: 'parent aborts', ms: 1000, work: 1000, parentAbort: true, want: 'parent said stop' },
  ])('withDeadline: $name', async ({ ms, work, parentAbort, want }) => {
    const parent = new AbortController();
    const p = withDeadline(ms, parent.signal, (signal) =>
      new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => resolve('done'), work);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(signal.reason);
        });
      }),
    );
    if (parentAbort) parent.abort(new Error('parent said stop'));
    expect(await p.catch((e: Error) => e.message)).toBe(want);
  });
});
