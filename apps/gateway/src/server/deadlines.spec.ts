import { FixedDelayDeadlines } from './deadlines';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('FixedDelayDeadlines', () => {
  it('fires each value once, no earlier than the delay after its add, in add order', async () => {
    const fired: { v: number; at: number }[] = [];
    const d = new FixedDelayDeadlines<number>(40, (v) => fired.push({ v, at: performance.now() }));
    const added = new Map<number, number>();
    for (let i = 0; i < 3; i++) {
      added.set(i, performance.now());
      d.add(i);
      await sleep(15);
    }
    await sleep(80);
    expect(fired.map((f) => f.v)).toEqual([0, 1, 2]);
    for (const f of fired) expect(f.at - added.get(f.v)!).toBeGreaterThanOrEqual(40);
    expect(d.size).toBe(0);
  });

  it.each([
    ['the oldest', [0]],
    ['a middle one', [1]],
    ['all', [0, 1, 2]],
  ])('a cancelled deadline (%s) never fires; the others still do', async (_, cancelled) => {
    const fired: number[] = [];
    const d = new FixedDelayDeadlines<number>(30, (v) => fired.push(v));
    const handles = [0, 1, 2].map((v) => d.add(v));
    for (const i of cancelled) d.cancel(handles[i]);
    await sleep(70);
    expect(fired).toEqual([0, 1, 2].filter((v) => !cancelled.includes(v)));
    expect(d.size).toBe(0);
  });

  it('arms again after it went idle: a deadline added after the others fired still fires', async () => {
    const fired: number[] = [];
    const d = new FixedDelayDeadlines<number>(20, (v) => fired.push(v));
    d.add(1);
    await sleep(50);
    d.cancel(d.add(2));
    await sleep(50);
    d.add(3);
    await sleep(50);
    expect(fired).toEqual([1, 3]);
  });
});
