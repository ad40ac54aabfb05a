// Resource quota evaluation (upstream pkg/quota/v1/evaluator/core): what an object uses of
// a ResourceQuota's resources, and which quotas apply to it. Shared by the ResourceQuota
// admission plugin (gateway) and the quota controller (controller-manager), so that both
// count the same way.

import { Quantity, type KubeObject } from '@orch/apimachinery';
import { upstreamGroup } from './catalog';
import type * as coreV1 from './types/generated/core-v1';
import type { ResourceQuota } from './served';

export type ResourceList = Record<string, string | number>;

/** The objects quotas count, as admitted or stored: any part of their spec may be absent. */
type Pod = KubeObject & { spec?: Partial<coreV1.PodSpec>; status?: coreV1.PodStatus };
type Service = KubeObject & { spec?: coreV1.ServiceSpec };
type Claim = KubeObject & { spec?: coreV1.PersistentVolumeClaimSpec };

/** Legacy object-count names (upstream: `pods`, `services`, ... besides `count/<resource>`). */
const LEGACY_COUNTS: Readonly<Record<string, string>> = {
  pods: 'pods',
  services: 'services',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
  secrets: 'secrets',
  configmaps: 'configmaps',
  persistentvolumeclaims: 'persistentvolumeclaims',
};

/** Compute resources a pod's containers declare (requests.<name> and limits.<name>). */
const POD_COMPUTE = ['cpu', 'memory', 'ephemeral-storage'];

/** The `count/<resource>[.<group>]` name of a resource. */
export function countResourceName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

function q(v: string | number | undefined): Quantity {
  return Quantity.parse(v ?? 0);
}

function add(list: Map<string, Quantity>, name: string, v: Quantity): void {
  const cur = list.get(name);
  list.set(name, cur ? cur.add(v) : v);
}

/** A pod in a terminal phase no longer uses quota (upstream QuotaV1Pod). */
export function podIsTerminal(pod: KubeObject): boolean {
  const phase = (pod as Pod).status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Requests or limits of a pod: max(sum of app containers, any init container) plus overhead (upstream PodRequests). */
function podCompute(pod: Pod, which: 'requests' | 'limits'): Map<string, Quantity> {
  const total = new Map<string, Quantity>();
  for (const c of pod.spec?.containers ?? []) for (const [k, v] of Object.entries(c.resources?.[which] ?? {})) add(total, k, q(v));
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [k, v] of Object.entries(c.resources?.[which] ?? {})) {
      const cur = total.get(k);
      if (!cur || q(v).cmp(cur) > 0) total.set(k, q(v));
    }
  }
  for (const [k, v] of Object.entries(pod.spec?.overhead ?? {})) if (total.has(k) || which === 'requests') add(total, k, q(v));
  return total;
}

/** What one object uses: every quota resource name it counts toward, with the amount. */
export function quotaUsage(group: string, resource: string, obj: KubeObject): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  const one = Quantity.fromValue(1);
  if (resource === 'pods' && group === '' && podIsTerminal(obj)) return out;
  out.set(countResourceName(group, resource), one);
  const twin = upstreamGroup(group);
  if (twin) out.set(countResourceName(twin, resource), one);
  if (group === '' && LEGACY_COUNTS[resource]) out.set(LEGACY_COUNTS[resource], one);
  if (group === '' && resource === 'pods') {
    const pod = obj as Pod;
    for (const [k, v] of podCompute(pod, 'requests')) {
      out.set(`requests.${k}`, v);
      if (POD_COMPUTE.includes(k)) out.set(k, v);
    }
    for (const [k, v] of podCompute(pod, 'limits')) out.set(`limits.${k}`, v);
  }
  if (group === '' && resource === 'services') {
    const svc = obj as Service;
    const type = svc.spec?.type ?? 'ClusterIP';
    if (type === 'LoadBalancer') out.set('services.loadbalancers', one);
    if (type === 'NodePort' || type === 'LoadBalancer') out.set('services.nodeports', Quantity.fromValue((svc.spec?.ports ?? []).length));
  }
  if (group === '' && resource === 'persistentvolumeclaims') {
    const claim = obj as Claim;
    const storage = claim.spec?.resources?.requests?.storage;
    if (storage !== undefined) out.set('requests.storage', q(storage));
    const cls = claim.spec?.storageClassName;
    if (cls) {
      out.set(`${cls}.storageclass.storage.k8s.io/persistentvolumeclaims`, one);
      if (storage !== undefined) out.set(`${cls}.storageclass.storage.k8s.io/requests.storage`, q(storage));
    }
  }
  return out;
}

/** Whether a pod has no requests and limits at all (the BestEffort scope). */
function isBestEffort(pod: Pod): boolean {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].every((c) => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0);
}

function matchesScope(scope: string, pod: Pod, operator = 'Exists', values: readonly string[] = []): boolean {
  switch (scope) {
    case 'Terminating':
      return pod.spec?.activeDeadlineSeconds !== undefined && pod.spec.activeDeadlineSeconds !== null;
    case 'NotTerminating':
      return pod.spec?.activeDeadlineSeconds === undefined || pod.spec.activeDeadlineSeconds === null;
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const name = pod.spec?.priorityClassName ?? '';
      if (operator === 'Exists') return name !== '';
      if (operator === 'DoesNotExist') return name === '';
      if (operator === 'In') return values.includes(name);
      if (operator === 'NotIn') return !values.includes(name);
      return false;
    }
    default:
      return false;
  }
}

/**
 * Whether a quota applies to an object: a quota without scopes applies to everything in its
 * namespace; scopes (spec.scopes, spec.scopeSelector) select pods only.
 */
export function quotaMatches(quota: ResourceQuota, group: string, resource: string, obj: KubeObject): boolean {
  const scopes = quota.spec?.scopes ?? [];
  const exprs = quota.spec?.scopeSelector?.matchExpressions ?? [];
  if (scopes.length === 0 && exprs.length === 0) return true;
  if (group !== '' || resource !== 'pods') return false;
  const pod = obj as Pod;
  return scopes.every((s) => matchesScope(s, pod)) && exprs.every((e) => matchesScope(e.scopeName, pod, e.operator, e.values));
}

/** The compute resources a quota constrains that every container must then declare (upstream: "must specify"). */
export function requiredComputeResources(quota: ResourceQuota, pod: KubeObject): string[] {
  const hard = Object.keys(quota.status?.hard ?? quota.spec?.hard ?? {});
  const missing: string[] = [];
  for (const name of hard) {
    const m = /^(requests|limits)\.(.+)$/.exec(name) ?? (POD_COMPUTE.includes(name) ? ['', 'requests', name] : null);
    if (!m || !POD_COMPUTE.includes(m[2])) continue;
    const which = m[1] as 'requests' | 'limits';
    const lacking = ((pod as Pod).spec?.containers ?? []).filter((c) => c.resources?.[which]?.[m[2]] === undefined).map((c) => c.name ?? '');
    if (lacking.length) missing.push(`${name} for: ${lacking.join(',')}`);
  }
  return missing;
}

/** Sums `delta` into `used` (only the names in `hard`). */
export function addUsage(used: ResourceList | undefined, delta: Map<string, Quantity>, hard: ResourceList): ResourceList {
  const out: ResourceList = { ...(used ?? {}) };
  for (const [name, v] of delta) {
    if (hard[name] === undefined) continue;
    out[name] = q(out[name]).add(v).toString();
  }
  return out;
}
