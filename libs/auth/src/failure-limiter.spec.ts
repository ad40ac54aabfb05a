import fc from 'fast-check';
import { AuthenticationFailureLimiter, failureSourceKey, type FailureLimiterOptions } from './failure-limiter';

/** A limiter on a hand-moved clock (ms). */
function limiter(opts: Partial<FailureLimiterOptions> = {}) {
  const clock = { t: 1_000_000 };
  const l = new AuthenticationFailureLimiter({ limit: 5, windowMs: 1000, cooloffMs: 60_000, maxSources: 100, now: () => clock.t, ...opts });
  return { l, clock };
}

const A = '203.0.113.1';
const B = '203.0.113.2';
const C = '203.0.113.3';

/** Failures of A at these times (ms after the start); the index of the one that limited it, or -1. */
function limitedAt(times: number[], opts: Partial<FailureLimiterOptions> = {}): number {
  const { l, clock } = limiter(opts);
  const start = clock.t;
  for (const [i, at] of times.entries()) {
    clock.t = start + at;
    if (l.fail(A)) return i;
  }
  return -1;
}

/** `n` failures `gapMs` apart, starting at `from`. */
const every = (n: number, gapMs: number, from = 0) => Array.from({ length: n }, (_, i) => from + i * gapMs);

describe('AuthenticationFailureLimiter: window and threshold (limit 5 per 1 s)', () => {
  it.each<{ name: string; times: number[]; want: number }>([
    { name: 'limit failures at once: the last one limits', times: every(5, 0), want: 4 },
    { name: 'limit failures 1 ms apart (drained a little): the last one limits', times: every(5, 1), want: 4 },
    { name: 'one fewer than the limit at once: not limited', times: every(4, 0), want: -1 },
    { name: '5 over 400 ms: 1 + 4 × (1 - 0.5) = 3, drained as they come: not limited', times: every(5, 100), want: -1 },
    { name: 'a steady 4.9/s for an hour (an expired token retried): never', times: every(17_640, 1000 / 4.9), want: -1 },
    { name: 'a steady 2/s for a day: never', times: every(172_800, 500), want: -1 },
    { name: 'a steady 10/s: +1 - 0.5 per failure, over 4 at the 8th', times: every(100, 100), want: 7 },
    { name: '4 at once, a full window later 4 more: drained, not limited', times: [...every(4, 0), ...every(4, 0, 1000)], want: -1 },
    { name: '4 at once, half a window later 2 more: 4 - 2.5 + 2 = 3.5, not limited', times: [...every(4, 0), ...every(2, 0, 500)], want: -1 },
    { name: '4 at once, half a window later 3 more: 4.5 (7 within the window), limited at the 7th', times: [...every(4, 0), ...every(3, 0, 500)], want: 6 },
  ])('$name', ({ times, want }) => {
    expect(limitedAt(times)).toBe(want);
  });

  it.each<{ name: string; opts: Partial<FailureLimiterOptions>; times: number[]; want: number }>([
    { name: 'limit 100 per 10 s: 100 failures 1 ms apart', opts: { limit: 100, windowMs: 10_000 }, times: every(100, 1), want: 99 },
    { name: 'limit 100 per 10 s: 9/s for an hour never', opts: { limit: 100, windowMs: 10_000 }, times: every(32_400, 1000 / 9), want: -1 },
    { name: 'limit 1: the first failure', opts: { limit: 1 }, times: [0], want: 0 },
  ])('$name', ({ opts, times, want }) => {
    expect(limitedAt(times, opts)).toBe(want);
  });
  it('property: fewer than `limit` failures in every window never limit a source (seeded)', () => {
    const run = (raw: number[], limit: number) => {
      // Keep the failures that leave at most limit - 1 in every window (t - 1 s, t].
      const kept: number[] = [];
      for (const t of [...raw].sort((a, b) => a - b)) if (kept.filter((k) => k > t - 1000).length + 1 < limit) kept.push(t);
      return limitedAt(kept, { limit }) === -1;
    };
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 80 }), fc.integer({ min: 2, max: 8 }), run), { seed: 8, numRuns: 500 });
  });
});

