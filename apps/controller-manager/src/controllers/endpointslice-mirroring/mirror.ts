import { mirrorUpstreamKeys } from '@orch/api';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../cluster-common/labels';
import type { AddressType, DesiredGroup, SliceTemplate } from '../cluster-common/slices';
import type { EndpointAddress, SlicePort, Endpoints, SliceEndpoint } from '../../framework/api';

/** `endpointslice.orch.io/managed-by` value of mirrored slices. */
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.orch.io';
/** Addresses mirrored per subset (upstream --mirroring-max-endpoints-per-subset); also the slice size. */
export const MAX_MIRRORED_PER_SUBSET = 1000;

/** Annotations never copied to mirrored slices. */
const SKIPPED_ANNOTATIONS = new Set(['endpoints.orch.io/last-change-trigger-time', 'kubectl.orch.io/last-applied-configuration']);

const familyOf = (ip: string): AddressType => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** upstream addressToEndpoint: one address, its readiness, target, node and hostname. */
function toEndpoint(a: EndpointAddress, ready: boolean): SliceEndpoint {
  const ep: SliceEndpoint = { addresses: [a.ip], conditions: { ready } };
  if (a.targetRef) ep.targetRef = { ...a.targetRef };
  if (a.nodeName) ep.nodeName = a.nodeName;
  if (a.hostname) ep.hostname = a.hostname;
  return ep;
}

/**
 * The slices' content for custom Endpoints (upstream mirroring reconciler): per subset, its
 * ready then not-ready addresses (at most {@link MAX_MIRRORED_PER_SUBSET}, the rest dropped
 * and counted), grouped by address family and the subset's ports.
 */
export function mirroredGroups(endpoints: Endpoints): { groups: DesiredGroup[]; dropped: number } {
  const groups = new Map<string, DesiredGroup>();
  let dropped = 0;
  for (const subset of endpoints.subsets ?? []) {
    const ports: SlicePort[] = (subset.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));
    const all = [...(subset.addresses ?? []).map((a) => toEndpoint(a, true)), ...(subset.notReadyAddresses ?? []).map((a) => toEndpoint(a, false))];
    dropped += Math.max(0, all.length - MAX_MIRRORED_PER_SUBSET);
    for (const ep of all.slice(0, MAX_MIRRORED_PER_SUBSET)) {
      const addressType = familyOf(ep.addresses[0]);
      const key = `${addressType}#${JSON.stringify(ports)}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { addressType, ports, endpoints: [] }));
      g.endpoints.push(ep);
    }
  }
  return { groups: [...groups.values()], dropped };
}

/**
 * upstream newEndpointSlice of the mirroring controller: the Endpoints' labels and
 * annotations (minus trigger-time and last-applied), `orch.io/service-name` and
 * `managed-by: endpointslicemirroring-controller.orch.io` (with their `kubernetes.io` twins
 * when `upstreamTwins`), owned by the Endpoints.
 */
export function mirroredSliceTemplate(endpoints: Endpoints, upstreamTwins: boolean): SliceTemplate {
  const name = endpoints.metadata.name ?? '';
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(endpoints.metadata.annotations ?? {})) if (!SKIPPED_ANNOTATIONS.has(k)) annotations[k] = v;
  const labels = { ...(endpoints.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME };
  mirrorUpstreamKeys(labels, upstreamTwins);
  return {
    namespace: endpoints.metadata.namespace ?? '',
    generateName: `${name}-`,
    labels,
    annotations,
    ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name, uid: endpoints.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
  };
}
