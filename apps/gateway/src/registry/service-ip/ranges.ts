/**
 * The two ranges services draw from: cluster IPs (`--service-cluster-ip-range`, IPv4 only)
 * and node ports (`--service-node-port-range`). Each is a sequence of offsets [0, size)
 * split into a lower band [0, lower) and an upper band [lower, size): dynamic allocation
 * prefers the upper band, requested values may come from either (SPEC "Service resource
 * fields"; upstream ServiceIPStaticSubrange and ServiceNodePortStaticSubrange).
 */

/** Offsets [0, size): lower band [0, lower), upper band [lower, size). */
export interface Bands {
  size: number;
  lower: number;
}

/** A parsed `--service-cluster-ip-range`. */
export interface ServiceCidr extends Bands {
  /** Canonical text, e.g. `10.96.0.0/12`. */
  cidr: string;
  /** Network address as an unsigned 32-bit number. */
  network: number;
  prefix: number;
  /** Addresses in the CIDR, network and broadcast included (2^(32-prefix)). */
  cidrSize: number;
  /** Offset 0: the address after the network address (it and the broadcast address are never handed out). */
  first: number;
}

/** A parsed `--service-node-port-range`. */
export interface NodePortRange extends Bands {
  /** Canonical text, e.g. `30000-32767`. */
  text: string;
  base: number;
}

/** Upstream's limit: a bitmap of at most 2^20 addresses (mask >= 12). */
const MIN_IPV4_PREFIX = 12;
/** Two usable addresses at least (network and broadcast are excluded). */
const MAX_IPV4_PREFIX = 30;

/** Parses a dotted-quad IPv4 address (no leading zeros, as Go's net.ParseIP); undefined if invalid. */
export function parseIPv4(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * Size of the lower (static) band of a cluster IP range: min(max(16, cidrSize/16), 256)
 * (SPEC), computed from the CIDR size like upstream's calculateRangeOffset. Ranges of 16
 * addresses or fewer have no upper band worth the name, so the whole range is one pool
 * (upstream returns 0 there; dynamic allocation then scans everything, as it would here).
 */
export function clusterIPLowerBand(cidrSize: number): number {
  if (cidrSize <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(cidrSize / 16)), 256);
}

/** Size of the lower band of a node port range: min(max(16, size/32), 128) (upstream). */
export function nodePortLowerBand(size: number): number {
  if (size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / 32)), 128);
}

/**
 * Parses `--service-cluster-ip-range`. With `staticSubrange` off (ServiceIPStaticSubrange
 * gate) the lower band is empty: one shared pool. Throws a start-up error for anything but
 * one IPv4 CIDR with a mask between /12 and /30.
 */
export function parseServiceCidr(text: string, staticSubrange: boolean): ServiceCidr {
  const flag = '--service-cluster-ip-range';
  const s = text.trim();
  if (s.includes(',')) throw new Error(`${flag}=${text}: dual-stack ranges are not supported; give one IPv4 CIDR`);
  const slash = s.indexOf('/');
  if (slash < 0) throw new Error(`${flag}=${text}: not a CIDR (want e.g. 10.96.0.0/12)`);
  const addr = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  if (addr.includes(':')) throw new Error(`${flag}=${text}: IPv6 ranges are not supported; this cluster is IPv4 single-stack`);
  const ip = parseIPv4(addr);
  if (ip === undefined || !/^\d{1,2}$/.test(prefixText) || Number(prefixText) > 32) throw new Error(`${flag}=${text}: not a valid IPv4 CIDR`);
  const prefix = Number(prefixText);
  if (prefix < MIN_IPV4_PREFIX) throw new Error(`${flag}=${text}: the range is too large; for 32-bit addresses, the mask must be >= ${MIN_IPV4_PREFIX}`);
  if (prefix > MAX_IPV4_PREFIX) throw new Error(`${flag}=${text}: the range is too small; the mask must be <= ${MAX_IPV4_PREFIX}`);
  const cidrSize = 2 ** (32 - prefix);
  const network = ip - (ip % cidrSize);
  const size = cidrSize - 2;
  return {
    cidr: `${formatIPv4(network)}/${prefix}`,
    network,
    prefix,
    cidrSize,
    first: network + 1,
    size,
    lower: staticSubrange ? Math.min(clusterIPLowerBand(cidrSize), size) : 0,
  };
}

/** Parses `--service-node-port-range`: `30000-32767` (inclusive) or `30000+2767` (base+extra). */
export function parseNodePortRange(text: string): NodePortRange {
  const flag = '--service-node-port-range';
  const m = /^\s*(\d{1,5})\s*([-+])\s*(\d{1,5})\s*$/.exec(text);
  if (!m) throw new Error(`${flag}=${text}: want a port range like 30000-32767`);
  const base = Number(m[1]);
  const last = m[2] === '-' ? Number(m[3]) : base + Number(m[3]);
  if (base < 1 || last > 65535 || last < base) throw new Error(`${flag}=${text}: ports must satisfy 1 <= first <= last <= 65535`);
  const size = last - base + 1;
  return { text: `${base}-${last}`, base, size, lower: nodePortLowerBand(size) };
}

/** The offset of ip in the range, or undefined when ip is not a usable address of it. */
export function ipOffset(range: ServiceCidr, ip: string): number | undefined {
  const n = parseIPv4(ip);
  if (n === undefined) return undefined;
  const off = n - range.first;
  return off >= 0 && off < range.size ? off : undefined;
}

/**
 * Offsets in the order dynamic allocation tries them (upstream ipallocator): the upper band
 * from a random offset, wrapping around, then the lower band likewise.
 */
export function* dynamicOrder(bands: Bands, random: () => number = Math.random): Generator<number> {
  const upper = bands.size - bands.lower;
  const start = Math.floor(random() * upper);
  for (let i = 0; i < upper; i++) yield bands.lower + ((start + i) % upper);
  const lowStart = Math.floor(random() * bands.lower);
  for (let i = 0; i < bands.lower; i++) yield (lowStart + i) % bands.lower;
}
