import { createHash } from 'node:crypto';

/**
 * The loopback /24 of a node's pods when `--pod-cidr` is not given: `127.<a>.<b>.0/24` with
 * a in [128, 254] and b in [0, 255] taken from a hash of the node name, so every node on a
 * machine gets its own range inside 127.128.0.0/9 (the lower half of 127/8 stays free for
 * localhost services and the local profile's service cluster IPs, 127.96.0.0/16).
 */
export function defaultPodCidr(nodeName: string): string {
  const h = createHash('sha256').update(nodeName).digest();
  return `127.${128 + (h[0] % 127)}.${h[1]}.0/24`;
}

/** Parses an IPv4 /24 (only /24 ranges are supported); throws a clear error otherwise. */
export function parsePodCidr(cidr: string): { prefix: string; cidr: string } {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.0\/24$/.exec(cidr.trim());
  if (!m || m.slice(1).some((o) => Number(o) > 255)) {
    throw new Error(`--pod-cidr ${JSON.stringify(cidr)}: want an IPv4 /24 such as 127.10.0.0/24`);
  }
  return { prefix: `${m[1]}.${m[2]}.${m[3]}`, cidr: `${m[1]}.${m[2]}.${m[3]}.0/24` };
}

/**
 * Hands out one address per pod from a /24: `.2` to `.254` (`.1` is left for the node).
 * Keyed by pod UID; an address is reused only after release.
 */
export class PodIpAllocator {
  private readonly prefix: string;
  readonly cidr: string;
  private readonly byUid = new Map<string, string>();
  private readonly used = new Set<number>();
  private next = 2;

  constructor(cidr: string) {
    ({ prefix: this.prefix, cidr: this.cidr } = parsePodCidr(cidr));
  }

  /** The pod's address: its current one, `preferred` when free and in range, else the next free. */
  allocate(uid: string, preferred?: string): string {
    const have = this.byUid.get(uid);
    if (have) return have;
    const want = preferred ? this.hostPart(preferred) : undefined;
    const host = want !== undefined && !this.used.has(want) ? want : this.nextFree();
    this.used.add(host);
    const ip = `${this.prefix}.${host}`;
    this.byUid.set(uid, ip);
    return ip;
  }

  release(uid: string): void {
    const ip = this.byUid.get(uid);
    if (!ip) return;
    this.byUid.delete(uid);
    this.used.delete(Number(ip.slice(this.prefix.length + 1)));
  }

  /** Addresses in use. */
  get size(): number {
    return this.used.size;
  }

  private hostPart(ip: string): number | undefined {
    if (!ip.startsWith(`${this.prefix}.`)) return undefined;
    const n = Number(ip.slice(this.prefix.length + 1));
    return Number.isInteger(n) && n >= 2 && n <= 254 ? n : undefined;
  }

  private nextFree(): number {
    for (let i = 0; i < 253; i++) {
      const n = 2 + ((this.next - 2 + i) % 253);
      if (!this.used.has(n)) {
        this.next = n + 1;
        return n;
      }
    }
    throw new Error(`pod CIDR ${this.cidr} has no free address left`);
  }
}
