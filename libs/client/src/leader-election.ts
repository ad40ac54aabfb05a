import { sleep, withDeadline } from './backoff';
import { isConflict, isNotFound } from './errors';
import type { RestClient, ResourceClient } from './rest';
import { formatMicroTime, parseTime, type KubeObject } from '@orch/apimachinery';
import type { Logger } from './types';

/** `coordination.orch.io/v1` Lease spec. Times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export const LEASES = { group: 'coordination.orch.io', version: 'v1', resource: 'leases' } as const;

/**
 * Where the Lease lives: the API by default (`client`), or any store with the same
 * optimistic-concurrency semantics (the gateway's watch pump keeps its Lease in the store).
 * get resolves undefined (or throws NotFound) when absent; update fails when the Lease's
 * resourceVersion is stale.
 */
export interface LeaseLock {
  get(name: string, opts: { signal?: AbortSignal }): Promise<Lease | undefined>;
  create(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease>;
  update(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease>;
}

export interface LeaderElectionConfig {
  /** The API client whose Leases are the lock (unless `lock` is given). */
  client?: RestClient;
  lock?: LeaseLock;
  namespace: string;
  /** Lease name, e.g. `orch-scheduler`. */
  name: string;
  /** Unique per candidate process (host name + random suffix). */
  identity: string;
  /** How long others honour a holder after its last renewal (default 15 s; whole seconds on the wire). */
  leaseDurationMs?: number;
  /** The leader steps down when it could not renew for this long (default 10 s). */
  renewDeadlineMs?: number;
  /** Pause between acquire or renew attempts (default 2 s; acquire attempts add up to 1.2x jitter). */
  retryPeriodMs?: number;
  /** On stop by the caller's signal, clear holderIdentity so another candidate takes over at once. */
  releaseOnCancel?: boolean;
  /**
   * Called once leadership is acquired. `signal` aborts when leadership ends; the work must
   * stop then, as another process may lead a moment later.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leading ended (lost or stopped), after the signal aborted and the lease was released. */
  onStoppedLeading?(): void;
  /** Called when the observed holder changes (this candidate included). */
  onNewLeader?(identity: string): void;
  logger?: Logger;
}

type Attempt = 'ok' | 'held' | 'failed';

/** Epoch ms of a lease's renewTime; undefined when absent or malformed. */
function renewTimeMs(renewTime: string | undefined): number | undefined {
  if (!renewTime) return undefined;
  try {
    return parseTime(renewTime);
  } catch {
    return undefined;
  }
}

/**
 * Leader election on a Lease (upstream client-go leaderelection with a LeaseLock).
 *
 * - Acquire: create the Lease, or update it with its resourceVersion (a 409 means another
 *   candidate won the race) once the holder's `renewTime + leaseDurationSeconds` has passed
 *   or the holder is empty. Taking over from another holder increments `leaseTransitions`
 *   and sets `acquireTime`. Expiry compares the holder's renewTime with the local clock, so
 *   clocks must agree to well within the lease duration.
 * - Lead: renew `renewTime` every retry period. If no renewal succeeds for `renewDeadlineMs`,
 *   or the Lease is found held by someone else, leadership is lost: the signal given to
 *   `onStartedLeading` aborts and {@link run} returns.
 * - Stop: abort the signal passed to {@link run}. With `releaseOnCancel` a leader clears
 *   `holderIdentity` on the way out.
 */
export class LeaderElector {
  private readonly leases: LeaseLock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly logger: Logger;
  private observed?: Lease;
  private observedHolder = '';
  private observedRenew = '';
  /** Local time the observed holder/renewTime last changed (fallback when renewTime is unparseable). */
  private observedAt = 0;
  private leading = false;

  constructor(private readonly cfg: LeaderElectionConfig) {
    this.leaseDurationMs = cfg.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = cfg.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = cfg.retryPeriodMs ?? 2_000;
    this.logger = cfg.logger ?? console;
    if (!cfg.identity) throw new Error('leader election: identity must not be empty');
    if (!cfg.name || !cfg.namespace) throw new Error('leader election: lease name and namespace are required');
    if (!(this.retryPeriodMs > 0)) throw new Error('leader election: retryPeriodMs must be greater than zero');
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leader election: leaseDurationMs must be greater than renewDeadlineMs');
    if (this.renewDeadlineMs <= this.retryPeriodMs * 1.2) throw new Error('leader election: renewDeadlineMs must be greater than 1.2 * retryPeriodMs');
    if (!cfg.lock && !cfg.client) throw new Error('leader election: a client or a lock is required');
    this.leases = cfg.lock ?? (cfg.client!.resource<Lease>(LEASES, cfg.namespace) satisfies ResourceClient<Lease>);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The last observed holder ('' when none). */
  getLeader(): string {
    return this.observedHolder;
  }

  /**
   * Campaigns until this candidate leads (or `signal` aborts), then leads until leadership
   * is lost or `signal` aborts. Resolves when it no longer leads; call again to re-campaign.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (!(await this.acquire(signal))) return;
    const leadership = new AbortController();
    this.leading = true;
    this.logger.info(`leader election: ${this.cfg.identity} acquired lease ${this.cfg.namespace}/${this.cfg.name}`);
    void Promise.resolve()
      .then(() => this.cfg.onStartedLeading(leadership.signal))
      .catch((err: unknown) => this.logger.error(`leader election: onStartedLeading failed: ${(err as Error).message}`));
    try {
      await this.renewLoop(signal);
    } finally {
      this.leading = false;
      leadership.abort(new Error('leadership lost'));
      if (signal?.aborted && this.cfg.releaseOnCancel) await this.release();
      try {
        this.cfg.onStoppedLeading?.();
      } catch (err) {
        this.logger.error(`leader election: onStoppedLeading failed: ${(err as Error).message}`);
      }
    }
  }

  private async acquire(signal?: AbortSignal): Promise<boolean> {
    while (!signal?.aborted) {
      if ((await this.tryAcquireOrRenew(this.renewDeadlineMs, signal)) === 'ok') return true;
      const jittered = this.retryPeriodMs * (1 + Math.random() * 1.2);
      if (!(await sleep(jittered, signal))) return false;
    }
    return false;
  }

  private async renewLoop(signal?: AbortSignal): Promise<void> {
    let lastRenew = Date.now();
    for (;;) {
      if (!(await sleep(this.retryPeriodMs, signal))) return;
      const remaining = Math.max(1, this.renewDeadlineMs - (Date.now() - lastRenew));
      const result = await this.tryAcquireOrRenew(remaining, signal);
      if (signal?.aborted) return;
      if (result === 'ok') {
        lastRenew = Date.now();
      } else if (result === 'held') {
        this.logger.warn(`leader election: lease ${this.cfg.namespace}/${this.cfg.name} is now held by ${this.observedHolder}; stepping down`);
        return;
      } else if (Date.now() - lastRenew >= this.renewDeadlineMs) {
        this.logger.warn(`leader election: failed to renew lease ${this.cfg.namespace}/${this.cfg.name} for ${this.renewDeadlineMs} ms; stepping down`);
        return;
      }
    }
  }

  /** One attempt, bounded by `timeoutMs` and by `stop`. */
  private async tryAcquireOrRenew(timeoutMs: number, stop?: AbortSignal): Promise<Attempt> {
    try {
      return await withDeadline(timeoutMs, stop, (signal) => this.attempt(signal));
    } catch (err) {
      if (!stop?.aborted) this.logger.warn(`leader election: ${this.cfg.identity} could not acquire or renew lease ${this.cfg.namespace}/${this.cfg.name}: ${(err as Error).message}`);
      return 'failed';
    }
  }

  /** Reads the lease, then creates it, takes it over or renews it; 'held' if another holder's term runs. */
  private async attempt(signal: AbortSignal): Promise<Attempt> {
    const now = new Date();
    const nowMicro = formatMicroTime(now.getTime() * 1000);
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    let current: Lease | undefined;
    try {
      current = await this.leases.get(this.cfg.name, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!current) {
      const created = await this.leases.create(
        {
          apiVersion: 'coordination.orch.io/v1',
          kind: 'Lease',
          metadata: { name: this.cfg.name, namespace: this.cfg.namespace },
          spec: { holderIdentity: this.cfg.identity, leaseDurationSeconds: durationSeconds, acquireTime: nowMicro, renewTime: nowMicro, leaseTransitions: 0 },
        },
        { signal },
      );
      this.observe(created);
      return 'ok';
    }
    this.observe(current);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.cfg.identity && !this.expired(spec, now.getTime())) return 'held';
    const renewing = holder === this.cfg.identity;
    const updated = await this.leases.update(
      {
        ...current,
        spec: {
          ...spec,
          holderIdentity: this.cfg.identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: renewing && spec.acquireTime ? spec.acquireTime : nowMicro,
          renewTime: nowMicro,
          leaseTransitions: (spec.leaseTransitions ?? 0) + (renewing ? 0 : 1),
        },
      },
      { signal },
    );
    this.observe(updated);
    return 'ok';
  }

  /** The holder's term has run out: `renewTime + leaseDurationSeconds` is past. */
  private expired(spec: LeaseSpec, nowMs: number): boolean {
    const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000)) * 1000;
    return nowMs >= (renewTimeMs(spec.renewTime) ?? this.observedAt) + durationMs;
  }

  private observe(lease: Lease): void {
    this.observed = lease;
    const holder = lease.spec?.holderIdentity ?? '';
    const renew = lease.spec?.renewTime ?? '';
    if (holder !== this.observedHolder || renew !== this.observedRenew) this.observedAt = Date.now();
    this.observedRenew = renew;
    if (holder === this.observedHolder) return;
    this.observedHolder = holder;
    if (!holder) return;
    try {
      this.cfg.onNewLeader?.(holder);
    } catch (err) {
      this.logger.error(`leader election: onNewLeader failed: ${(err as Error).message}`);
    }
  }

  /**
   * Clears holderIdentity if this candidate still holds the lease (best effort). A renewal cut
   * short by the stop may still have landed, making the observed lease stale: on a conflict the
   * lease is read again and released if it is still this candidate's.
   */
  private async release(): Promise<void> {
    if (this.observed?.spec?.holderIdentity !== this.cfg.identity) return;
    try {
      const released = await withDeadline(this.renewDeadlineMs, undefined, async (signal) => {
        let lease = this.observed!;
        for (let attempt = 1; ; attempt++) {
          const nowMicro = formatMicroTime(Date.now() * 1000);
          const spec: LeaseSpec = { ...lease.spec, leaseDurationSeconds: 1, acquireTime: nowMicro, renewTime: nowMicro };
          delete spec.holderIdentity;
          try {
            this.observe(await this.leases.update({ ...lease, spec }, { signal }));
            return true;
          } catch (err) {
            if (!isConflict(err) || attempt >= 3) throw err;
            const fresh = await this.leases.get(this.cfg.name, { signal });
            if (fresh?.spec?.holderIdentity !== this.cfg.identity) return false; // gone, or another holder already
            lease = fresh;
          }
        }
      });
      if (released) this.logger.info(`leader election: ${this.cfg.identity} released lease ${this.cfg.namespace}/${this.cfg.name}`);
    } catch (err) {
      this.logger.warn(`leader election: could not release lease ${this.cfg.namespace}/${this.cfg.name}: ${(err as Error).message}`);
    }
  }
}
