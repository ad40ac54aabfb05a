import type { Logger } from '@orch/server-common';
import type { Store } from '@orch/storage';
import { sameOwner, type RangeAllocator, type StoredAllocation } from './allocator';
import { parentRefOf, type ServiceAddresses } from './addresses';
import type { Service } from './service';

export interface RepairOptions {
  /** Store prefix of the Service objects (`/registry/core/services/`). */
  servicesPrefix: string;
  /** Pause between passes (upstream: 3 minutes). */
  intervalMs?: number;
  /**
   * A record no service references is freed only once it is older than this, so a write
   * still in flight (record created, service not yet stored) is never robbed (default 60 s).
   */
  leakGraceMs?: number;
  /** First retry delay after a failed pass; doubles up to intervalMs. */
  retryMs?: number;
  now?: () => number;
}

/** What one pass found and did. */
export interface RepairReport {
  /** Records re-created for values services use but the store had lost. */
  marked: string[];
  /** Records freed: no service referenced them for longer than the grace period. */
  freed: string[];
  /** Unreferenced records still within the grace period. */
  pending: string[];
  /** Values one service uses that the store records for another (needs a human). */
  conflicts: string[];
  /** Values services use that lie outside the configured ranges (e.g. after a range change). */
  outOfRange: string[];
}

/**
 * Reconciles the allocation records with the Services in the store (upstream's repair
 * controllers for cluster IPs and node ports): after a crash between reserving and writing
 * (leak) or between deleting and releasing, and when records went missing. Safe to run on
 * every gateway replica at once: creates are create-if-absent and frees are conditional on
 * the record's revision. `start()` runs a pass now and then every intervalMs, retrying
 * failed passes with exponential backoff; `stop()` ends the loop and waits for a running pass.
 */
export class ServiceAddressRepair {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  private passes = 0;
  private readonly intervalMs: number;
  private readonly leakGraceMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly addresses: ServiceAddresses,
    private readonly logger: Logger,
    private readonly opts: RepairOptions,
  ) {
    this.intervalMs = opts.intervalMs ?? 3 * 60_000;
    this.leakGraceMs = opts.leakGraceMs ?? 60_000;
    this.retryMs = opts.retryMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** True once a pass has completed (readiness of the gateway waits for it). */
  get synced(): boolean {
    return this.passes > 0;
  }

  start(): void {
    let delay = this.retryMs;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce().then(
        (r) => {
          delay = this.retryMs;
          if (r.freed.length || r.marked.length) this.logger.info('repaired service addresses', { freed: r.freed, marked: r.marked });
          this.schedule(tick, this.intervalMs);
        },
        (err) => {
          this.logger.warn('service address repair failed; retrying', { err: (err as Error).message, retryInMs: delay });
          this.schedule(tick, delay);
          delay = Math.min(delay * 2, this.intervalMs);
        },
      );
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One reconciliation pass. Records are read before services, so a service stored after its record is always seen. */
  async runOnce(): Promise<RepairReport> {
    const report: RepairReport = { marked: [], freed: [], pending: [], conflicts: [], outOfRange: [] };
    const { ips, ports } = this.addresses;
    const ipRecords = new Map((await ips.list()).map((r) => [r.value, r]));
    const portRecords = new Map((await ports.list()).map((r) => [r.value, r]));
    const page = await this.store.list(this.opts.servicesPrefix);
    const used = { ip: new Set<string>(), port: new Set<string>() };

    for (const kv of page.items) {
      let svc: Service;
      try {
        svc = JSON.parse(kv.value) as Service;
      } catch {
        continue;
      }
      for (const h of this.addresses.held(svc)) {
        const isIp = h.allocator === ips;
        const records = isIp ? ipRecords : portRecords;
        const label = `${isIp ? 'ip' : 'port'} ${h.value} (${svc.metadata.namespace}/${svc.metadata.name})`;
        (isIp ? used.ip : used.port).add(h.value);
        if (h.allocator.spec.offsetOf(h.value) === undefined) {
          report.outOfRange.push(label);
          continue;
        }
        const rec = records.get(h.value);
        if (rec) {
          if (!sameOwner(rec.owner, parentRefOf(svc))) report.conflicts.push(label);
          continue;
        }
        await this.mark(h.allocator, h.value, svc, label, report);
      }
    }
    await this.freeLeaks(ips, ipRecords, used.ip, 'ip', report);
    await this.freeLeaks(ports, portRecords, used.port, 'port', report);
    for (const c of report.conflicts) this.logger.error('service address allocated to another service', { value: c });
    for (const o of report.outOfRange) this.logger.warn('service address is outside the configured range', { value: o });
    this.passes++;
    return report;
  }

  private async mark(allocator: RangeAllocator, value: string, svc: Service, label: string, report: RepairReport): Promise<void> {
    try {
      await allocator.allocate(value, parentRefOf(svc));
      report.marked.push(label);
    } catch {
      // Taken since the records were listed: the owner decides whether it is a conflict.
      const owner = await allocator.ownerOf(value);
      if (owner && !sameOwner(owner, parentRefOf(svc))) report.conflicts.push(label);
    }
  }

  private async freeLeaks(allocator: RangeAllocator, records: Map<string, StoredAllocation>, used: Set<string>, kind: string, report: RepairReport): Promise<void> {
    for (const rec of records.values()) {
      if (used.has(rec.value)) continue;
      const label = `${kind} ${rec.value}`;
      if (this.now() - rec.createdAt < this.leakGraceMs) {
        report.pending.push(label);
        continue;
      }
      if (await allocator.forget(rec.value, rec.modRevision)) report.freed.push(label);
    }
  }

  private schedule(fn: () => void, ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(fn, ms);
    this.timer.unref?.();
  }
}
