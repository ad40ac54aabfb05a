import type { Endpoint } from './model';

/** `--proxy-mode`: iptables picks a random backend; ipvs uses `--ipvs-scheduler`. */
export const PROXY_MODES = ['iptables', 'ipvs'] as const;
export type ProxyMode = (typeof PROXY_MODES)[number];
/** `--ipvs-scheduler` values (SPEC): round-robin, least connections, destination hashing, source hashing, shortest expected delay, never queue. */
export const IPVS_SCHEDULERS = ['rr', 'lc', 'dh', 'sh', 'sed', 'nq'] as const;
export type IpvsScheduler = (typeof IPVS_SCHEDULERS)[number];
export type SchedulerName = IpvsScheduler | 'random';

/** A backend as the balancer tracks it. */
export interface BackendState {
  endpoint: Endpoint;
  /** Open connections (TCP) or live flows (UDP) to this backend through this frontend. */
  active: number;
}

/** What a scheduler may look at for one new connection. */
export interface PickContext {
  clientIP: string;
  /** The address the client connected to (the cluster IP, or this node's address for node ports). */
  destIP: string;
}

/** Chooses one backend from a non-empty list ordered by endpoint key. All weights are 1. */
export interface Scheduler {
  pick(backends: readonly BackendState[], ctx: PickContext): BackendState;
}

/** FNV-1a of a string with murmur3's final mix (so low bits spread): a stable hash for dh/sh, the same on every node. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Lowest `cost`; ties go round-robin from a moving cursor so equal backends share the load. */
function lowest(backends: readonly BackendState[], cost: (b: BackendState) => number, cursor: { n: number }): BackendState {
  let best: BackendState | undefined;
  let bestCost = Infinity;
  const n = backends.length;
  const start = cursor.n++ % n;
  for (let i = 0; i < n; i++) {
    const b = backends[(start + i) % n];
    const c = cost(b);
    if (c < bestCost) {
      best = b;
      bestCost = c;
    }
  }
  return best!;
}

/**
 * A new scheduler instance (each frontend has its own, like each IPVS virtual service).
 * - random (iptables mode): uniform choice.
 * - rr: the next backend in order.
 * - lc: fewest active connections.
 * - dh / sh: hash of the destination / source address picks the backend.
 * - sed: lowest (active + 1) / weight; nq: an idle backend if any, else as sed.
 */
export function newScheduler(name: SchedulerName, random: () => number = Math.random): Scheduler {
  const cursor = { n: 0 };
  switch (name) {
    case 'random':
      return { pick: (bs) => bs[Math.floor(random() * bs.length)] };
    case 'rr':
      return { pick: (bs) => bs[cursor.n++ % bs.length] };
    case 'lc':
      return { pick: (bs) => lowest(bs, (b) => b.active, cursor) };
    case 'dh':
      return { pick: (bs, ctx) => bs[hash32(ctx.destIP) % bs.length] };
    case 'sh':
      return { pick: (bs, ctx) => bs[hash32(ctx.clientIP) % bs.length] };
    case 'sed':
      return { pick: (bs) => lowest(bs, (b) => b.active + 1, cursor) };
    case 'nq':
      return {
        pick: (bs) => {
          const idle = bs.filter((b) => b.active === 0);
          return idle.length ? idle[cursor.n++ % idle.length] : lowest(bs, (b) => b.active + 1, cursor);
        },
      };
  }
}

export function schedulerFor(mode: ProxyMode, ipvsScheduler: IpvsScheduler): SchedulerName {
  return mode === 'iptables' ? 'random' : ipvsScheduler;
}

interface AffinityEntry {
  key: string;
  expiresAt: number;
}

/**
 * The backends of one frontend and the state that outlives endpoint updates: connection
 * counts of backends that stay, the scheduler's position, and the ClientIP affinity table
 * (client → backend, kept while the backend stays and the client returns within the
 * timeout; each new connection renews it).
 */
export class Balancer {
  private backends: BackendState[] = [];
  private readonly byKey = new Map<string, BackendState>();
  private readonly affinity = new Map<string, AffinityEntry>();
  private affinityTimeoutMs: number | undefined;
  /** Table size that triggers the next sweep of expired entries. */
  private pruneAt = 1024;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly now: () => number = Date.now,
  ) {}

  /** Replaces the backend set; backends that stay keep their counts. */
  setEndpoints(endpoints: readonly Endpoint[], affinityTimeoutMs: number | undefined): void {
    const next = new Map<string, BackendState>();
    for (const e of [...endpoints].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
      const cur = this.byKey.get(e.key);
      next.set(e.key, cur ? Object.assign(cur, { endpoint: e }) : { endpoint: e, active: 0 });
    }
    this.byKey.clear();
    for (const [k, v] of next) this.byKey.set(k, v);
    this.backends = [...next.values()];
    if (affinityTimeoutMs !== this.affinityTimeoutMs) this.affinity.clear();
    this.affinityTimeoutMs = affinityTimeoutMs;
  }

  get size(): number {
    return this.backends.length;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /**
   * The backend for a new connection, skipping `exclude` (backends that just failed to
   * connect); undefined when none is left. Counts it as active: call `done` when it ends.
   */
  pick(ctx: PickContext, exclude?: ReadonlySet<string>): BackendState | undefined {
    const candidates = exclude?.size ? this.backends.filter((b) => !exclude.has(b.endpoint.key)) : this.backends;
    if (candidates.length === 0) return undefined;
    let chosen: BackendState | undefined;
    const now = this.now();
    if (this.affinityTimeoutMs !== undefined) {
      const a = this.affinity.get(ctx.clientIP);
      if (a && a.expiresAt > now && !exclude?.has(a.key)) chosen = this.byKey.get(a.key);
    }
    chosen ??= this.scheduler.pick(candidates, ctx);
    if (this.affinityTimeoutMs !== undefined) {
      this.affinity.set(ctx.clientIP, { key: chosen.endpoint.key, expiresAt: now + this.affinityTimeoutMs });
      if (this.affinity.size > this.pruneAt) this.pruneAffinity(now);
    }
    chosen.active++;
    return chosen;
  }

  /** A connection picked with `pick` ended. */
  done(b: BackendState): void {
    if (b.active > 0) b.active--;
  }

  private pruneAffinity(now: number): void {
    for (const [client, a] of this.affinity) if (a.expiresAt <= now || !this.byKey.has(a.key)) this.affinity.delete(client);
    this.pruneAt = Math.max(1024, 2 * this.affinity.size);
  }
}
