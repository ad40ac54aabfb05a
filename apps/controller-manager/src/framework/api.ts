import type { appsV1, authenticationV1, autoscalingV1, autoscalingV2, batchV1, coreV1, discoveryV1, intstr, metaV1, policyV1, Served } from '@orch/api';

// The API types the controllers read and write, by the names they use: the generated types of
// libs/api (libs/api/src/types/generated), narrowed only where a controller relies on more than
// the wire promises: an object as the API serves it has apiVersion, kind and metadata (what
// @orch/client's informers and clients take, a KubeObject), and a workload always has a spec
// (defaulting fills it).

export type { CertificateSigningRequest, ClusterRole, ConfigMap, Endpoints, EndpointSlice, Lease, Namespace, Node, PersistentVolumeClaim, ResourceQuota, Secret, Service, ServiceAccount } from '@orch/api';

/** An object as the API serves it (@orch/api's Served) whose spec the API always serves. */
type WithSpec<T extends { spec?: unknown }> = Served<T> & { spec: NonNullable<T['spec']> };

export type IntOrString = intstr.IntOrString;

export type Pod = WithSpec<coreV1.Pod>;
export type PodSpec = coreV1.PodSpec;
export type PodCondition = coreV1.PodCondition;
export type PodTemplateSpec = coreV1.PodTemplateSpec;
export type Container = coreV1.Container;
export type Toleration = coreV1.Toleration;
export type Taint = coreV1.Taint;
export type NodeSelectorRequirement = coreV1.NodeSelectorRequirement;
export type NodeSelectorTerm = coreV1.NodeSelectorTerm;
export type NodeCondition = coreV1.NodeCondition;
export type NamespaceCondition = coreV1.NamespaceCondition;
export type ServicePort = coreV1.ServicePort;
export type EndpointSubset = coreV1.EndpointSubset;
export type EndpointAddress = coreV1.EndpointAddress;
export type EndpointPort = coreV1.EndpointPort;
export type SliceEndpoint = discoveryV1.Endpoint;
export type SlicePort = discoveryV1.EndpointPort;

export type ReplicaSet = WithSpec<appsV1.ReplicaSet>;
export type Deployment = WithSpec<appsV1.Deployment>;
export type DeploymentStatus = appsV1.DeploymentStatus;
export type StatefulSet = WithSpec<appsV1.StatefulSet>;
export type DaemonSet = WithSpec<appsV1.DaemonSet>;
export type ControllerRevision = Served<appsV1.ControllerRevision>;
export type Job = WithSpec<batchV1.Job>;
export type JobStatus = batchV1.JobStatus;
export type CronJob = WithSpec<batchV1.CronJob>;
export type PodDisruptionBudget = WithSpec<policyV1.PodDisruptionBudget>;
export type ReplicationController = WithSpec<coreV1.ReplicationController>;

export type HorizontalPodAutoscaler = WithSpec<autoscalingV2.HorizontalPodAutoscaler>;
export type HorizontalPodAutoscalerCondition = autoscalingV2.HorizontalPodAutoscalerCondition;
export type MetricSpec = autoscalingV2.MetricSpec;
export type MetricIdentifier = autoscalingV2.MetricIdentifier;
export type MetricStatus = autoscalingV2.MetricStatus;
export type ScalingRules = autoscalingV2.HPAScalingRules;
export type ScalingPolicy = autoscalingV2.HPAScalingPolicy;
export type Behavior = autoscalingV2.HorizontalPodAutoscalerBehavior;
/** The scale subresource (autoscaling/v1 Scale) of any scalable kind. */
export type Scale = Served<autoscalingV1.Scale>;
export type TokenRequest = authenticationV1.TokenRequest;

/** A metav1.Condition (PodDisruptionBudget). */
export type Condition = metaV1.Condition;

/** A status condition of a workload kind (apps/v1, batch/v1, core/v1 and metav1 spell them alike). */
export type WorkloadCondition = appsV1.DeploymentCondition | batchV1.JobCondition | coreV1.PodCondition | appsV1.StatefulSetCondition | appsV1.DaemonSetCondition | appsV1.ReplicaSetCondition;