describe('AuthenticationFailureLimiter: cool-off', () => {
  it.each<{ name: string; after: number; want: number }>([
    { name: 'at once', after: 0, want: 60_000 },
    { name: 'a millisecond before its end', after: 59_999, want: 1 },
    { name: 'at its end', after: 60_000, want: 0 },
    { name: 'long after', after: 3_600_000, want: 0 },
  ])('refusedFor $name', ({ after, want }) => {
    const { l, clock } = limiter();
    for (let i = 0; i < 5; i++) l.fail(A);
    clock.t += after;
    expect(l.refusedFor(A)).toBe(want);
  });

  it('failures during the cool-off neither count nor extend it', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < 5; i++) l.fail(A);
    clock.t += 30_000;
    for (let i = 0; i < 50; i++) expect(l.fail(A)).toBe(false);
    expect(l.refusedFor(A)).toBe(30_000);
    clock.t += 30_000;
    expect(l.refusedFor(A)).toBe(0);
  });

  it.each<{ name: string; check: boolean }>([
    { name: 'after a refusal check ended it', check: true },
    { name: 'without any check in between', check: false },
  ])('after the cool-off the count starts empty ($name)', ({ check }) => {
    const { l, clock } = limiter();
    for (let i = 0; i < 5; i++) l.fail(A);
    clock.t += 60_000;
    if (check) expect(l.refusedFor(A)).toBe(0);
    for (let i = 0; i < 4; i++) expect(l.fail(A)).toBe(false);
    expect(l.refusedFor(A)).toBe(0);
    expect(l.fail(A)).toBe(true);
    expect(l.refusedFor(A)).toBe(60_000);
  });
});

describe('AuthenticationFailureLimiter: sources', () => {
  it('sources are counted apart: one limited, the others untouched', () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) l.fail(A);
    for (let i = 0; i < 4; i++) l.fail(B);
    expect([l.refusedFor(A) > 0, l.refusedFor(B), l.refusedFor(C)]).toEqual([true, 0, 0]);
    expect(l.size).toBe(2);
  });

  it('a source without failures is never tracked', () => {
    const { l } = limiter();
    for (let i = 0; i < 1000; i++) expect(l.refusedFor(`198.51.100.${i % 256}`)).toBe(0);
    expect(l.size).toBe(0);
  });

  it.each<{ name: string; exempt: string[]; address: string; limited: boolean }>([
    { name: 'loopback 127.0.0.1 exempt', exempt: ['127.0.0.1/32', '::1/128'], address: '127.0.0.1', limited: false },
    { name: 'IPv4-mapped 127.0.0.1 exempt', exempt: ['127.0.0.1/32', '::1/128'], address: '::ffff:127.0.0.1', limited: false },
    { name: '::1 exempt', exempt: ['127.0.0.1/32', '::1/128'], address: '::1', limited: false },
    { name: 'another loopback address (a pod) is not', exempt: ['127.0.0.1/32', '::1/128'], address: '127.0.0.2', limited: true },
    { name: 'a subnet', exempt: ['10.0.0.0/8'], address: '10.200.3.4', limited: false },
    { name: 'an address without prefix length', exempt: ['192.0.2.7'], address: '192.0.2.7', limited: false },
    { name: 'its neighbour', exempt: ['192.0.2.7'], address: '192.0.2.8', limited: true },
    { name: 'an IPv6 subnet', exempt: ['2001:db8::/32'], address: '2001:db8:1::5', limited: false },
    { name: 'nothing exempt: 127.0.0.1 is limited too', exempt: [], address: '127.0.0.1', limited: true },
  ])('exempt: $name', ({ exempt, address, limited }) => {
    const { l } = limiter({ exempt });
    const limitedNow = Array.from({ length: 10 }, () => l.fail(address)).some(Boolean);
    expect([limitedNow, l.refusedFor(address) > 0]).toEqual([limited, limited]);
    if (!limited) expect(l.size).toBe(0);
  });

  it.each<{ address: string; want: string }>([
    { address: '203.0.113.9', want: '203.0.113.9' },
    { address: '::ffff:203.0.113.9', want: '203.0.113.9' },
    { address: '::FFFF:203.0.113.9', want: '203.0.113.9' },
    { address: '2001:db8:0:1:aaaa:bbbb:cccc:dddd', want: '2001:db8:0:1::/64' },
    { address: '2001:0db8:0000:0001::1', want: '2001:db8:0:1::/64' },
    { address: '2001:db8::1', want: '2001:db8:0:0::/64' },
    { address: '::1', want: '0:0:0:0::/64' },
    { address: 'fe80::1%eth0', want: 'fe80:0:0:0::/64' },
    { address: '64:ff9b::192.0.2.1', want: '64:ff9b:0:0::/64' },
  ])('source of $address is $want', ({ address, want }) => {
    expect(failureSourceKey(address)).toBe(want);
  });

  it('IPv6 addresses of one /64 share one count', () => {
    const { l } = limiter();
    for (let i = 1; i <= 5; i++) l.fail(`2001:db8:0:1::${i}`);
    expect(l.refusedFor('2001:db8:0:1:ffff::9')).toBe(60_000);
    expect(l.refusedFor('2001:db8:0:2::1')).toBe(0);
  });
});

