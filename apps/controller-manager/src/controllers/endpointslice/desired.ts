import { mirrorUpstreamKeys, withTwin } from '@orch/api';
import { HEADLESS_LABEL, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, isServiceIPSet } from '../cluster-common/labels';
import { findPort, isPodReady, podIPOfFamily, serviceFamily, shouldPodBeInEndpoints, shouldSetHostname } from '../cluster-common/pods';
import type { DesiredGroup, SliceTemplate } from '../cluster-common/slices';
import type { SlicePort, Pod, Service, SliceEndpoint } from '../../framework/api';

/** `endpointslice.orch.io/managed-by` value of this controller's slices. */
export const ENDPOINTSLICE_CONTROLLER_NAME = 'endpointslice-controller.orch.io';

/** Labels a slice may not take from its service: the controller sets them (and their upstream twins). */
const RESERVED_LABELS = new Set([SERVICE_NAME_LABEL, MANAGED_BY_LABEL].flatMap(withTwin));

/**
 * upstream podToEndpoint + getSlicePorts, grouped: every pod that should be in endpoints
 * (terminating ones included) with an address of the service's family becomes one endpoint
 * with conditions ready (`publishNotReadyAddresses`, or Ready and not terminating), serving
 * (Ready) and terminating (being deleted), its node name and zone, and its hostname when
 * published; pods are grouped by the service ports that resolve on them.
 */
export function desiredGroups(svc: Service, pods: readonly Pod[], zoneOf: (nodeName: string) => string | undefined): DesiredGroup[] {
  const family = serviceFamily(svc);
  const groups = new Map<string, DesiredGroup>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ip = podIPOfFamily(pod, family);
    if (!ip) continue;
    const ports: SlicePort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      ports.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    const serving = isPodReady(pod);
    const terminating = !!pod.metadata.deletionTimestamp;
    const ep: SliceEndpoint = {
      addresses: [ip],
      conditions: { ready: svc.spec?.publishNotReadyAddresses === true || (serving && !terminating), serving, terminating },
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    };
    const nodeName = pod.spec?.nodeName;
    if (nodeName) {
      ep.nodeName = nodeName;
      const zone = zoneOf(nodeName);
      if (zone) ep.zone = zone;
    }
    if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec?.hostname;
    const key = JSON.stringify(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { addressType: family, ports, endpoints: [] }));
    g.endpoints.push(ep);
  }
  return [...groups.values()];
}

/**
 * upstream setEndpointSliceLabels + ownerRef: the service's labels (reserved keys dropped),
 * the headless label when no cluster IP is set, `orch.io/service-name` and `managed-by`,
 * with their `kubernetes.io` twins when `upstreamTwins` (compatibility option); owned by the
 * service; generateName `<service>-`.
 */
export function serviceSliceTemplate(svc: Service, managedBy: string, upstreamTwins: boolean): SliceTemplate {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(svc.metadata.labels ?? {})) if (!RESERVED_LABELS.has(k)) labels[k] = v;
  if (isServiceIPSet(svc)) for (const k of withTwin(HEADLESS_LABEL)) delete labels[k];
  else labels[HEADLESS_LABEL] = '';
  labels[SERVICE_NAME_LABEL] = svc.metadata.name ?? '';
  labels[MANAGED_BY_LABEL] = managedBy;
  mirrorUpstreamKeys(labels, upstreamTwins);
  return {
    namespace: svc.metadata.namespace ?? '',
    generateName: slicePrefix(svc.metadata.name ?? ''),
    labels,
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.metadata.name ?? '', uid: svc.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
  };
}

/** upstream getEndpointSlicePrefix: `<name>-` (the gateway cuts long generateName bases). */
export function slicePrefix(name: string): string {
  return `${name}-`;
}
