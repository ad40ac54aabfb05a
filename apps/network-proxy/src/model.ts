import type { coreV1, discoveryV1 } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';

/** Labels the proxy reads (SPEC well-known labels). */
export const SERVICE_NAME_LABEL = 'orch.io/service-name';
export const SERVICE_PROXY_NAME_LABEL = 'service.orch.io/service-proxy-name';
export const HEADLESS_LABEL = 'service.orch.io/headless';

export type Protocol = 'TCP' | 'UDP';

/** A Service as the API serves it (the generated type of @orch/api). */
export type Service = coreV1.Service & KubeObject;
/** A discovery.orch.io/v1 EndpointSlice as the API serves it. */
export type EndpointSlice = discoveryV1.EndpointSlice & KubeObject;

/** One backend of one service port, with its conditions as upstream kube-proxy reads them. */
export interface Endpoint {
  ip: string;
  port: number;
  /** `ip:port`: identity across updates. */
  key: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** On this proxy's node. */
  local: boolean;
}

/** Where a frontend sends new connections. */
export type Route =
  | { action: 'forward'; endpoints: Endpoint[] }
  /** Local traffic policy with no local endpoints while others exist elsewhere: accepted, never answered. */
  | { action: 'drop' };

/** One address:port the proxy serves for one service port. */
export interface FrontendSpec {
  /** `TCP/127.96.0.10:80`: unique per listener. */
  key: string;
  protocol: Protocol;
  ip: string;
  port: number;
  /** `namespace/name:port` for logs and metrics. */
  servicePort: string;
  route: Route;
  /** ClientIP session affinity timeout; undefined without affinity. */
  affinityTimeoutMs?: number;
}

export const frontendKey = (protocol: string, ip: string, port: number): string => `${protocol}/${ip}:${port}`;
