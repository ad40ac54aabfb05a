import { Injectable } from '@nestjs/common';
import { addUsage, quotaMatches, quotaUsage, requiredComputeResources, type ResourceList, type ResourceQuota as Quota } from '@orch/api';
import { Quantity, StatusError, type KubeObject } from '@orch/apimachinery';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResource } from '../../pipeline/admit';
import { ADMISSION_CONTEXT, StateAdmissionPlugin } from '../admission-state';

export const RESOURCE_QUOTA = 'ResourceQuota';

/** Lost races on a quota's status (against other replicas) before the request fails with 409. */
const MAX_ATTEMPTS = 30;

/** Resources never charged to a quota (writes to quotas themselves, events, reviews). */
const NOT_COUNTED = new Set(['resourcequotas', 'events', 'tokenreviews', 'localsubjectaccessreviews', 'selfsubjectaccessreviews', 'subjectaccessreviews', 'selfsubjectrulesreviews']);

function q(v: string | number | undefined): Quantity {
  return Quantity.parse(v ?? 0);
}

/**
 * What admitting an object charges: its usage, less what the object it replaces used (an
 * update charges only growth). Only names with a positive change are returned.
 */
export function usageDelta(resource: AdmissionResource, object: KubeObject, old: KubeObject | undefined): Map<string, Quantity> {
  const now = quotaUsage(resource.group, resource.resource, object);
  if (!old) return now;
  const before = quotaUsage(resource.group, resource.resource, old);
  const out = new Map<string, Quantity>();
  for (const [k, v] of now) {
    const d = v.sub(before.get(k) ?? Quantity.fromValue(0));
    if (d.sign() > 0) out.set(k, d);
  }
  return out;
}

/**
 * The refusal of charging `delta` to `quota`, if it exceeds the quota or the quota cannot be
 * judged yet; `undefined` when it fits. Pure (upstream CheckRequest).
 */
export function quotaRefusal(quota: Quota, delta: Map<string, Quantity>, object: KubeObject, isPod: boolean): string | undefined {
  const hard = quota.status?.hard;
  const specHard = quota.spec?.hard ?? {};
  const constrained = [...delta.keys()].filter((k) => specHard[k] !== undefined);
  if (isPod) {
    const missing = requiredComputeResources(quota, object);
    if (missing.length) return `failed quota: ${quota.metadata.name}: must specify ${missing.join('; ')}`;
  }
  if (constrained.length === 0) return undefined;
  if (!hard || constrained.some((k) => hard[k] === undefined)) return `status unknown for quota: ${quota.metadata.name}, resources: ${constrained.sort().join(',')}`;
  const over = constrained.filter((k) => q(quota.status?.used?.[k]).add(delta.get(k)!).cmp(q(hard[k])) > 0).sort();
  if (over.length === 0) return undefined;
  const list = (f: (k: string) => string) => over.map((k) => `${k}=${f(k)}`).join(',');
  return `exceeded quota: ${quota.metadata.name}, requested: ${list((k) => delta.get(k)!.toString())}, used: ${list((k) => q(quota.status?.used?.[k]).toString())}, limited: ${list((k) => q(hard[k]).toString())}`;
}

/**
 * ResourceQuota (upstream plugin of the same name): an object is admitted only if, for every
 * ResourceQuota of its namespace that applies to it, the quota's recorded usage plus what the
 * object adds stays within the hard limits; the usage is then recorded in the quota's status
 * before the object is written. The quota is read from the store and its status written
 * conditioned on its resourceVersion, so concurrent admissions on any number of gateway
 * replicas never overcommit it (a lost race re-reads and re-checks). Usage that an object gives
 * back (deletes, failed writes) is returned by the quota controller's recount.
 */
@AdmissionPluginProvider()
@Injectable()
export class ResourceQuota extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = RESOURCE_QUOTA;
  /** Charges to one quota are serialized within this replica (upstream batches them per namespace): only replicas race. */
  private readonly queues = new Map<string, Promise<void>>();

  readonly handlesFixed = true;

  handles(operation: string, r: AdmissionResource, sub: string): boolean {
    return (operation === 'CREATE' || operation === 'UPDATE') && sub === '' && !NOT_COUNTED.has(r.resource);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.object || !a.namespace) return;
    const candidates = this.state.cache<Quota>('', 'resourcequotas').list(a.namespace);
    if (candidates.length === 0) return;
    const delta = usageDelta(a.resource, a.object, a.oldObject);
    if (delta.size === 0) return;
    const isPod = a.resource.group === '' && a.resource.resource === 'pods';
    for (const cached of candidates) {
      if (!quotaMatches(cached, a.resource.group, a.resource.resource, a.object)) continue;
      if (![...delta.keys()].some((k) => cached.spec?.hard?.[k] !== undefined) && !(isPod && a.operation === 'CREATE')) continue;
      await this.serialized(`${a.namespace}/${cached.metadata.name}`, () => this.charge(a, cached.metadata.name!, delta, isPod && a.operation === 'CREATE'));
    }
  }

  private async serialized(key: string, fn: () => Promise<void>): Promise<void> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(key, tail);
    try {
      await run;
    } finally {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    }
  }

  /** Checks and records the charge on one quota, retrying on a concurrent status write (another replica's). */
  private async charge(a: AdmissionAttributes, name: string, delta: Map<string, Quantity>, isPodCreate: boolean): Promise<void> {
    const quotas = this.state.registry('', 'resourcequotas');
    for (let attempt = 1; ; attempt++) {
      let quota: Quota;
      try {
        quota = (await quotas.get(a.namespace, name)) as Quota;
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) return; // deleted meanwhile
        throw err;
      }
      const refusal = quotaRefusal(quota, delta, a.object!, isPodCreate);
      if (refusal) throw admissionDenied(a, refusal);
      const hard = quota.status?.hard ?? {};
      if (a.dryRun || ![...delta.keys()].some((k) => hard[k] !== undefined)) return;
      const next: Quota = { ...quota, status: { ...quota.status, used: addUsage(quota.status?.used, delta, hard as ResourceList) } };
      try {
        await quotas.update(a.namespace, name, next, ADMISSION_CONTEXT, 'status');
        return;
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 409) || attempt >= MAX_ATTEMPTS) {
          if (err instanceof StatusError && err.code === 409) throw StatusError.conflict({ group: '', resource: 'resourcequotas' }, name, 'please apply your changes to the latest version and try again');
          throw err;
        }
        await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
      }
    }
  }
}
