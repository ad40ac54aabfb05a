import { frontendKey, type Endpoint, type EndpointSlice, type FrontendSpec, type Route, type Service } from './model';

/** Default ClientIP affinity timeout (SPEC Limits: 10800 s). */
export const DEFAULT_AFFINITY_SECONDS = 10800;

export interface PolicyInput {
  /** internalTrafficPolicy Local (cluster IP traffic). */
  internalLocal: boolean;
  /** externalTrafficPolicy Local (node port traffic). */
  externalLocal: boolean;
}

/** The endpoints each policy may use (upstream CategorizeEndpoints, without topology hints). */
export interface Categorized {
  /** Ready endpoints anywhere; if none, serving terminating ones (ProxyTerminatingEndpoints). */
  cluster: Endpoint[];
  /** Ready local endpoints; if none, serving terminating local ones. */
  local: Endpoint[];
  /** Some endpoint is usable somewhere in the cluster. */
  hasAny: boolean;
}

export function categorizeEndpoints(endpoints: readonly Endpoint[]): Categorized {
  let cluster = endpoints.filter((e) => e.ready);
  if (cluster.length === 0) cluster = endpoints.filter((e) => e.serving && e.terminating);
  let local = endpoints.filter((e) => e.local && e.ready);
  if (local.length === 0) local = endpoints.filter((e) => e.local && e.serving && e.terminating);
  return { cluster, local, hasAny: cluster.length > 0 };
}

/**
 * The route for one kind of traffic (upstream iptables proxier): Cluster policy → every
 * usable endpoint, none → undefined (no listener: connections are refused); Local policy →
 * local endpoints, none while others exist → drop, none at all → undefined (refused).
 */
export function routeFor(c: Categorized, local: boolean): Route | undefined {
  if (!local) return c.cluster.length ? { action: 'forward', endpoints: c.cluster } : undefined;
  if (c.local.length) return { action: 'forward', endpoints: c.local };
  return c.hasAny ? { action: 'drop' } : undefined;
}

/**
 * The endpoints of one service port from the service's slices: IPv4 slices only, the slice
 * port with the service port's name and protocol, one entry per ip:port (the first slice
 * wins). Conditions as upstream reads them: ready unset = ready; serving unset = ready;
 * terminating unset = false.
 */
export function endpointsFor(slices: readonly EndpointSlice[], portName: string, protocol: string, nodeName: string): Endpoint[] {
  const out = new Map<string, Endpoint>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    const sp = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol);
    if (!sp?.port) continue;
    for (const ep of slice.endpoints ?? []) {
      const ip = ep.addresses?.[0];
      if (!ip) continue;
      const key = `${ip}:${sp.port}`;
      if (out.has(key)) continue;
      const ready = ep.conditions?.ready ?? true;
      out.set(key, {
        ip,
        port: sp.port,
        key,
        ready,
        serving: ep.conditions?.serving ?? ready,
        terminating: ep.conditions?.terminating ?? false,
        local: !!nodeName && ep.nodeName === nodeName,
      });
    }
  }
  return [...out.values()];
}

export interface PlanOptions {
  nodeName: string;
  /** Addresses to serve node ports on (`0.0.0.0` = all). */
  nodePortAddresses: readonly string[];
}

/**
 * Everything the proxy serves for one service: per TCP/UDP port, a frontend on clusterIP:port
 * (internal traffic) and one per node port address (external traffic), each with the route
 * its traffic policy allows. Services without a cluster IP (headless, ExternalName) and
 * ports whose traffic has no route get no frontend, so connections to them are refused.
 */
export function planService(svc: Service, slices: readonly EndpointSlice[], opts: PlanOptions): FrontendSpec[] {
  const spec = svc.spec ?? {};
  const ns = svc.metadata.namespace ?? '';
  const clusterIP = spec.clusterIP && spec.clusterIP !== 'None' ? spec.clusterIP : undefined;
  if (!clusterIP || spec.type === 'ExternalName') return [];
  const affinityTimeoutMs =
    spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) * 1000 : undefined;
  const out: FrontendSpec[] = [];
  for (const port of spec.ports ?? []) {
    const protocol = port.protocol ?? 'TCP';
    if ((protocol !== 'TCP' && protocol !== 'UDP') || !port.port) continue;
    const servicePort = `${ns}/${svc.metadata.name}:${port.name ?? ''}`;
    const categorized = categorizeEndpoints(endpointsFor(slices, port.name ?? '', protocol, opts.nodeName));
    const internal = routeFor(categorized, spec.internalTrafficPolicy === 'Local');
    if (internal) out.push({ key: frontendKey(protocol, clusterIP, port.port), protocol, ip: clusterIP, port: port.port, servicePort, route: internal, affinityTimeoutMs });
    if (!port.nodePort) continue;
    const external = routeFor(categorized, spec.externalTrafficPolicy === 'Local');
    if (!external) continue;
    for (const ip of opts.nodePortAddresses) {
      out.push({ key: frontendKey(protocol, ip, port.nodePort), protocol, ip, port: port.nodePort, servicePort, route: external, affinityTimeoutMs });
    }
  }
  return out;
}
