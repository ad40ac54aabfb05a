import { Injectable } from '@nestjs/common';
import { Quantity } from '@orch/apimachinery';
import { AdmissionPluginProvider, handling, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { Container, LimitRange, LimitRangeItem, PersistentVolumeClaim, Pod, ResourceList } from '../api';

export const LIMIT_RANGER = 'LimitRanger';
/** Annotation recording what the plugin defaulted (upstream's key). */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

function q(v: string | number): Quantity {
  return Quantity.parse(v);
}

function allContainers(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

/**
 * Sets each container's unset limits and requests from the `Container` items' default and
 * defaultRequest (upstream defaultContainerResourceRequirements + mergeContainerResources);
 * returns what was set, for the annotation.
 */
export function applyDefaults(pod: Pod, ranges: readonly LimitRange[]): string[] {
  const notes: string[] = [];
  for (const item of ranges.flatMap((r) => r.spec?.limits ?? []).filter((i) => i.type === 'Container')) {
    for (const c of allContainers(pod)) {
      const res = (c.resources ??= {});
      const setLimits: string[] = [];
      const setRequests: string[] = [];
      for (const [name, v] of Object.entries(item.default ?? {})) {
        if (res.limits?.[name] !== undefined) continue;
        (res.limits ??= {})[name] = v;
        setLimits.push(name);
      }
      for (const [name, v] of Object.entries(item.defaultRequest ?? {})) {
        if (res.requests?.[name] !== undefined) continue;
        (res.requests ??= {})[name] = v;
        setRequests.push(name);
      }
      if (setRequests.length) notes.push(`${setRequests.join(', ')} request for container ${c.name}`);
      if (setLimits.length) notes.push(`${setLimits.join(', ')} limit for container ${c.name}`);
    }
  }
  return notes;
}

/** upstream minConstraint / maxConstraint / limitRequestRatioConstraint over one item and one set of requests and limits. */
function checkItem(kind: string, item: LimitRangeItem, requests: ResourceList, limits: ResourceList, errs: string[]): void {
  for (const [name, v] of Object.entries(item.min ?? {})) {
    const min = q(v);
    if (requests[name] === undefined) errs.push(`minimum ${name} usage per ${kind} is ${min}.  No request is specified`);
    else if (q(requests[name]).cmp(min) < 0) errs.push(`minimum ${name} usage per ${kind} is ${min}, but request is ${q(requests[name])}`);
    if (limits[name] !== undefined && q(limits[name]).cmp(min) < 0) errs.push(`minimum ${name} usage per ${kind} is ${min}, but limit is ${q(limits[name])}`);
  }
  for (const [name, v] of Object.entries(item.max ?? {})) {
    const max = q(v);
    if (limits[name] === undefined) errs.push(`maximum ${name} usage per ${kind} is ${max}.  No limit is specified`);
    else if (q(limits[name]).cmp(max) > 0) errs.push(`maximum ${name} usage per ${kind} is ${max}, but limit is ${q(limits[name])}`);
    if (requests[name] !== undefined && q(requests[name]).cmp(max) > 0) errs.push(`maximum ${name} usage per ${kind} is ${max}, but request is ${q(requests[name])}`);
  }
  for (const [name, v] of Object.entries(item.maxLimitRequestRatio ?? {})) {
    const ratio = q(v);
    if (requests[name] === undefined || limits[name] === undefined) {
      errs.push(`${name} max limit to request ratio per ${kind} is ${ratio}, but no ${requests[name] === undefined ? 'request' : 'limit'} is specified or ${requests[name] === undefined ? 'request' : 'limit'} is 0`);
      continue;
    }
    const req = q(requests[name]).asApproximateFloat();
    const lim = q(limits[name]).asApproximateFloat();
    if (req === 0) errs.push(`${name} max limit to request ratio per ${kind} is ${ratio}, but no request is specified or request is 0`);
    else if (lim / req > ratio.asApproximateFloat()) errs.push(`${name} max limit to request ratio per ${kind} is ${ratio}, but provided ratio is ${(lim / req).toFixed(6)}`);
  }
}

function sum(lists: readonly (ResourceList | undefined)[]): ResourceList {
  const out: Record<string, Quantity> = {};
  for (const l of lists) for (const [k, v] of Object.entries(l ?? {})) out[k] = out[k] ? out[k].add(q(v)) : q(v);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.toString()]));
}

