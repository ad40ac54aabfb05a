import type { LabelSelectorObject, ObjectMeta } from '@orch/apimachinery';

// Lean views of the core/v1 objects the scheduler reads, as plain JSON. Only the fields a
// plugin looks at are declared; objects from the API carry more and pass through untouched.

/** Well-known labels, annotations and taints (upstream names with the orch brand). */
export const LABEL_HOSTNAME = 'orch.io/hostname';
export const LABEL_ZONE = 'topology.orch.io/zone';
export const LABEL_REGION = 'topology.orch.io/region';
export const TAINT_NODE_UNSCHEDULABLE = 'node.orch.io/unschedulable';
/** Namespace annotation whose selector is ANDed to every pod's node selector in that namespace. */
export const ANNOTATION_NAMESPACE_NODE_SELECTOR = 'scheduler.alpha.orch.io/node-selector';
/** The scheduler name of pods that do not name one. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export type ResourceList = Record<string, string | number>;

export interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface Container {
  name: string;
  image?: string;
  resources?: ResourceRequirements;
  /** `Always` on an init container makes it a sidecar that keeps running. */
  restartPolicy?: string;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  /** Empty matches every effect. */
  effect?: TaintEffect | '';
  tolerationSeconds?: number;
}

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelectorObject | null;
  namespaces?: string[];
  topologyKey: string;
  namespaceSelector?: LabelSelectorObject | null;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

export interface PodAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
}

export interface Affinity {
  nodeAffinity?: NodeAffinity;
  podAffinity?: PodAffinity;
  podAntiAffinity?: PodAffinity;
}

export type NodeInclusionPolicy = 'Honor' | 'Ignore';

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelectorObject | null;
  minDomains?: number;
  nodeAffinityPolicy?: NodeInclusionPolicy;
  nodeTaintsPolicy?: NodeInclusionPolicy;
  matchLabelKeys?: string[];
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  containers: Container[];
  initContainers?: Container[];
  overhead?: ResourceList;
  priority?: number;
  priorityClassName?: string;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
  schedulerName?: string;
  topologySpreadConstraints?: TopologySpreadConstraint[];
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface PodStatus {
  phase?: string;
  nominatedNodeName?: string;
  startTime?: string;
  conditions?: PodCondition[];
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface ContainerImage {
  names?: string[];
  sizeBytes?: number;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { unschedulable?: boolean; taints?: Taint[]; podCIDR?: string };
  status?: { allocatable?: ResourceList; capacity?: ResourceList; images?: ContainerImage[]; conditions?: NodeCondition[] };
}

/** The scheduling.orch.io/v1 PriorityClass fields the scheduler reads. */
export interface PriorityClass {
  metadata: ObjectMeta;
  value: number;
  globalDefault?: boolean;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
}

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
    case '' as never:
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
