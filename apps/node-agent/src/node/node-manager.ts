import { formatMicroTime } from '@orch/apimachinery';
import { Backoff, isAlreadyExists, isNotFound, sleep, type ResourceClient, type RestClient } from '@orch/client';
import type { Logger } from '@orch/server-common';
import { LEASES, NODES, NODE_LEASE_NAMESPACE, type Lease, type Node, type NodeStatus } from '../api/types';
import type { MachineInfo, MachineUsage } from './machine';
import {
  initialNode,
  nodeAllocatable,
  nodeCapacity,
  nodeConditions,
  nodeStatus,
  pressuresFor,
  withPressureTaints,
  type EvictionThreshold,
  type NodeIdentity,
} from './node-object';

export interface NodeManagerOptions {
  client: RestClient;
  id: NodeIdentity;
  info: MachineInfo;
  /** Current usage (real machine or a fixed one for simulated nodes). */
  usage: () => Promise<MachineUsage>;
  /** The latest Node object known (an informer cache), if any. */
  cached: () => Node | undefined;
  thresholds: readonly EvictionThreshold[];
  reserved: Record<string, string>;
  maxPods: number;
  /** `process` or `simulated`: shows in nodeInfo.containerRuntimeVersion. */
  runtime: string;
  statusUpdateMs: number;
  statusReportMs: number;
  leaseDurationSeconds: number;
  /** Start the loops at a random point of their period (many nodes in one process). */
  jitterStart?: boolean;
  logger: Logger;
}

/** The status fields compared to decide whether a post is needed (heartbeat times left out). */
function comparable(status: NodeStatus | undefined): string {
  const conditions = (status?.conditions ?? []).map(({ lastHeartbeatTime: _h, ...c }) => c);
  return JSON.stringify([status?.capacity, status?.allocatable, conditions, status?.addresses, status?.daemonEndpoints, status?.nodeInfo]);
}

/**
 * Keeps one Node object alive for the agent (upstream kubelet node status + node lease):
 * - `register()` creates the Node (labels orch.io/arch, os, hostname, pod CIDR, taints) or,
 *   when it exists, reconciles its labels; retried with backoff until it succeeds.
 * - the status loop computes capacity, allocatable, conditions (Ready, MemoryPressure,
 *   DiskPressure, PIDPressure), addresses and the agent endpoint every `statusUpdateMs` and
 *   posts them (merge patch of `nodes/status`) when they differ from the Node's current status
 *   or `statusReportMs` passed; pressure taints follow the conditions;
 * - the lease loop renews `orch-node-lease/<name>` every quarter of its duration.
 * Both loops run until the signal aborts and retry failures with backoff; with `jitterStart`
 * their first round comes at a random point of the period, so a thousand simulated nodes do
 * not all write at once.
 */
export class NodeManager {
  private readonly nodes: ResourceClient<Node>;
  private readonly leases: ResourceClient<Lease>;
  private latest?: Node;
  private lastPost = 0;

  constructor(private readonly opts: NodeManagerOptions) {
    this.nodes = opts.client.resource<Node>(NODES);
    this.leases = opts.client.resource<Lease>(LEASES, NODE_LEASE_NAMESPACE);
  }

  get name(): string {
    return this.opts.id.name;
  }

  /** Creates or reconciles the Node; resolves once it exists (false if aborted first). */
  async register(signal: AbortSignal): Promise<boolean> {
    const backoff = new Backoff({ initialMs: 200, maxMs: 7_000 });
    while (!signal.aborted) {
      try {
        await this.registerOnce();
        return true;
      } catch (err) {
        this.opts.logger.warn('node registration failed; retrying', { node: this.name, err: (err as Error).message });
        if (!(await sleep(backoff.next(), signal))) break;
      }
    }
    return false;
  }

