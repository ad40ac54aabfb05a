import type { OwnerReference } from '@orch/apimachinery';
import { jsonEqual } from './equal';
import type { SlicePort, EndpointSlice, SliceEndpoint } from '../../framework/api';

/** Endpoints per slice the endpointslice controller writes (upstream --max-endpoints-per-slice). */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export type AddressType = EndpointSlice['addressType'];

/** Endpoints that share one address type and one port list, hence may share slices. */
export interface DesiredGroup {
  addressType: AddressType;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

/** What every slice of one owner carries. */
export interface SliceTemplate {
  namespace: string;
  /** Slices are created with generateName `<prefix>`. */
  generateName: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences: OwnerReference[];
}

/** Writes that bring an owner's slices to the desired state. */
export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
}

const groupKey = (addressType: string, ports: readonly SlicePort[] | null | undefined) =>
  `${addressType}#${JSON.stringify(
    [...(ports ?? [])].map((p) => [p.name ?? '', p.port, p.protocol ?? 'TCP', p.appProtocol ?? '']).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  )}`;

/** An endpoint's identity across syncs: its addresses and target (conditions may change). */
const endpointKey = (ep: SliceEndpoint) => `${[...ep.addresses].sort().join(',')}|${ep.targetRef?.uid ?? ep.targetRef?.name ?? ''}`;

const byKey = (a: SliceEndpoint, b: SliceEndpoint) => (endpointKey(a) < endpointKey(b) ? -1 : endpointKey(a) > endpointKey(b) ? 1 : 0);

/** A new slice of `template` for one group, holding `endpoints`. */
function newSlice(template: SliceTemplate, addressType: AddressType, ports: SlicePort[], endpoints: SliceEndpoint[]): EndpointSlice {
  return {
    apiVersion: 'discovery.orch.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: template.generateName,
      namespace: template.namespace,
      labels: { ...template.labels },
      ...(template.annotations && Object.keys(template.annotations).length ? { annotations: { ...template.annotations } } : {}),
      ownerReferences: template.ownerReferences.map((o) => ({ ...o })),
    },
    addressType,
    endpoints,
    ...(ports.length ? { ports } : {}),
  };
}

function metadataMatches(slice: EndpointSlice, template: SliceTemplate): boolean {
  return (
    jsonEqual(slice.metadata.labels ?? {}, template.labels) &&
    jsonEqual(slice.metadata.annotations ?? {}, template.annotations ?? {}) &&
    jsonEqual(slice.metadata.ownerReferences ?? [], template.ownerReferences)
  );
}

/**
 * The creates, updates and deletes that turn an owner's `existing` slices into `desired`
 * (upstream reconciler, simplified). Per address type + port list: endpoints stay in the
 * slice they are in (updated in place when their conditions changed), vanished ones are
 * removed, a slice left empty is deleted; new endpoints fill slices already being updated,
 * then slices with room, then new slices of at most `maxPerSlice`. Slices of groups no
 * longer desired are deleted; labels, annotations and owners follow the template; a slice to
 * delete is reused for one to create when possible. When
 * nothing at all is desired and `placeholder` is set, one empty slice without ports is kept
 * (upstream endpointslice controller; the mirroring controller keeps none).
 * Pure: `existing` is not modified.
 */
