import type { coreV1, schedulingV1 } from '@orch/api';

// The API types the scheduler reads, by the names its plugins use: the generated core/v1 and
// scheduling/v1 types (libs/api/src/types/generated), narrowed only where the scheduler relies
// on more than the wire promises.

/** Well-known labels, annotations and taints (upstream names with the orch brand). */
export const LABEL_HOSTNAME = 'orch.io/hostname';
export const LABEL_ZONE = 'topology.orch.io/zone';
export const LABEL_REGION = 'topology.orch.io/region';
export const TAINT_NODE_UNSCHEDULABLE = 'node.orch.io/unschedulable';
/** Namespace annotation whose selector is ANDed to every pod's node selector in that namespace. */
export const ANNOTATION_NAMESPACE_NODE_SELECTOR = 'scheduler.alpha.orch.io/node-selector';
/** The scheduler name of pods that do not name one. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** core/v1 ResourceList: quantities by resource name (strings as served; numbers accepted). */
export type ResourceList = Record<string, string | number>;
export type Container = coreV1.Container;
export type Taint = coreV1.Taint;
export type Toleration = coreV1.Toleration;
export type NodeSelectorRequirement = coreV1.NodeSelectorRequirement;
export type NodeSelectorTerm = coreV1.NodeSelectorTerm;
export type NodeSelector = coreV1.NodeSelector;
export type PreferredSchedulingTerm = coreV1.PreferredSchedulingTerm;
export type NodeAffinity = coreV1.NodeAffinity;
export type PodAffinityTerm = coreV1.PodAffinityTerm;
export type WeightedPodAffinityTerm = coreV1.WeightedPodAffinityTerm;
export type NodeInclusionPolicy = 'Honor' | 'Ignore';
export type TopologySpreadConstraint = coreV1.TopologySpreadConstraint;
export type PodSpec = coreV1.PodSpec;
export type PodCondition = coreV1.PodCondition;
/** A pod as the API serves it: always with a spec. */
export type Pod = coreV1.Pod & { spec: coreV1.PodSpec };
export type ContainerImage = coreV1.ContainerImage;
export type Node = coreV1.Node;
export type PriorityClass = schedulingV1.PriorityClass;

/** The queue/cache key of a pod: its uid, or `namespace/name` for objects without one (tests). */
export function podKey(pod: Pod): string {
  return pod.metadata.uid ?? `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** `namespace/name`, for messages. */
export function podRef(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** upstream corev1helpers.PodPriority: `spec.priority`, 0 when unset. */
export function podPriority(pod: Pod): number {
  return pod.spec.priority ?? 0;
}

/** upstream ToleratesTaint: the toleration matches the taint's key, value and effect. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator) {
    case 'Exists':
      return true;
    case 'Equal':
    case undefined:
    case '':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** True when one of `tolerations` tolerates `taint`. */
export function taintToleratedBy(taint: Taint, tolerations: readonly Toleration[] | undefined): boolean {
  if (!tolerations) return false;
  for (const t of tolerations) if (toleratesTaint(t, taint)) return true;
  return false;
}

/** upstream FindMatchingUntoleratedTaint: the first taint passing `filter` that no toleration tolerates. */
export function findUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  if (!taints) return undefined;
  for (const taint of taints) {
    if (filter(taint) && !taintToleratedBy(taint, tolerations)) return taint;
  }
  return undefined;
}

/** Taints a pod must tolerate to be placed: NoSchedule and NoExecute. */
export const doNotScheduleTaint = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';
