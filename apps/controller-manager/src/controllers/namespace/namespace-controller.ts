import type { ResourceDef } from '@orch/api';
import { formatTime, type KubeObject } from '@orch/apimachinery';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { NAMESPACES } from '../../framework/resources';
import type { Namespace, Pod } from '../../framework/api';
import { NAMESPACE_FINALIZER, deletionConditions, mergeConditions, namespacedResources, podsGraceEstimate, remainingOutcome, type ResourceOutcome } from './deletion';

/**
 * Namespace controller (upstream NamespaceController + namespacedResourcesDeleter). For a
 * namespace being deleted (deletionTimestamp set, `orch` in spec.finalizers) it deletes every
 * namespaced resource's content (deletecollection, else list + delete), relists, reports the
 * outcome as namespace conditions, waits while content remains (pods' grace period, or
 * finalizers owned by other controllers), then removes `orch` through `/finalize` and deletes
 * the namespace; the gateway removes it once nothing holds it.
 */
export class NamespaceController extends QueueController {
  private readonly cache = this.informersOf({ namespaces: NAMESPACES });
  private readonly api = this.clientsOf({ namespaces: NAMESPACES });

  constructor(ctx: ControllerContext) {
    super('namespace', ctx);
    this.enqueueOn(this.cache.namespaces, (ns) => (ns.metadata.deletionTimestamp ? ns.metadata.name : undefined));
  }

  protected async sync(name: string): Promise<void> {
    const cached = this.cache.namespaces.get(name);
    if (!cached?.metadata.deletionTimestamp) return;
    // Work from the latest state, not the cache: finalizing twice or on a stale copy conflicts.
    let ns = await ignoreNotFound(this.api.namespaces.get(name));
    if (!ns?.metadata.deletionTimestamp) return;
    if (ns.status?.phase !== 'Terminating') {
      ns = await this.api.namespaces.updateStatus({ ...structuredClone(ns), status: { ...(ns.status ?? {}), phase: 'Terminating' } });
    }
    if (!(ns.spec?.finalizers ?? []).includes(NAMESPACE_FINALIZER)) return;

    const outcomes = await this.deleteAllContent(name);
    const conditions = mergeConditions(ns.status?.conditions ?? [], deletionConditions(outcomes, formatTime(Date.now())));
    if (conditions) ns = await this.api.namespaces.updateStatus({ ...structuredClone(ns), status: { ...(ns.status ?? {}), conditions } });
    const errors = outcomes.filter((o) => o.error).map((o) => o.error);
    if (errors.length) throw new Error(`namespace ${name}: ${errors.join('; ')}`);
    const estimate = Math.max(0, ...outcomes.map((o) => o.estimateSeconds));
    if (estimate > 0) {
      this.logger.info('content remains in terminating namespace', { namespace: name, waitSeconds: estimate });
      this.queue.addAfter(name, estimate * 1000);
      return;
    }

    const finalizers = (ns.spec?.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
    const finalized = await this.api.namespaces.updateSubresource<Namespace>(name, 'finalize', { ...structuredClone(ns), spec: { ...(ns.spec ?? {}), finalizers } });
    if (finalized && (finalized.metadata.finalizers ?? []).length === 0 && (finalized.spec?.finalizers ?? []).length === 0) {
      await ignoreNotFound(this.api.namespaces.delete(name, { preconditions: { uid: ns.metadata.uid } }));
    }
    this.logger.info('namespace finalized', { namespace: name });
  }

  /** Deletes the content of every namespaced resource in `namespace` and reports what is left. */
  private async deleteAllContent(namespace: string): Promise<ResourceOutcome[]> {
    const outcomes: ResourceOutcome[] = [];
    // Custom resources and aggregated APIs are found through discovery at each deletion (upstream).
    await this.ctx.discovery?.refresh();
    for (const def of namespacedResources(this.ctx.catalog)) outcomes.push(await this.deleteResourceContent(def, namespace));
    return outcomes;
  }

  private async deleteResourceContent(def: ResourceDef, namespace: string): Promise<ResourceOutcome> {
    const label = `${def.resource}.${def.group}`;
    const client = this.ctx.client.resource<KubeObject>(def, namespace);
    try {
      const graceEstimate = def.group === '' && def.resource === 'pods' ? podsGraceEstimate((await client.list()).items as Pod[]) : 0;
      if (def.verbs.includes('deletecollection')) {
        await client.deleteCollection({ propagationPolicy: 'Background' });
      } else {
        for (const obj of (await client.list()).items) await ignoreNotFound(client.delete(obj.metadata.name ?? '', { propagationPolicy: 'Background' }));
      }
      return remainingOutcome(label, namespace, (await client.list()).items, graceEstimate);
    } catch (err) {
      return { resource: label, remaining: 0, finalizers: {}, estimateSeconds: 0, error: `${label}: ${(err as Error).message}` };
    }
  }
}

export const namespaceController: ControllerDescriptor = { name: 'namespace', serviceAccount: 'namespace-controller', create: (ctx) => new NamespaceController(ctx) };