  private async registerOnce(): Promise<void> {
    const want = initialNode(this.opts.id);
    try {
      this.latest = await this.nodes.create(want);
      this.opts.logger.debug('registered node', { node: this.name });
      return;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    // Re-registration (upstream reconcile): the agent's labels win, taints and spec stay.
    const labels = want.metadata.labels ?? {};
    const existing = await this.nodes.get(this.name);
    const stale = Object.entries(labels).some(([k, v]) => existing.metadata.labels?.[k] !== v);
    const podCidr = existing.spec?.podCIDR ? {} : { spec: { podCIDR: this.opts.id.podCidr, podCIDRs: [this.opts.id.podCidr] } };
    this.latest = stale || 'spec' in podCidr ? await this.nodes.patch(this.name, 'merge', { metadata: { labels }, ...podCidr }) : existing;
    this.opts.logger.debug('node already registered; reconciled it', { node: this.name });
  }

  /** Runs the status and lease loops until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.loop('node status', this.opts.statusUpdateMs, () => this.syncStatus(), signal), this.loop('node lease', this.leaseRenewMs(), () => this.renewLease(), signal)]);
  }

  private leaseRenewMs(): number {
    return Math.max(1000, (this.opts.leaseDurationSeconds * 1000) / 4);
  }

  /** Calls `fn` every `periodMs` (first call at once); failures retry sooner, with backoff. */
  private async loop(what: string, periodMs: number, fn: () => Promise<void>, signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 200, maxMs: Math.min(7_000, periodMs), jitter: 0.2 });
    if (this.opts.jitterStart && !(await sleep(Math.random() * periodMs, signal))) return;
    while (!signal.aborted) {
      let wait = periodMs;
      try {
        await fn();
        backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        wait = backoff.next();
        this.opts.logger.warn(`${what} update failed; retrying`, { node: this.name, err: (err as Error).message, retryMs: wait });
      }
      if (!(await sleep(wait, signal))) break;
    }
  }

  /** Computes the status and posts it when it changed or a report is due (idempotent). */
  async syncStatus(): Promise<void> {
    const now = new Date();
    const current = this.newest();
    const usage = await this.opts.usage();
    const pressures = pressuresFor(usage, this.opts.thresholds);
    const capacity = nodeCapacity(this.opts.info, usage, this.opts.maxPods);
    const ours = nodeStatus(this.opts.id, this.opts.info, {
      capacity,
      allocatable: nodeAllocatable(capacity, this.opts.reserved, this.opts.thresholds),
      conditions: nodeConditions(current?.status?.conditions, pressures, now),
      runtime: this.opts.runtime,
    });
    // Conditions other agents own (e.g. NetworkUnavailable) are kept.
    const foreign = (current?.status?.conditions ?? []).filter((c) => !ours.conditions!.some((o) => o.type === c.type));
    const status: NodeStatus = { ...ours, conditions: [...ours.conditions!, ...foreign] };
    const taints = withPressureTaints(current?.spec?.taints, pressures, now);
    if (taints) this.latest = await this.nodes.patch(this.name, 'merge', { spec: { taints } });
    const due = Date.now() - this.lastPost >= this.opts.statusReportMs;
    if (!due && current && comparable(current.status) === comparable(status)) return;
    this.latest = await this.nodes.patch(this.name, 'merge', { status }, { subresource: 'status' });
    this.lastPost = Date.now();
  }

  /** The Node as the informer last saw it (it follows every write within milliseconds), else the last write. */
  private newest(): Node | undefined {
    return this.opts.cached() ?? this.latest;
  }

  /** Renews the node Lease (creating it, owned by the Node, when missing). */
  async renewLease(): Promise<void> {
    const spec = { holderIdentity: this.name, leaseDurationSeconds: this.opts.leaseDurationSeconds, renewTime: formatMicroTime(Date.now() * 1000) };
    try {
      await this.leases.patch(this.name, 'merge', { spec });
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const uid = this.latest?.metadata.uid;
    const owner = uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.name, uid }] : undefined;
    try {
      await this.leases.create({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: NODE_LEASE_NAMESPACE, ...(owner ? { ownerReferences: owner } : {}) }, spec });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}