describe('AuthenticationFailureLimiter: bounded memory (LRU)', () => {
  it.each<{ name: string; steps: [op: 'fail' | 'check', address: string, times?: number][]; kept: string[] }>([
    { name: 'the least recently failed source makes room', steps: [['fail', A], ['fail', B], ['fail', C]], kept: [B, C] },
    { name: 'a failure makes a source recent again', steps: [['fail', A], ['fail', B], ['fail', A], ['fail', C]], kept: [A, C] },
    { name: 'a limited source that keeps trying stays', steps: [['fail', A, 5], ['fail', B], ['check', A], ['fail', C]], kept: [A, C] },
    { name: 'a limited source that went quiet is forgotten first', steps: [['fail', A, 5], ['fail', B], ['fail', C]], kept: [B, C] },
  ])('$name', ({ steps, kept }) => {
    // Each source is probed on a limiter of its own (probing one adds it, which would evict another):
    // a kept source has its one failure, so 4 more limit it; a forgotten one starts from nothing.
    const probe = (source: string) => {
      const { l } = limiter({ maxSources: 2 });
      for (const [op, address, times = 1] of steps) for (let i = 0; i < times; i++) void (op === 'fail' ? l.fail(address) : l.refusedFor(address));
      expect(l.size).toBe(2);
      return l.refusedFor(source) > 0 || [1, 2, 3, 4].map(() => l.fail(source)).some(Boolean);
    };
    expect([A, B, C].filter(probe)).toEqual(kept);
  });

  it('never holds more than maxSources, however many sources fail', () => {
    const { l } = limiter({ maxSources: 1000 });
    for (let i = 0; i < 100_000; i++) l.fail(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(l.size).toBe(1000);
  });
});

describe('AuthenticationFailureLimiter: options', () => {
  it.each<{ name: string; opts: Partial<FailureLimiterOptions>; message: string }>([
    { name: 'limit 0', opts: { limit: 0 }, message: 'the limit must be a positive number, not 0' },
    { name: 'a negative window', opts: { windowMs: -1 }, message: 'the window must be a positive number, not -1' },
    { name: 'no cool-off', opts: { cooloffMs: 0 }, message: 'the cool-off must be a positive number, not 0' },
    { name: 'no room', opts: { maxSources: 0 }, message: 'the maximum of sources must be a positive number, not 0' },
    { name: 'a host name', opts: { exempt: ['localhost'] }, message: '"localhost" is not an IP address or CIDR' },
    { name: 'a prefix too long', opts: { exempt: ['10.0.0.0/33'] }, message: '"10.0.0.0/33" is not an IP address or CIDR' },
    { name: 'a prefix that is no number', opts: { exempt: ['::1/x'] }, message: '"::1/x" is not an IP address or CIDR' },
  ])('refuses $name', ({ opts, message }) => {
    expect(() => limiter(opts)).toThrow(message);
  });
});
