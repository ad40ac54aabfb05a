import type { KubeObject } from '@orch/apimachinery';
import type * as certificatesV1 from './types/generated/certificates-v1';
import type * as coordinationV1 from './types/generated/coordination-v1';
import type * as coreV1 from './types/generated/core-v1';
import type * as discoveryV1 from './types/generated/discovery-v1';
import type * as rbacV1 from './types/generated/rbac-v1';

// Objects as the API serves them: the generated types (types/generated) with apiVersion, kind
// and metadata always there, a KubeObject (what informers, clients and stores hold). The
// components name these instead of writing `coreV1.Node & KubeObject` each; a component that
// relies on more (a pod's spec) narrows in its own api module.

/** An object of a kind as the API serves it. */
export type Served<T> = T & KubeObject;

export type Node = Served<coreV1.Node>;
export type Namespace = Served<coreV1.Namespace>;
export type Service = Served<coreV1.Service>;
export type Endpoints = Served<coreV1.Endpoints>;
export type Secret = Served<coreV1.Secret>;
export type ConfigMap = Served<coreV1.ConfigMap>;
export type ServiceAccount = Served<coreV1.ServiceAccount>;
export type PersistentVolumeClaim = Served<coreV1.PersistentVolumeClaim>;
export type ResourceQuota = Served<coreV1.ResourceQuota>;
export type Lease = Served<coordinationV1.Lease>;
export type EndpointSlice = Served<discoveryV1.EndpointSlice>;
export type CertificateSigningRequest = Served<certificatesV1.CertificateSigningRequest>;
export type ClusterRole = Served<rbacV1.ClusterRole>;
