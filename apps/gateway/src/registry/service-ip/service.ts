import type { KubeObject } from '@orch/apimachinery';

/** The fields of a core/v1 Service that address allocation and validation read. */
export interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  ports?: ServicePort[];
  selector?: Record<string, string>;
  externalName?: string;
  externalIPs?: string[];
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  internalTrafficPolicy?: string;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  allocateLoadBalancerNodePorts?: boolean;
  publishNotReadyAddresses?: boolean;
}

export interface Service extends KubeObject {
  spec?: ServiceSpec;
}

export const CLUSTER_IP_NONE = 'None';
export const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

/** Every type but ExternalName has a clusterIP field (an address or `None`). */
export function needsClusterIP(svc: Service): boolean {
  return svc.spec?.type !== 'ExternalName';
}

export function isHeadless(svc: Service): boolean {
  return svc.spec?.clusterIP === CLUSTER_IP_NONE;
}

/** The service holds (or should hold) an address from the range. */
export function wantsClusterIP(svc: Service): boolean {
  return needsClusterIP(svc) && !isHeadless(svc);
}

/** NodePort services, and LoadBalancer ones unless allocateLoadBalancerNodePorts is false. */
export function needsNodePorts(svc: Service): boolean {
  const t = svc.spec?.type;
  return t === 'NodePort' || (t === 'LoadBalancer' && svc.spec?.allocateLoadBalancerNodePorts !== false);
}

/** LoadBalancer services with externalTrafficPolicy Local get a health-check node port. */
export function needsHealthCheckNodePort(svc: Service): boolean {
  return svc.spec?.type === 'LoadBalancer' && svc.spec.externalTrafficPolicy === 'Local';
}

/** upstream ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with external IPs. */
export function externallyAccessible(svc: Service): boolean {
  const t = svc.spec?.type;
  return t === 'NodePort' || t === 'LoadBalancer' || (t === 'ClusterIP' && (svc.spec?.externalIPs?.length ?? 0) > 0);
}

/** The node ports the service's ports carry (non-zero, de-duplicated). */
export function nodePortsOf(svc: Service): number[] {
  return [...new Set((svc.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0))];
}