/** The min / max / ratio violations of a pod against the Container and Pod items. */
export function podViolations(pod: Pod, ranges: readonly LimitRange[]): string[] {
  const errs: string[] = [];
  const items = ranges.flatMap((r) => r.spec?.limits ?? []);
  for (const item of items.filter((i) => i.type === 'Container')) {
    for (const c of allContainers(pod)) checkItem('Container', item, c.resources?.requests ?? {}, c.resources?.limits ?? {}, errs);
  }
  for (const item of items.filter((i) => i.type === 'Pod')) {
    const cs = pod.spec?.containers ?? [];
    checkItem('Pod', item, sum(cs.map((c) => c.resources?.requests)), sum(cs.map((c) => c.resources?.limits)), errs);
  }
  return errs;
}

/** The min / max violations of a claim's storage request against the PersistentVolumeClaim items. */
export function claimViolations(claim: PersistentVolumeClaim, ranges: readonly LimitRange[]): string[] {
  const errs: string[] = [];
  const requests = claim.spec?.resources?.requests ?? {};
  for (const item of ranges.flatMap((r) => r.spec?.limits ?? []).filter((i) => i.type === 'PersistentVolumeClaim')) {
    for (const [name, v] of Object.entries(item.min ?? {})) {
      if (requests[name] === undefined) errs.push(`minimum ${name} usage per PersistentVolumeClaim is ${q(v)}.  No request is specified`);
      else if (q(requests[name]).cmp(q(v)) < 0) errs.push(`minimum ${name} usage per PersistentVolumeClaim is ${q(v)}, but request is ${q(requests[name])}`);
    }
    for (const [name, v] of Object.entries(item.max ?? {})) {
      if (requests[name] !== undefined && q(requests[name]).cmp(q(v)) > 0) errs.push(`maximum ${name} usage per PersistentVolumeClaim is ${q(v)}, but request is ${q(requests[name])}`);
    }
  }
  return errs;
}

/** upstream's aggregate error text: one message, or `[a, b]`. */
export function aggregate(errs: readonly string[]): string {
  return errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
}

/**
 * LimitRanger (upstream plugin of the same name): the LimitRange objects of a namespace default
 * the requests and limits of containers in pods being created, then bound them (min, max,
 * limit-to-request ratio, per container and per pod); claims' storage requests are bounded
 * the same way.
 */
@AdmissionPluginProvider()
@Injectable()
export class LimitRanger extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = LIMIT_RANGER;

  readonly handles = handling({ CREATE: ['pods', 'persistentvolumeclaims'], UPDATE: ['pods', 'persistentvolumeclaims'] });

  mutate(a: AdmissionAttributes): void {
    if (a.operation !== 'CREATE' || a.resource.resource !== 'pods' || !a.object) return;
    const notes = applyDefaults(a.object as Pod, this.ranges(a.namespace));
    if (notes.length) a.object.metadata.annotations = { ...(a.object.metadata.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
  }

  validate(a: AdmissionAttributes): void {
    if (!a.object) return;
    const ranges = this.ranges(a.namespace);
    if (ranges.length === 0) return;
    // Updates of a running pod keep its resources; only creates are bounded (as upstream).
    if (a.resource.resource === 'pods' && a.operation !== 'CREATE') return;
    let errs: string[];
    try {
      errs = a.resource.resource === 'pods' ? podViolations(a.object as Pod, ranges) : claimViolations(a.object as PersistentVolumeClaim, ranges);
    } catch (e) {
      errs = [(e as Error).message];
    }
    if (errs.length) throw admissionDenied(a, aggregate(errs));
  }

  private ranges(namespace: string): LimitRange[] {
    return this.state.cache<LimitRange>('', 'limitranges').list(namespace);
  }
}
