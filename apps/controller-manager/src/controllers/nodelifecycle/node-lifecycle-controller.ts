import { formatTime, parseTime } from '@orch/apimachinery';
import { isConflict, objectKey, unwrapTombstone } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController, selected, ignoreNotFound, periodically } from '../../framework/queue-controller';
import { LEASES, NODES, NODE_LEASE_NAMESPACE, PODS } from '../../framework/resources';
import type { Node, Pod, Taint } from '../../framework/api';
import { evictionTime } from './eviction';
import { observeNode, readyCondition, reconcileTaints, silentNodeConditions, zoneKey, zoneState, type NodeHealth, type NoExecuteMode } from './health';

/** Index of the pod informer: pods by `spec.nodeName`. */
const PODS_BY_NODE = 'nodelifecycle:pods-by-node';
/** upstream --node-monitor-period default. */
const DEFAULT_MONITOR_PERIOD_MS = 5_000;
/** upstream --node-startup-grace-period default. */
const DEFAULT_STARTUP_GRACE_MS = 60_000;

const noExecuteTaints = (node: Node | undefined): Taint[] => (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');

/**
 * Node lifecycle controller (upstream node-lifecycle-controller with its NoExecute taint
 * manager).
 *
 * Every `nodeMonitorPeriodMs` a pass looks at every node: a node whose Ready heartbeat and
 * Lease (`orch-node-lease/<node>`) have not moved for `nodeMonitorGracePeriodMs` (the
 * startup grace when its agent never posted Ready) gets its conditions set Unknown through
 * `nodes/status`; on a Ready True → not True transition its pods are marked not Ready. Then
 * taints are reconciled: NoSchedule taints from conditions, and the NoExecute
 * `node.orch.io/not-ready` (Ready False) or `node.orch.io/unreachable` (Unknown) with
 * `timeAdded`, except in disrupted zones (see {@link NoExecuteMode}).
 *
 * The taint manager (queue of pod keys) deletes a pod on a node with NoExecute taints it
 * does not tolerate at once, and one whose tolerations have `tolerationSeconds` when the
 * earliest runs out, after adding the DisruptionTarget condition.
 */
export class NodeLifecycleController extends QueueController {
  private readonly cache = this.informersOf({ nodes: NODES, leases: selected(LEASES, { namespace: NODE_LEASE_NAMESPACE }), pods: PODS });
  private readonly api = this.clientsOf({ nodes: NODES, pods: PODS });
  private readonly health = new Map<string, NodeHealth>();
  /** First time a NoExecute taint without `timeAdded` was seen, by `node|key`. */
  private readonly taintSeen = new Map<string, number>();
  private readonly monitorPeriodMs: number;
  private readonly startupGraceMs: number;

  constructor(ctx: ControllerContext) {
    super('nodelifecycle', ctx);
    this.monitorPeriodMs = ctx.options.nodeMonitorPeriodMs ?? DEFAULT_MONITOR_PERIOD_MS;
    this.startupGraceMs = ctx.options.nodeStartupGracePeriodMs ?? DEFAULT_STARTUP_GRACE_MS;
    this.cache.pods.addIndexer(PODS_BY_NODE, (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    this.cache.pods.addEventHandler({
      onAdd: (p) => this.enqueuePod(p),
      onUpdate: (_o, p) => this.enqueuePod(p),
    });
    const podsOf = (node: Node) => this.cache.pods.byIndex(PODS_BY_NODE, node.metadata.name ?? '').forEach((p) => this.queue.add(objectKey(p)));
    this.cache.nodes.addEventHandler({
      onAdd: podsOf,
      onUpdate: (oldNode, node) => {
        if (JSON.stringify(noExecuteTaints(oldNode)) !== JSON.stringify(noExecuteTaints(node))) podsOf(node);
      },
      onDelete: (obj) => {
        const name = unwrapTombstone(obj).metadata.name ?? '';
        this.health.delete(name);
        for (const key of [...this.taintSeen.keys()]) if (key.startsWith(`${name}|`)) this.taintSeen.delete(key);
      },
    });
  }

  private enqueuePod(pod: Pod): void {
    if (pod.spec?.nodeName && !pod.metadata.deletionTimestamp && noExecuteTaints(this.cache.nodes.get(pod.spec.nodeName)).length) this.queue.add(objectKey(pod));
  }

  protected override loops(signal: AbortSignal): Promise<void>[] {
    return [periodically(this.monitorPeriodMs, signal, this.logger, 'node health pass', () => this.monitorNodes())];
  }

  /** One pass of upstream monitorNodeHealth over every node. */
  private async monitorNodes(): Promise<void> {
    const observed: { node: Node; zone: string; ready?: string }[] = [];
    for (const cached of this.cache.nodes.list()) {
      const node = await this.updateNodeHealth(cached).catch((err: Error) => {
        this.logger.warn('updating node health failed', { node: cached.metadata.name, error: err.message });
        return cached;
      });
      observed.push({ node, zone: zoneKey(node), ready: readyCondition(node)?.status });
    }
    const zones = new Map<string, (string | undefined)[]>();
    for (const o of observed) zones.set(o.zone, [...(zones.get(o.zone) ?? []), o.ready]);
    const states = new Map([...zones].map(([zone, ready]) => [zone, zoneState(ready)]));
    const allDisrupted = states.size > 0 && [...states.values()].every((s) => s === 'FullDisruption');
    for (const { node, zone } of observed) {
      const mode: NoExecuteMode = allDisrupted ? 'remove' : states.get(zone) === 'PartialDisruption' ? 'hold' : 'apply';
      await this.reconcileNodeTaints(node, mode).catch((err: Error) => {
        if (!isConflict(err)) this.logger.warn('updating node taints failed', { node: node.metadata.name, error: err.message });
      });
    }
  }

  /** upstream tryUpdateNodeHealth; returns the node as it is after the pass. */
  private async updateNodeHealth(cached: Node): Promise<Node> {
    const name = cached.metadata.name ?? '';
    const now = Date.now();
    const prev = this.health.get(name);
    const record = observeNode(prev, cached, this.cache.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`), now);
    this.health.set(name, record);
    let node = cached;
    const grace = readyCondition(cached) ? this.ctx.options.nodeMonitorGracePeriodMs : this.startupGraceMs;
    if (now - record.probeMs > grace) {
      const conditions = silentNodeConditions(cached, formatTime(now));
      if (conditions) {
        this.logger.info('node stopped posting status, marking it Unknown', { node: name, silentForMs: now - record.probeMs });
        node = await this.api.nodes.updateStatus({ ...structuredClone(cached), status: { ...(cached.status ?? {}), conditions } });
        this.recorder.event(node, 'Normal', 'NodeNotReady', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      }
    }
    const ready = readyCondition(node)?.status;
    if (prev?.ready === 'True' && ready !== 'True') await this.markPodsNotReady(name);
    record.ready = ready;
    return node;
  }

  /** upstream MarkPodsNotReady: the pods' Ready condition becomes False. */
  private async markPodsNotReady(nodeName: string): Promise<void> {
    const now = formatTime(Date.now());
    for (const pod of this.cache.pods.byIndex(PODS_BY_NODE, nodeName)) {
      const conditions = (pod.status?.conditions ?? []).map((c) => ({ ...c }));
      const ready = conditions.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      Object.assign(ready, { status: 'False', lastTransitionTime: now });
      await ignoreNotFound(this.api.pods.updateStatus({ ...structuredClone(pod), status: { ...(pod.status ?? {}), conditions } })).catch((err: Error) =>
        this.logger.warn('marking pod not ready failed', { pod: objectKey(pod), error: err.message }),
      );
    }
  }

  private async reconcileNodeTaints(node: Node, mode: NoExecuteMode): Promise<void> {
    const taints = reconcileTaints(node, mode, formatTime(Date.now()));
    if (!taints) return;
    this.logger.info('updating node taints', { node: node.metadata.name, taints: taints.map((t) => `${t.key}:${t.effect}`) });
    await this.api.nodes.update({ ...structuredClone(node), spec: { ...(node.spec ?? {}), taints } });
  }

  /** Taint manager: evict the pod once a NoExecute taint of its node is no longer tolerated. */
  protected async sync(key: string): Promise<void> {
    const pod = this.cache.pods.get(key);
    if (!pod?.spec?.nodeName || pod.metadata.deletionTimestamp) return;
    const nodeName = pod.spec.nodeName;
    const taints = noExecuteTaints(this.cache.nodes.get(nodeName));
    const now = Date.now();
    const at = evictionTime(taints, pod.spec.tolerations ?? [], (t) => this.taintAddedAt(nodeName, t, now));
    if (at === undefined) return;
    if (at > now) {
      this.queue.addAfter(key, at - now);
      return;
    }
    await this.evict(pod, taints);
  }

  private taintAddedAt(nodeName: string, taint: Taint, now: number): number {
    if (taint.timeAdded) {
      try {
        return parseTime(taint.timeAdded);
      } catch {
        // fall through: treat like a taint without timeAdded
      }
    }
    const key = `${nodeName}|${taint.key}`;
    if (!this.taintSeen.has(key)) this.taintSeen.set(key, now);
    return this.taintSeen.get(key) as number;
  }

  /** upstream addConditionAndDeletePod: DisruptionTarget condition, then delete. */
  private async evict(pod: Pod, taints: Taint[]): Promise<void> {
    const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
    conditions.push({ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: formatTime(Date.now()) });
    const client = this.api.pods.inNamespace(pod.metadata.namespace ?? '');
    const updated = await ignoreNotFound(client.updateStatus({ ...structuredClone(pod), status: { ...(pod.status ?? {}), conditions } }));
    if (!updated) return;
    this.recorder.event(pod, 'Normal', 'TaintManagerEviction', 'Delete', `Marking for deletion Pod ${objectKey(pod)}`);
    this.logger.info('evicting pod from tainted node', { pod: objectKey(pod), node: pod.spec?.nodeName, taints: taints.map((t) => t.key) });
    await ignoreNotFound(client.delete(pod.metadata.name ?? '', { preconditions: { uid: pod.metadata.uid } }));
  }
}

export const nodeLifecycleController: ControllerDescriptor = { name: 'nodelifecycle', serviceAccount: 'node-controller', create: (ctx) => new NodeLifecycleController(ctx) };
