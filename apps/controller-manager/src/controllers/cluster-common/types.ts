import type { KubeObject } from '@orch/apimachinery';

// The wire shapes (JSON) of the objects the cluster controllers read and write: only the
// fields they use. Every field is optional as on the wire; helpers treat absent as upstream's zero.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A reference to an object (endpoint targetRef, owner of an event). */
export interface ObjectRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: TaintEffect;
  tolerationSeconds?: number;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  /** RFC 3339; set for NoExecute taints. */
  timeAdded?: string;
}

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    hostname?: string;
    subdomain?: string;
    restartPolicy?: string;
    terminationGracePeriodSeconds?: number;
    containers?: { name: string; ports?: ContainerPort[] }[];
    tolerations?: Toleration[];
    [k: string]: unknown;
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    conditions?: PodCondition[];
    reason?: string;
    message?: string;
    [k: string]: unknown;
  };
}

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[]; [k: string]: unknown };
  status?: { conditions?: NodeCondition[]; [k: string]: unknown };
}

export interface Lease extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; [k: string]: unknown };
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface Service extends KubeObject {
  spec?: {
    selector?: Record<string, string> | null;
    ports?: ServicePort[];
    clusterIP?: string;
    type?: string;
    publishNotReadyAddresses?: boolean;
    [k: string]: unknown;
  };
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectRef;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  subsets?: EndpointSubset[];
}

export interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  targetRef?: ObjectRef;
  nodeName?: string;
  zone?: string;
}

export interface EndpointSlice extends KubeObject {
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: SliceEndpoint[] | null;
  ports?: EndpointPort[] | null;
}

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: NamespaceCondition[] };
}

export interface NamespaceCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Secret extends KubeObject {
  type?: string;
  /** Values are base64 on the wire. */
  data?: Record<string, string>;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export interface ServiceAccount extends KubeObject {
  secrets?: { name?: string; namespace?: string }[];
}

export interface CsrCondition {
  type: 'Approved' | 'Denied' | 'Failed' | string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface CertificateSigningRequest extends KubeObject {
  spec: {
    /** base64 of a PEM `CERTIFICATE REQUEST`. */
    request: string;
    signerName: string;
    usages?: string[];
    expirationSeconds?: number;
    username?: string;
    uid?: string;
    groups?: string[];
  };
  status?: { conditions?: CsrCondition[]; /** base64 of PEM certificates. */ certificate?: string };
}
