/**
 * The fields of workload kinds the workload controllers read and write, as JSON (upstream
 * k8s.io/api core/v1, apps/v1, batch/v1, policy/v1). Only what the controllers use is typed;
 * everything else is carried through unchanged.
 */
import type { KubeObject, LabelSelectorObject, ObjectMeta } from '@orch/apimachinery';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition as apps/v1, batch/v1 and core/v1 spell it (timestamps are RFC 3339). */
export interface WorkloadCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  /** Deployments only. */
  lastUpdateTime?: string;
  /** Pods and jobs. */
  lastProbeTime?: string | null;
  /** metav1.Condition (PodDisruptionBudget). */
  observedGeneration?: number;
}

/** intstr.IntOrString: an integer or a percentage such as `25%`. */
export type IntOrString = number | string;

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface Container {
  name: string;
  image?: string;
  [k: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] }; [k: string]: unknown }; [k: string]: unknown };
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  hostname?: string;
  subdomain?: string;
  [k: string]: unknown;
}

export interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  [k: string]: unknown;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase;
  conditions?: WorkloadCondition[];
  containerStatuses?: ContainerStatus[];
  startTime?: string;
  [k: string]: unknown;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec: PodSpec;
}

export interface ReplicaSet extends KubeObject {
  spec: { replicas?: number; minReadySeconds?: number; selector: LabelSelectorObject; template: PodTemplateSpec };
  status?: {
    replicas?: number;
    fullyLabeledReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    conditions?: WorkloadCondition[];
  };
}

export interface RollingUpdateDeployment {
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: WorkloadCondition[];
  collisionCount?: number;
}

export interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    strategy?: { type?: 'RollingUpdate' | 'Recreate'; rollingUpdate?: RollingUpdateDeployment };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    paused?: boolean;
    progressDeadlineSeconds?: number;
  };
  status?: DeploymentStatus;
}

export interface StatefulSet extends KubeObject {
  spec: {
    replicas?: number;
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    serviceName?: string;
    podManagementPolicy?: 'OrderedReady' | 'Parallel';
    updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { partition?: number; maxUnavailable?: IntOrString } };
    revisionHistoryLimit?: number;
    minReadySeconds?: number;
    ordinals?: { start?: number };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    collisionCount?: number;
    conditions?: WorkloadCondition[];
  };
}

export interface DaemonSet extends KubeObject {
  spec: {
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString } };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
  };
  status?: {
    currentNumberScheduled?: number;
    numberMisscheduled?: number;
    desiredNumberScheduled?: number;
    numberReady?: number;
    observedGeneration?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    numberUnavailable?: number;
    collisionCount?: number;
    conditions?: WorkloadCondition[];
  };
}

/** apps/v1 ControllerRevision: an immutable snapshot of a StatefulSet or DaemonSet template. */
export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision: number;
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[]; [k: string]: unknown };
  status?: { conditions?: WorkloadCondition[]; [k: string]: unknown };
}

export interface UncountedTerminatedPods {
  succeeded?: string[];
  failed?: string[];
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  selector?: LabelSelectorObject;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
}

export interface JobStatus {
  conditions?: WorkloadCondition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  completedIndexes?: string;
  uncountedTerminatedPods?: UncountedTerminatedPods;
  ready?: number;
}

export interface Job extends KubeObject {
  spec: JobSpec;
  status?: JobStatus;
}

export interface CronJob extends KubeObject {
  spec: {
    schedule: string;
    timeZone?: string;
    startingDeadlineSeconds?: number;
    concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
    suspend?: boolean;
    jobTemplate: { metadata?: ObjectMeta; spec: JobSpec };
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
  };
  status?: {
    active?: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string }[];
    lastScheduleTime?: string;
    lastSuccessfulTime?: string;
  };
}

export interface PodDisruptionBudget extends KubeObject {
  spec: {
    minAvailable?: IntOrString;
    maxUnavailable?: IntOrString;
    selector?: LabelSelectorObject | null;
    unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
  };
  status?: {
    observedGeneration?: number;
    disruptedPods?: Record<string, string>;
    disruptionsAllowed?: number;
    currentHealthy?: number;
    desiredHealthy?: number;
    expectedPods?: number;
    conditions?: WorkloadCondition[];
  };
}