export function reconcileSlices(
  existing: readonly EndpointSlice[],
  desired: readonly DesiredGroup[],
  template: SliceTemplate,
  opts: { maxPerSlice?: number; placeholder?: boolean } = {},
): SlicePlan {
  const maxPerSlice = opts.maxPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const groups = desired.filter((g) => g.endpoints.length > 0);
  if (groups.length === 0) return opts.placeholder === false ? { ...plan, delete: [...existing] } : placeholderPlan(existing, template);

  const existingByGroup = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const k = groupKey(s.addressType, s.ports);
    existingByGroup.set(k, [...(existingByGroup.get(k) ?? []), s]);
  }
  for (const g of groups) {
    const k = groupKey(g.addressType, g.ports);
    const slices = existingByGroup.get(k) ?? [];
    existingByGroup.delete(k);
    const wanted = new Map(g.endpoints.map((ep) => [endpointKey(ep), ep]));
    const updated: EndpointSlice[] = [];
    const unchanged: EndpointSlice[] = [];
    for (const slice of slices) {
      const kept: SliceEndpoint[] = [];
      for (const ep of slice.endpoints ?? []) {
        const want = wanted.get(endpointKey(ep));
        if (!want) continue;
        wanted.delete(endpointKey(ep));
        kept.push(want);
      }
      if (kept.length === 0) {
        plan.delete.push(slice);
      } else if (!jsonEqual(kept, slice.endpoints ?? []) || !metadataMatches(slice, template)) {
        const next = structuredClone(slice) as EndpointSlice;
        next.endpoints = kept;
        next.metadata.labels = { ...template.labels };
        if (template.annotations && Object.keys(template.annotations).length) next.metadata.annotations = { ...template.annotations };
        else delete next.metadata.annotations;
        next.metadata.ownerReferences = template.ownerReferences.map((o) => ({ ...o }));
        updated.push(next);
      } else {
        unchanged.push(slice);
      }
    }
    const rest = [...wanted.values()].sort(byKey);
    const fill = (slice: EndpointSlice) => {
      const eps = slice.endpoints ?? [];
      while (rest.length && eps.length < maxPerSlice) eps.push(rest.shift() as SliceEndpoint);
      slice.endpoints = eps;
    };
    updated.forEach(fill);
    for (const slice of unchanged) {
      if (!rest.length) break;
      if ((slice.endpoints ?? []).length >= maxPerSlice) continue;
      const next = structuredClone(slice) as EndpointSlice;
      fill(next);
      updated.push(next);
    }
    while (rest.length) plan.create.push(newSlice(template, g.addressType, g.ports, rest.splice(0, maxPerSlice)));
    plan.update.push(...updated);
  }
  for (const stale of existingByGroup.values()) plan.delete.push(...stale);
  return reuseDeletedSlices(plan);
}

/**
 * upstream's churn reduction: a slice about to be deleted takes the content of a slice about
 * to be created (same address type) through an update instead.
 */
function reuseDeletedSlices(plan: SlicePlan): SlicePlan {
  const create: EndpointSlice[] = [];
  const deletes = [...plan.delete];
  for (const fresh of plan.create) {
    const i = deletes.findIndex((d) => d.addressType === fresh.addressType);
    if (i < 0) {
      create.push(fresh);
      continue;
    }
    const [reused] = deletes.splice(i, 1);
    const next = structuredClone(reused) as EndpointSlice;
    next.endpoints = fresh.endpoints;
    if (fresh.ports) next.ports = fresh.ports;
    else delete next.ports;
    next.metadata.labels = fresh.metadata.labels;
    next.metadata.ownerReferences = fresh.metadata.ownerReferences;
    if (fresh.metadata.annotations) next.metadata.annotations = fresh.metadata.annotations;
    else delete next.metadata.annotations;
    plan.update.push(next);
  }
  return { create, update: plan.update, delete: deletes };
}

/** Nothing desired: keep (or create) one empty slice without ports, delete the rest. */
function placeholderPlan(existing: readonly EndpointSlice[], template: SliceTemplate): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const isPlaceholder = (s: EndpointSlice) => (s.endpoints ?? []).length === 0 && (s.ports ?? []).length === 0 && s.addressType === 'IPv4';
  const keep = existing.find(isPlaceholder);
  for (const s of existing) if (s !== keep) plan.delete.push(s);
  if (!keep) plan.create.push(newSlice(template, 'IPv4', [], []));
  else if (!metadataMatches(keep, template)) {
    const next = structuredClone(keep) as EndpointSlice;
    next.metadata.labels = { ...template.labels };
    next.metadata.ownerReferences = template.ownerReferences.map((o) => ({ ...o }));
    plan.update.push(next);
  }
  return plan;
}
