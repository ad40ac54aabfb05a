import { networkInterfaces } from 'node:os';

function ipv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.some((p) => p > 255) ? undefined : parts.reduce((n, p) => n * 256 + p, 0);
}

/** Whether ip lies in the IPv4 CIDR (throws on a malformed CIDR). */
export function cidrContains(cidr: string, ip: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const b = ipv4(base);
  const bits = Number(bitsText);
  if (b === undefined || !/^\d{1,2}$/.test(bitsText ?? '') || bits > 32) throw new Error(`--nodeport-addresses: ${JSON.stringify(cidr)} is not an IPv4 CIDR`);
  const n = ipv4(ip);
  if (n === undefined) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(n / size) === Math.floor(b / size);
}

/**
 * The addresses node ports are served on (`--nodeport-addresses`): every IPv4 address of
 * this machine inside one of the CIDRs, or `0.0.0.0` (all) when none is given. Throws when
 * CIDRs are given and no local address matches.
 */
export function nodePortAddresses(cidrs: readonly string[], local: readonly string[] = localIPv4Addresses()): string[] {
  if (cidrs.length === 0) return ['0.0.0.0'];
  const out = local.filter((ip) => cidrs.some((c) => cidrContains(c, ip)));
  if (out.length === 0) throw new Error(`--nodeport-addresses=${cidrs.join(',')}: no address of this machine is in these ranges (have ${local.join(', ')})`);
  return [...new Set(out)];
}

export function localIPv4Addresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4')
    .map((a) => a.address);
}
