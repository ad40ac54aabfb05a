import { parseTime } from '@orch/apimachinery';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  sameTaint,
} from '../cluster-common/taints';
import type { Lease, Node, NodeCondition, Taint } from '../../framework/api';

/** What the controller remembers of a node between passes (upstream nodeHealthData). */
export interface NodeHealth {
  /** Local time (ms) the node was last heard from: Ready heartbeat changed or lease renewed. */
  probeMs: number;
  /** The Ready condition's lastHeartbeatTime when last seen. */
  heartbeat?: string;
  /** The lease's renewTime (ms) when last seen. */
  leaseRenewMs?: number;
  /** Ready status after the last pass (to see True → not True transitions). */
  ready?: string;
}

export function readyCondition(node: Node): NodeCondition | undefined {
  return (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

function timeMs(s: string | undefined): number | undefined {
  if (!s) return undefined;
  try {
    return parseTime(s);
  } catch {
    return undefined;
  }
}

/**
 * upstream tryUpdateNodeHealth's bookkeeping: a node seen for the first time counts as heard
 * from now (or at its creation when its agent never posted a Ready condition); a changed
 * Ready heartbeat or a lease renewed later than before moves `probeMs` to now.
 */
export function observeNode(prev: NodeHealth | undefined, node: Node, lease: Lease | undefined, nowMs: number): NodeHealth {
  const ready = readyCondition(node);
  const renewMs = timeMs(lease?.spec?.renewTime);
  if (!prev) {
    return { probeMs: ready ? nowMs : (timeMs(node.metadata.creationTimestamp) ?? nowMs), heartbeat: ready?.lastHeartbeatTime, leaseRenewMs: renewMs, ready: ready?.status };
  }
  const next = { ...prev };
  if (ready && ready.lastHeartbeatTime !== prev.heartbeat) {
    next.probeMs = nowMs;
    next.heartbeat = ready.lastHeartbeatTime;
  }
  if (renewMs !== undefined && (prev.leaseRenewMs === undefined || renewMs > prev.leaseRenewMs)) {
    next.probeMs = nowMs;
    next.leaseRenewMs = renewMs;
  }
  return next;
}

/** Conditions the controller turns Unknown when a node goes silent (NetworkUnavailable is left alone). */
export const SILENT_NODE_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

/**
 * upstream tryUpdateNodeHealth after the grace period: every condition of
 * {@link SILENT_NODE_CONDITIONS} becomes Unknown (`NodeStatusUnknown`, "Kubelet stopped posting
 * node status.") or is added as Unknown when the agent never posted it
 * (`NodeStatusNeverUpdated`). Undefined when all already are Unknown.
 */
export function silentNodeConditions(node: Node, now: string): NodeCondition[] | undefined {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  let changed = false;
  for (const type of SILENT_NODE_CONDITIONS) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({ type, status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: node.metadata.creationTimestamp, lastTransitionTime: now });
      changed = true;
    } else if (c.status !== 'Unknown') {
      Object.assign(c, { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now });
      changed = true;
    }
  }
  return changed ? conditions : undefined;
}

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** Fraction of not-ready nodes above which a zone is partially disrupted (upstream --unhealthy-zone-threshold). */
export const UNHEALTHY_ZONE_THRESHOLD = 0.55;

/** upstream ComputeZoneState: no ready node → full disruption; > 2 and ≥ 55 % not ready → partial. */
export function zoneState(ready: readonly (string | undefined)[]): ZoneState {
  const readyNodes = ready.filter((s) => s === 'True').length;
  const notReady = ready.length - readyNodes;
  if (readyNodes === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / ready.length >= UNHEALTHY_ZONE_THRESHOLD) return 'PartialDisruption';
  return 'Normal';
}

/** upstream GetZoneKey: region and zone labels of a node ('' when it has neither). */
export function zoneKey(node: Node): string {
  const labels = node.metadata.labels ?? {};
  const region = labels['topology.orch.io/region'] ?? '';
  const zone = labels['topology.orch.io/zone'] ?? '';
  return region || zone ? `${region}:\x00:${zone}` : '';
}

/**
 * How NoExecute taints are handled in a node's zone: `apply` normally; `hold` in a
 * partially disrupted zone (none added, present ones kept; upstream's reduced eviction rate
 * of small clusters is 0); `remove` when every zone is fully disrupted (upstream "master
 * disruption mode": the control plane is more likely cut off than every node dead).
 */
export type NoExecuteMode = 'apply' | 'hold' | 'remove';

const NO_SCHEDULE_BY_CONDITION: Record<string, Record<string, string>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: TAINT_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_PID_PRESSURE },
};

/** Taints the controller owns: (key, effect) pairs it adds and removes. */
const MANAGED: Taint[] = [
  ...[TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_MEMORY_PRESSURE, TAINT_DISK_PRESSURE, TAINT_NETWORK_UNAVAILABLE, TAINT_PID_PRESSURE, TAINT_UNSCHEDULABLE].map((key) => ({
    key,
    effect: 'NoSchedule',
  })),
  { key: TAINT_NOT_READY, effect: 'NoExecute' },
  { key: TAINT_UNREACHABLE, effect: 'NoExecute' },
];

/**
 * The node's taints after upstream doNoScheduleTaintingPass and doNoExecuteTaintingPass:
 * NoSchedule taints follow the conditions (Ready False → not-ready, Unknown → unreachable,
 * pressure/network conditions True → theirs) and spec.unschedulable; the NoExecute
 * not-ready/unreachable taint follows Ready per `mode`, a new one stamped `timeAdded: now`.
 * Other taints are kept as they are. Undefined when nothing changes.
 */
export function reconcileTaints(node: Node, mode: NoExecuteMode, now: string): Taint[] | undefined {
  const current = node.spec?.taints ?? [];
  const want: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = NO_SCHEDULE_BY_CONDITION[c.type]?.[c.status];
    if (key) want.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  const ready = readyCondition(node)?.status;
  const noExecuteKey = ready === 'False' ? TAINT_NOT_READY : ready === 'Unknown' ? TAINT_UNREACHABLE : undefined;
  if (mode === 'hold' && ready !== 'True') {
    want.push(...current.filter((t) => t.effect === 'NoExecute' && (t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE)));
  } else if (mode === 'apply' && noExecuteKey) {
    want.push({ key: noExecuteKey, effect: 'NoExecute' });
  }
  const kept = current.filter((t) => !MANAGED.some((m) => sameTaint(m, t)) || want.some((w) => sameTaint(w, t)));
  const added = want
    .filter((w) => !current.some((t) => sameTaint(t, w)))
    .filter((w, i, all) => all.findIndex((x) => sameTaint(x, w)) === i)
    .map((w) => (w.effect === 'NoExecute' ? { ...w, timeAdded: now } : w));
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}
