import { addUsage, canonicalGroup, quotaMatches, quotaUsage, type ResourceList, type ResourceQuota } from '@orch/api';
import { Quantity, type KubeObject } from '@orch/apimachinery';
import { objectKey, unwrapTombstone, type GroupVersionResource, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { jsonEqual } from '../cluster-common/equal';
import { ignoreNotFound, periodically, QueueController } from '../../framework/queue-controller';
import { RESOURCE_QUOTAS } from '../../framework/resources';


/** Core resources whose usage the controller follows through informers (others are listed when a quota counts them). */
const WATCHED: readonly GroupVersionResource[] = ['pods', 'services', 'persistentvolumeclaims', 'configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'].map((resource) => ({ group: '', version: 'v1', resource }));

/** upstream --resource-quota-sync-period (5 min); recounts also follow every change of a counted object. */
const FULL_RESYNC_MS = 5 * 60_000;

/**
 * The usage of every resource `hard` names by `objects` of one resource (those the quota's
 * scopes select), added into `used`.
 */
export function countUsage(quota: ResourceQuota, gvr: { group: string; resource: string }, objects: readonly KubeObject[], used: ResourceList, hard: ResourceList): ResourceList {
  let out = used;
  for (const obj of objects) {
    if (!quotaMatches(quota, gvr.group, gvr.resource, obj)) continue;
    out = addUsage(out, quotaUsage(gvr.group, gvr.resource, obj), hard);
  }
  return out;
}

/** `count/<resource>.<group>` → the resource and group it counts (orch spelling). */
function countedResource(name: string): { group: string; resource: string } | undefined {
  const m = /^count\/([^.]+)(?:\.(.+))?$/.exec(name);
  if (!m) return undefined;
  return { resource: m[1], group: canonicalGroup(m[2] ?? '') };
}

/**
 * Resource quota controller (upstream resourcequota): keeps each ResourceQuota's status —
 * `hard` as the spec says and `used` recounted from the objects in its namespace — so that
 * the ResourceQuota admission plugin can judge new objects, and usage given back by deletes
 * (and by admitted writes that failed) returns to the quota. Recounts a quota when it changes,
 * when a counted object in its namespace is deleted or gives usage back, and every 5 minutes
 * (not on creates: admission charged those, and a recount racing writes it admitted but not
 * yet stored would under-count).
 */
export class ResourceQuotaController extends QueueController {
  private readonly cache = this.informersOf({ quotas: RESOURCE_QUOTAS });
  private readonly watched = new Map<string, SharedInformer<KubeObject>>();

  constructor(ctx: ControllerContext) {
    super('resourcequota', ctx);
    // A quota is recounted when it is new or its spec changed; status writes (admission's
    // charges, this controller's own) do not trigger a recount.
    this.cache.quotas.addEventHandler({
      onAdd: (q) => this.queue.add(objectKey(q)),
      onUpdate: (o, n) => {
        if (!jsonEqual(o.spec ?? {}, n.spec ?? {}) || !jsonEqual(o.status?.hard ?? {}, n.spec?.hard ?? {})) this.queue.add(objectKey(n));
      },
    });
    for (const gvr of WATCHED) {
      const inf = gvr.resource === 'resourcequotas' ? (this.cache.quotas as unknown as SharedInformer<KubeObject>) : this.informer<KubeObject>(gvr);
      this.watched.set(gvr.resource, inf);
      if (gvr.resource === 'resourcequotas') continue;
      const touch = (obj: KubeObject) => {
        for (const q of this.cache.quotas.list()) if (q.metadata.namespace === obj.metadata.namespace) this.queue.add(objectKey(q));
      };
      // Replenishment only (upstream): usage given back by deletes and by updates that use less.
      // Adds are charged by admission; recounting on them would race admitted writes in flight.
      inf.addEventHandler({
        onUpdate: (o, n) => {
          if (usageDecreased(gvr.resource, o, n)) touch(n);
        },
        onDelete: (o) => touch(unwrapTombstone(o)),
      });
    }
  }

  protected override loops(signal: AbortSignal): Promise<void>[] {
    return [periodically(FULL_RESYNC_MS, signal, this.logger, 'quota resync', async () => this.cache.quotas.list().forEach((q) => this.queue.add(objectKey(q))))];
  }

  protected async sync(key: string): Promise<void> {
    const quota = this.cache.quotas.get(key);
    if (!quota) return;
    const namespace = quota.metadata.namespace ?? '';
    const hard = quota.spec?.hard ?? {};
    let used: ResourceList = Object.fromEntries(Object.keys(hard).map((k) => [k, '0']));
    for (const [resource, inf] of this.watched) {
      used = countUsage(quota, { group: '', resource }, inf.list().filter((o) => o.metadata.namespace === namespace), used, hard);
    }
    // count/<resource>.<group> of resources without an informer: listed now.
    for (const name of Object.keys(hard)) {
      const counted = countedResource(name);
      if (!counted || (counted.group === '' && this.watched.has(counted.resource))) continue;
      const def = this.ctx.catalog.resources().find((d) => d.group === counted.group && d.resource === counted.resource);
      if (!def) continue;
      const list = await this.ctx.client.resource({ group: def.group, version: def.version, resource: def.resource }).inNamespace(namespace).list();
      used = countUsage(quota, counted, list.items, used, { [name]: hard[name] });
    }
    const status = { hard, used: normalize(used) };
    if (jsonEqual(quota.status ?? {}, status)) return;
    await ignoreNotFound(this.ctx.client.resource<ResourceQuota>(RESOURCE_QUOTAS).inNamespace(namespace).updateStatus({ ...quota, status }));
  }
}

/** Whether an update gives usage back (a pod finishing, a service losing node ports, ...). */
function usageDecreased(resource: string, before: KubeObject, after: KubeObject): boolean {
  const old = quotaUsage('', resource, before);
  const now = quotaUsage('', resource, after);
  for (const [k, v] of old) if (!now.has(k) || now.get(k)!.cmp(v) < 0) return true;
  return false;
}

function normalize(list: ResourceList): ResourceList {
  return Object.fromEntries(Object.entries(list).map(([k, v]) => [k, Quantity.parse(v).toString()]));
}

export const resourceQuotaController: ControllerDescriptor = { name: 'resourcequota', serviceAccount: 'resourcequota-controller', create: (ctx) => new ResourceQuotaController(ctx) };
