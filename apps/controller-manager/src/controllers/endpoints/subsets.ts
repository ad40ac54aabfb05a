import { jsonEqual } from '../cluster-common/equal';
import { HEADLESS_LABEL, OVER_CAPACITY_ANNOTATION, isServiceIPSet } from '../cluster-common/labels';
import { findPort, isPodReady, podIPOfFamily, serviceFamily, shouldPodBeInEndpoints, shouldSetHostname } from '../cluster-common/pods';
import type { EndpointAddress, EndpointPort, EndpointSubset, Endpoints, Pod, Service } from '../../framework/api';

/** Most addresses an Endpoints object carries (upstream maxCapacity). */
export const MAX_ENDPOINTS_CAPACITY = 1000;

/**
 * upstream Controller.syncService's subset computation: one address per pod that should be
 * in endpoints (has an address of the service's family; not terminal; not terminating unless
 * publishNotReadyAddresses), ready or not-ready by its Ready condition (publishNotReadyAddresses
 * makes every address ready), one subset per resolved service port (a pod lacking a named
 * port is left out of that port); a headless service without ports gets portless subsets.
 * The result is repacked.
 */
export function computeSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const tolerateUnready = svc.spec?.publishNotReadyAddresses === true;
  const family = serviceFamily(svc);
  const ports = svc.spec?.ports ?? [];
  const subsets: EndpointSubset[] = [];
  const add = (pod: Pod, addr: EndpointAddress, port: EndpointPort | undefined) => {
    const portList = port ? [port] : [];
    if (tolerateUnready || isPodReady(pod)) subsets.push({ addresses: [addr], ports: portList });
    else subsets.push({ notReadyAddresses: [addr], ports: portList });
  };
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, tolerateUnready)) continue;
    const ip = podIPOfFamily(pod, family);
    if (!ip) continue;
    const addr: EndpointAddress = {
      ip,
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    };
    if (shouldSetHostname(pod, svc)) addr.hostname = pod.spec?.hostname;
    if (ports.length === 0) {
      if (svc.spec?.clusterIP === 'None') add(pod, addr, undefined);
      continue;
    }
    for (const sp of ports) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      add(pod, addr, { ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
  }
  return repackSubsets(subsets);
}

const addrKey = (a: EndpointAddress) => `${a.ip}|${a.targetRef?.uid ?? ''}`;
const portKey = (p: EndpointPort) => `${p.name ?? ''}|${p.port}|${p.protocol ?? ''}|${p.appProtocol ?? ''}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * upstream endpoints.RepackSubsets: the canonical N-to-M form. Addresses offering the same
 * set of ports share one subset; an address both ready and not ready for a port counts as
 * ready. Sorted (addresses by IP then uid, ports by name/number, subsets by their ports) so
 * equal inputs give identical output.
 */
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  const addrs = new Map<string, EndpointAddress>();
  const ports = new Map<string, EndpointPort | undefined>();
  /** port key → address key → ready */
  const byPort = new Map<string, Map<string, boolean>>();
  for (const ss of subsets) {
    const entries: [string, EndpointPort | undefined][] = (ss.ports ?? []).length ? (ss.ports ?? []).map((p) => [portKey(p), p]) : [['', undefined]];
    for (const [pk, port] of entries) {
      ports.set(pk, port);
      let set = byPort.get(pk);
      if (!set) byPort.set(pk, (set = new Map()));
      for (const a of ss.addresses ?? []) {
        addrs.set(addrKey(a), a);
        set.set(addrKey(a), true);
      }
      for (const a of ss.notReadyAddresses ?? []) {
        const k = addrKey(a);
        if (!addrs.has(k)) addrs.set(k, a);
        if (!set.has(k)) set.set(k, false);
      }
    }
  }
  // Group ports by the exact address set (with readiness) that offers them.
  const groups = new Map<string, { addrs: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const [pk, set] of byPort) {
    const signature = [...set.entries()]
      .map(([k, ready]) => `${k}=${ready}`)
      .sort()
      .join(',');
    let g = groups.get(signature);
    if (!g) groups.set(signature, (g = { addrs: set, ports: [] }));
    const port = ports.get(pk);
    if (port) g.ports.push(port);
  }
  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, isReady] of g.addrs) (isReady ? ready : notReady).push(addrs.get(k) as EndpointAddress);
    const byAddr = (a: EndpointAddress, b: EndpointAddress) => compare(addrKey(a), addrKey(b));
    const subset: EndpointSubset = {};
    if (ready.length) subset.addresses = ready.sort(byAddr);
    if (notReady.length) subset.notReadyAddresses = notReady.sort(byAddr);
    if (g.ports.length) subset.ports = g.ports.sort((a, b) => compare(portKey(a), portKey(b)));
    if (subset.addresses || subset.notReadyAddresses) out.push(subset);
  }
  const subsetKey = (s: EndpointSubset) => `${(s.ports ?? []).map(portKey).join(',')}#${addrKey((s.addresses ?? s.notReadyAddresses ?? [])[0])}`;
  return out.sort((a, b) => compare(subsetKey(a), subsetKey(b)));
}

