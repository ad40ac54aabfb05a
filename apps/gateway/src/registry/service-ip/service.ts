import type { coreV1, Service } from '@orch/api';

/** A core/v1 Service as allocation and validation read it. */
export type { Service };
export type ServicePort = coreV1.ServicePort;

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
