import type { Taint, Toleration } from '../../framework/api';

/** Node taints set by the node lifecycle controller (SPEC "Well-known labels, annotations and taints"). */
export const TAINT_NOT_READY = 'node.orch.io/not-ready';
export const TAINT_UNREACHABLE = 'node.orch.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.orch.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.orch.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.orch.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.orch.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.orch.io/network-unavailable';
/** Set by an administrator on a node known to be shut down (NoExecute). */
export const TAINT_OUT_OF_SERVICE = 'node.orch.io/out-of-service';

/** upstream Toleration.ToleratesTaint: effect and key match when set; Equal (default) compares values. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? 'Equal';
  if (op === 'Exists') return true;
  if (op === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

/** Same key and effect: the identity of a taint on a node. */
export function sameTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}