/**
 * upstream truncateEndpoints: keeps at most {@link MAX_ENDPOINTS_CAPACITY} addresses, ready ones
 * first, spread over the subsets in proportion to their size (rounded up, the last subsets
 * getting what is left). Returns the kept subsets and whether anything was cut.
 */
export function truncateSubsets(subsets: readonly EndpointSubset[], max = MAX_ENDPOINTS_CAPACITY): { subsets: EndpointSubset[]; truncated: boolean } {
  let totalReady = 0;
  let totalNotReady = 0;
  for (const s of subsets) {
    totalReady += (s.addresses ?? []).length;
    totalNotReady += (s.notReadyAddresses ?? []).length;
  }
  if (totalReady + totalNotReady <= max) return { subsets: subsets.map((s) => ({ ...s })), truncated: false };
  const truncateReady = totalReady > max;
  const budget = truncateReady ? max : max - totalReady;
  const numTotal = truncateReady ? totalReady : totalNotReady;
  let canBeAdded = budget;
  const out = subsets.map((s) => {
    const pool = truncateReady ? (s.addresses ?? []) : (s.notReadyAddresses ?? []);
    const toBeAdded = Math.min(Math.ceil((pool.length / numTotal) * budget), canBeAdded);
    const kept = pool.slice(0, toBeAdded);
    canBeAdded -= kept.length;
    const next: EndpointSubset = { ...s };
    if (truncateReady) {
      next.addresses = kept;
      delete next.notReadyAddresses;
    } else {
      next.notReadyAddresses = kept;
    }
    if (next.addresses?.length === 0) delete next.addresses;
    if (next.notReadyAddresses?.length === 0) delete next.notReadyAddresses;
    return next;
  });
  return { subsets: out.filter((s) => s.addresses || s.notReadyAddresses), truncated: true };
}

/**
 * The Endpoints object a service should have, built on `current` when it exists: the
 * (truncated) subsets, the service's labels plus the headless label when no cluster IP is
 * set, and `endpoints.orch.io/over-capacity: truncated` exactly when addresses were cut.
 * Returns undefined when `current` already matches (upstream's no-op check).
 */
export function desiredEndpoints(svc: Service, pods: readonly Pod[], current: Endpoints | undefined): Endpoints | undefined {
  const { subsets, truncated } = truncateSubsets(computeSubsets(svc, pods));
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
  if (isServiceIPSet(svc)) delete labels[HEADLESS_LABEL];
  else labels[HEADLESS_LABEL] = '';
  const annotations: Record<string, string> = { ...(current?.metadata.annotations ?? {}) };
  if (truncated) annotations[OVER_CAPACITY_ANNOTATION] = 'truncated';
  else delete annotations[OVER_CAPACITY_ANNOTATION];
  if (
    current &&
    jsonEqual(current.subsets ?? [], subsets) &&
    jsonEqual(current.metadata.labels ?? {}, labels) &&
    jsonEqual(current.metadata.annotations ?? {}, annotations)
  ) {
    return undefined;
  }
  const base: Endpoints = current ? (structuredClone(current) as Endpoints) : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: svc.metadata.name, namespace: svc.metadata.namespace } };
  base.metadata.labels = labels;
  base.metadata.annotations = annotations;
  if (Object.keys(annotations).length === 0) delete base.metadata.annotations;
  base.subsets = subsets;
  return base;
}
