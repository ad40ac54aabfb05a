import { BlockList, isIPv4, isIPv6 } from 'node:net';

export interface FailureLimiterOptions {
  /** Failures (401s) that make a source limited, at once or sustained over `windowMs`; must be > 0 (the caller disables the limiter otherwise). */
  limit: number;
  /** The sliding window: a source's count drains at `limit` per `windowMs`. */
  windowMs: number;
  /** How long a limited source is refused, from the failure that reached the limit. */
  cooloffMs: number;
  /** Most sources tracked at once; the least recently active one is forgotten to make room. */
  maxSources: number;
  /** Addresses and CIDRs never counted nor refused (`127.0.0.1/32`, `::1`). */
  exempt?: readonly string[];
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
}

/** One tracked source: a leaky bucket and, while limited, the end of its cool-off. */
interface Source {
  /** Failures in the bucket at `at` (drains at limit/windowMs per ms). */
  level: number;
  at: number;
  /** End of the cool-off (ms); 0 while the source is not limited. */
  until: number;
}

/**
 * Per-source accounting of authentication failures (401s), for refusing sources that fail
 * too often before they cost a TLS handshake or an authenticator.
 *
 * Contract:
 * - A source is a client address: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64
 *   (one host usually holds a whole /64, so per-address counting would not hold it back).
 * - Window: each failure adds 1 to the source's count, which drains continuously at `limit`
 *   per `windowMs` (a leaky bucket: a sliding window without per-failure timestamps). The
 *   failure that brings the count above `limit` - 1 limits the source: `limit` failures in quick
 *   succession, or failures sustained faster than `limit` per `windowMs`. The count never exceeds
 *   the failures of the last `windowMs`, so a source with fewer than `limit` failures in every
 *   window is never limited: a client retrying an expired token a few times a second never is,
 *   however long.
 * - Cool-off: a limited source is refused for `cooloffMs` from that failure; refusals neither
 *   count nor extend it. When it ends the source starts again from an empty count.
 * - Successes change nothing: only time drains a count. If a success reset it, an attacker
 *   holding any valid credential (a pod's own token) could interleave one good request per
 *   `limit - 1` bad ones and never be limited. The price: clients sharing an address with an
 *   attacker (a NAT, a proxy) are refused with it — exempt such addresses.
 * - Exempt sources are never tracked, counted or refused.
 * - Memory: at most `maxSources` entries; a source is "used" when it fails or is refused, and the
 *   least recently used entry is dropped for a new one (a limited source that keeps trying stays).
 *   Sources that never failed are never tracked: checking one is a Map lookup (none at all while
 *   nothing is tracked).
 */
export class AuthenticationFailureLimiter {
  private readonly sources = new Map<string, Source>();
  private readonly exempt = new BlockList();
  private readonly now: () => number;
  private readonly drainPerMs: number;

  constructor(private readonly opts: FailureLimiterOptions) {
    for (const [name, v] of [
      ['limit', opts.limit],
      ['window', opts.windowMs],
      ['cool-off', opts.cooloffMs],
      ['maximum of sources', opts.maxSources],
    ] as const) {
      if (!(v > 0) || !Number.isFinite(v)) throw new Error(`the ${name} must be a positive number, not ${v}`);
    }
    for (const cidr of opts.exempt ?? []) addExempt(this.exempt, cidr);
    this.now = opts.now ?? (() => performance.now());
    this.drainPerMs = opts.limit / opts.windowMs;
  }

  /** Sources tracked now (limited or counting). */
  get size(): number {
    return this.sources.size;
  }

  /**
   * Milliseconds left of the source's cool-off; 0 when it is not limited (always for a source
   * that never failed). Called for every new connection and every request of a tracked source.
   */
  refusedFor(address: string | undefined): number {
    if (this.sources.size === 0 || !address) return 0;
    const key = failureSourceKey(address);
    const s = this.sources.get(key);
    if (!s || s.until === 0) return 0;
    const left = s.until - this.now();
    if (left <= 0) {
      // The cool-off is over: a fresh start.
      this.sources.delete(key);
      return 0;
    }
    this.touch(key, s);
    return left;
  }

  /**
   * Counts one authentication failure of `address`. Returns true when this failure made the
   * source limited (once per cool-off: the caller logs it), false otherwise (also for exempt
   * sources and for failures of a source already limited, whose in-flight requests end now).
   */
  fail(address: string | undefined): boolean {
    if (!address) return false;
    const plain = unmapped(address);
    if (this.exempt.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6')) return false;
    const key = failureSourceKey(address);
    const t = this.now();
    let s = this.sources.get(key);
    if (s && s.until !== 0) {
      if (s.until > t) return false;
      // The cool-off is over: a fresh start.
      s.level = 0;
      s.until = 0;
    }
    if (!s) {
      if (this.sources.size >= this.opts.maxSources) this.sources.delete(this.sources.keys().next().value!);
      s = { level: 0, at: t, until: 0 };
    }
    s.level = Math.max(0, s.level - (t - s.at) * this.drainPerMs) + 1;
    s.at = t;
    this.touch(key, s);
    // Above limit - 1 rather than at limit: `limit` failures in quick succession have drained a little.
    if (s.level <= this.opts.limit - 1) return false;
    s.level = 0;
    s.until = t + this.opts.cooloffMs;
    return true;
  }

  /** Marks the source most recently used (Map order is insertion order: the first key is the least recent). */
  private touch(key: string, s: Source): void {
    this.sources.delete(key);
    this.sources.set(key, s);
  }
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; anything else unchanged (zone removed). */
function unmapped(address: string): string {
  const zone = address.indexOf('%');
  const a = zone < 0 ? address : address.slice(0, zone);
  return a.length > 7 && a.slice(0, 7).toLowerCase() === '::ffff:' && isIPv4(a.slice(7)) ? a.slice(7) : a;
}

/**
 * The source an address counts as: an IPv4 address itself (also when IPv4-mapped), the /64
 * of an IPv6 address (`2001:db8:0:1::/64`). Addresses that are neither are their own source.
 */
export function failureSourceKey(address: string): string {
  if (!address.includes(':')) return address;
  const a = unmapped(address);
  if (!isIPv6(a)) return a;
  const groups = expandIPv6(a);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, as lower-case hex without leading zeros. */
function expandIPv6(a: string): string[] {
  const hex = (part: string): string[] => {
    if (part === '') return [];
    return part.split(':').flatMap((g) => {
      if (!g.includes('.')) return [Number.parseInt(g, 16).toString(16)];
      // An embedded IPv4 address fills the last two groups.
      const [b0, b1, b2, b3] = g.split('.').map(Number);
      return [((b0 << 8) | b1).toString(16), ((b2 << 8) | b3).toString(16)];
    });
  };
  const gap = a.indexOf('::');
  if (gap < 0) return hex(a);
  const head = hex(a.slice(0, gap));
  const tail = hex(a.slice(gap + 2));
  return [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
}

/** Adds `a.b.c.d`, `a.b.c.d/n`, `x::y` or `x::/n` to `list`; throws naming the entry when it is none of these. */
function addExempt(list: BlockList, cidr: string): void {
  const [address, bits, extra] = cidr.trim().split('/');
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max)) throw new Error(`${JSON.stringify(cidr)} is not an IP address or CIDR (e.g. 10.0.0.0/8, ::1/128)`);
  list.addSubnet(address, prefix, family);
}
