import { newScheduler, type SchedulerName } from './balancer';
import type { Frontend, FrontendContext, FrontendFactory } from './frontend';
import type { ProxyMetrics } from './metrics';
import type { FrontendSpec, Protocol } from './model';
import { tcpFrontends } from './tcp-frontend';
import { udpFrontends } from './udp-frontend';

export interface ProxierOptions {
  scheduler: SchedulerName;
  metrics: ProxyMetrics;
  /** The frontends of each protocol served (see {@link frontendFactories}). */
  frontends: readonly FrontendFactory[];
}

/** The TCP and UDP frontends, with upstream's userspace defaults for what `ctx` leaves out. */
export function frontendFactories(ctx: Pick<FrontendContext, 'logger' | 'metrics'> & Partial<FrontendContext>): FrontendFactory[] {
  const full: FrontendContext = { connectTimeoutMs: 2000, dropIdleMs: 60_000, udpIdleMs: 250, ...ctx };
  return [tcpFrontends(full), udpFrontends(full)];
}

interface Entry {
  owner: string;
  spec: FrontendSpec;
  frontend: Frontend;
}

/** The listeners of one service could not all be opened; the others are in place. */
export class BindError extends Error {
  constructor(readonly failures: string[]) {
    super(failures.join('; '));
    this.name = 'BindError';
  }
}

/** A clear message for a failed listen. */
export function describeBindError(spec: FrontendSpec, err: NodeJS.ErrnoException): string {
  const where = `cannot listen on ${spec.ip}:${spec.port}/${spec.protocol} for service ${spec.servicePort}`;
  switch (err.code) {
    case 'EADDRNOTAVAIL':
      return `${where}: ${spec.ip} is not an address of this machine (give the gateway a local service range, e.g. --service-cluster-ip-range=127.96.0.0/16)`;
    case 'EACCES':
      return `${where}: ports below 1024 need root or CAP_NET_BIND_SERVICE`;
    case 'EADDRINUSE':
      return `${where}: the address is already in use by another process`;
    default:
      return `${where}: ${err.message}`;
  }
}

/**
 * The userspace data plane: one listener (frontend) per service address, opened, updated
 * and closed as services and endpoints change. Updates apply to new connections only;
 * closing a listener leaves established connections running. Not safe for concurrent
 * `syncService` calls on the same service (the controller serializes them per key).
 */
export class Proxier {
  private readonly entries = new Map<string, Entry>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly frontends: ReadonlyMap<Protocol, FrontendFactory>;

  constructor(private readonly opts: ProxierOptions) {
    this.frontends = new Map(opts.frontends.map((f) => [f.protocol, f]));
  }

  /**
   * Makes the frontends of one service (key `namespace/name`) exactly `specs`: new ones are
   * bound, existing ones get the new route, the rest close. Idempotent. Throws BindError
   * listing the addresses that could not be bound, after applying everything else.
   */
  async syncService(owner: string, specs: readonly FrontendSpec[]): Promise<void> {
    const want = new Map(specs.map((s) => [s.key, s]));
    const have = this.byOwner.get(owner) ?? new Set<string>();
    const failures: string[] = [];
    for (const key of [...have]) {
      if (want.has(key)) continue;
      await this.remove(key);
      have.delete(key);
    }
    for (const spec of want.values()) {
      const cur = this.entries.get(spec.key);
      if (cur && cur.owner !== owner) {
        failures.push(`cannot listen on ${spec.key} for service ${spec.servicePort}: already served for ${cur.spec.servicePort}`);
        continue;
      }
      if (cur) {
        cur.spec = spec;
        cur.frontend.update(spec);
        continue;
      }
      const factory = this.frontends.get(spec.protocol);
      if (!factory) {
        failures.push(`cannot listen on ${spec.key} for service ${spec.servicePort}: ${spec.protocol} is not served`);
        continue;
      }
      const frontend = factory.create(spec, newScheduler(this.opts.scheduler));
      try {
        await frontend.listen();
      } catch (err) {
        this.opts.metrics.bindErrors.inc();
        failures.push(describeBindError(spec, err as NodeJS.ErrnoException));
        continue;
      }
      this.entries.set(spec.key, { owner, spec, frontend });
      have.add(spec.key);
      this.opts.metrics.frontends.inc({ protocol: spec.protocol });
    }
    if (have.size) this.byOwner.set(owner, have);
    else this.byOwner.delete(owner);
    if (failures.length) throw new BindError(failures);
  }

  /** Keys of the frontends currently listening (for tests and debugging). */
  listening(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Closes every listener and ends every open connection (shutdown). */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.byOwner.clear();
    for (const e of all) this.opts.metrics.frontends.dec({ protocol: e.spec.protocol });
    await Promise.all(all.map((e) => e.frontend.destroy()));
  }

  private async remove(key: string): Promise<void> {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.opts.metrics.frontends.dec({ protocol: e.spec.protocol });
    await e.frontend.close();
  }
}
