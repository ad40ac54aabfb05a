import type { coreV1, networkingV1, schedulingV1, Served } from '@orch/api';

// The API objects the admission plugins read and change, as the generated types of @orch/api
// (libs/api/src/types/generated) served with apiVersion, kind and metadata. An admitted body
// passed its schema check only: plugins still check what they rely on.

export type { Namespace, PersistentVolumeClaim, ServiceAccount } from '@orch/api';
export type Pod = Served<coreV1.Pod>;
/** A pod body as admitted: any part of its spec may be absent (its schema check allows it; defaulting comes later). */
export type AdmittedPod = Served<{ spec?: Partial<coreV1.PodSpec> }>;
export type PodSpec = coreV1.PodSpec;
export type Container = coreV1.Container;
export type Toleration = coreV1.Toleration;
export type LimitRange = Served<coreV1.LimitRange>;
export type LimitRangeItem = coreV1.LimitRangeItem;
export type Ingress = Served<networkingV1.Ingress>;
export type PriorityClass = Served<schedulingV1.PriorityClass>;
/** A resource list (`requests`, `limits`, `hard`): quantities by resource name. */
export type ResourceList = Record<string, string | number>;
