import type { Pod, Service, ServicePort } from '../../framework/api';

/** The pod's Ready condition is True (upstream podutil.IsPodReady). */
export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Succeeded or Failed: the pod will never run again (upstream podutil.IsPodTerminal). */
export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The pod's addresses, `status.podIPs` first, else `status.podIP`. */
export function podIPs(pod: Pod): string[] {
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip).filter(Boolean);
  if (ips.length) return ips;
  return pod.status?.podIP ? [pod.status.podIP] : [];
}

export type AddressFamily = 'IPv4' | 'IPv6';

/** The pod's first address of `family`, if any. */
export function podIPOfFamily(pod: Pod, family: AddressFamily): string | undefined {
  return podIPs(pod).find((ip) => ip.includes(':') === (family === 'IPv6'));
}

/** The service's primary address family (`spec.ipFamilies[0]`, IPv4 when unset). */
export function serviceFamily(svc: Service): AddressFamily {
  const families = svc.spec?.['ipFamilies'];
  return Array.isArray(families) && families[0] === 'IPv6' ? 'IPv6' : 'IPv4';
}

/**
 * upstream endpointsliceutil.ShouldPodBeInEndpoints: not terminal, has an address, and (unless
 * `includeTerminating`) not being deleted.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (podIPs(pod).length === 0) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  return true;
}

/** The pod's hostname is published for the service (its subdomain names the service). */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return !!pod.spec?.hostname && pod.spec.subdomain === svc.metadata.name && pod.metadata.namespace === svc.metadata.namespace;
}

/**
 * upstream podutil.FindPort: the container port a service port targets. A named targetPort
 * is looked up among the containers' ports with the same protocol; a number is used as is;
 * an unset one means the service port. Undefined when the pod has no such named port.
 */
export function findPort(pod: Pod, svcPort: ServicePort): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = svcPort.protocol ?? 'TCP';
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
  }
  return undefined;
}

