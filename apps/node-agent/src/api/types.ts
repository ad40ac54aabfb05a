/**
 * The parts of the core/v1 wire types the node agent reads and writes (JSON shapes of
 * upstream `k8s.io/api/core/v1`, reduced to the fields used here).
 */
import type { KubeObject } from '@orch/apimachinery';

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string | number;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  hostPort?: number;
}

export interface ExecAction {
  command?: string[];
}

export interface HttpGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
  httpHeaders?: { name: string; value: string }[];
}

export interface TcpSocketAction {
  port: number | string;
  host?: string;
}

export interface Probe {
  exec?: ExecAction;
  httpGet?: HttpGetAction;
  tcpSocket?: TcpSocketAction;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface ResourceRequirements {
  limits?: Record<string, string | number>;
  requests?: Record<string, string | number>;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: ResourceRequirements;
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: ExecAction; httpGet?: HttpGetAction; sleep?: { seconds: number } } };
  /** On an init container, `Always` makes it a sidecar (not supported by this agent). */
  restartPolicy?: string;
  /** Keep a stdin open for attach sessions. */
  stdin?: boolean;
  /** Close that stdin once the first attach session ends. */
  stdinOnce?: boolean;
  /** Run in a pseudo-terminal. */
  tty?: boolean;
}

/** A container added to a running pod through the ephemeralcontainers subresource (debugging). */
export interface EphemeralContainer extends Container {
  /** The container whose process namespace it shares. */
  targetContainerName?: string;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface DownwardApiFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

export interface ProjectionSource {
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardApiFile[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardApiFile[]; defaultMode?: number };
  projected?: { sources?: ProjectionSource[]; defaultMode?: number };
  hostPath?: { path: string; type?: string };
  [other: string]: unknown;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodSpec {
  nodeName?: string;
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: EphemeralContainer[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  hostname?: string;
  hostNetwork?: boolean;
  shareProcessNamespace?: boolean;
  [other: string]: unknown;
}

export interface ContainerStateRunning {
  startedAt: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerState {
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
  waiting?: ContainerStateWaiting;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: string;
  [other: string]: unknown;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

export interface NodeStatus {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: NodeSystemInfo;
  [other: string]: unknown;
}

export interface Node extends KubeObject {
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; unschedulable?: boolean; [other: string]: unknown };
  status?: NodeStatus;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface Lease extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; acquireTime?: string };
}

export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
export const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
export const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;
export const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;
export const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
export const LEASES = { group: 'coordination.orch.io', version: 'v1', resource: 'leases' } as const;
export const CSRS = { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests' } as const;

/** Namespace of node heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease';

/** Upstream's default grace period of a pod (seconds). */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;
