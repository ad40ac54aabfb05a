import { compareVersionPriority, parseApiVersion, type Catalog, type ResourceDef } from '@orch/api';
import type { KubeObject, OwnerReference } from '@orch/apimachinery';
import { isConflict, isNotFound, RateLimitingQueue, runWorkers, unwrapTombstone, type ResourceClient, type SharedInformer } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { registerQueueMetrics } from '../../framework/metrics';
import { QueueController } from '../../framework/queue-controller';
import { decideDependent, type ClassifiedRef } from './decide';
import { DependencyGraph, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type GraphEvent, type GraphNode, type ObjectIdentity } from './graph';

/** Resources the collector never watches (upstream ignoredResources: events). */
const IGNORED = new Set(['/events', 'events.orch.io/events']);
/** How many verified-absent owners are remembered (upstream absentOwnerCache size). */
const ABSENT_OWNER_CACHE_SIZE = 500;
/** How long the collector waits for its monitors before it starts deciding anyway. */
const MONITOR_SYNC_TIMEOUT_MS = 60_000;
/** Re-checks of a virtual owner that exists but no informer reported yet: doubling up to this. */
const MAX_VIRTUAL_POLL_MS = 5 * 60_000;

/**
 * The resources the collector monitors: every stored resource that can be listed, watched and
 * deleted, one (preferred) version per group/resource, events excepted.
 */
export function monitoredResources(catalog: Catalog): ResourceDef[] {
  const byGroupResource = new Map<string, ResourceDef>();
  for (const def of catalog.resources()) {
    const gr = `${def.group}/${def.resource}`;
    if (def.virtual || IGNORED.has(gr) || !['list', 'watch', 'delete'].every((v) => def.verbs.includes(v as never))) continue;
    const seen = byGroupResource.get(gr);
    if (!seen || compareVersionPriority(def.version, seen.version) < 0) byGroupResource.set(gr, def);
  }
  return [...byGroupResource.values()];
}

/** A cluster-scoped object names a namespaced owner: invalid, and retrying cannot help. */
class NamespacedOwnerOfClusterScopedObject extends Error {}

/** A small LRU set of strings. */
class LruSet {
  private readonly items = new Set<string>();
  constructor(private readonly max: number) {}
  add(key: string): void {
    this.items.delete(key);
    this.items.add(key);
    if (this.items.size > this.max) this.items.delete(this.items.values().next().value as string);
  }
  has(key: string): boolean {
    return this.items.has(key);
  }
}

function absentKey(ref: { uid: string; apiVersion: string; kind: string; name: string }, namespace: string): string {
  return JSON.stringify([ref.uid, ref.apiVersion, ref.kind, ref.name, namespace]);
}

/**
 * The garbage collector (upstream pkg/controller/garbagecollector): keeps an ownership graph
 * of every monitored object and
 * - deletes dependents whose owners are all gone (background propagation), keeping the
 *   propagation their own finalizers ask for;
 * - for an owner deleted with `foregroundDeletion`, deletes its dependents first (those with
 *   blockOwnerDeletion hold it) and then removes the finalizer;
 * - for an owner deleted with `orphan`, removes its references from the dependents, then the
 *   finalizer.
 * Every decision re-reads the objects involved from the API: the graph only says what to
 * look at.
 */
export class GarbageCollector extends QueueController {
  private readonly graph: DependencyGraph;
  /** The framework's queue holds the uids to attempt to delete; this one those to orphan. */
  private readonly orphanQueue = new RateLimitingQueue<string>();
  private readonly absentOwners = new LruSet(ABSENT_OWNER_CACHE_SIZE);
  private readonly monitors: SharedInformer<KubeObject>[] = [];
  private readonly monitored = new Set<string>();
  private readonly virtualPolls = new Map<string, number>();
  private changes: GraphEvent[] = [];
  private draining?: NodeJS.Immediate;
  private stopped = false;

  constructor(ctx: ControllerContext) {
    super('garbagecollector', ctx, { cacheSyncTimeoutMs: MONITOR_SYNC_TIMEOUT_MS });
    if (ctx.metrics) registerQueueMetrics(ctx.metrics, 'garbagecollector_attempt_to_orphan', this.orphanQueue.metrics);
    this.graph = new DependencyGraph({
      attemptToDelete: (node) => this.queue.add(node.identity.uid),
      attemptToOrphan: (node) => this.orphanQueue.add(node.identity.uid),
      ownerAbsent: (id) => this.absentOwners.add(absentKey(id, id.namespace)),
    });
    this.addMonitors();
  }

  /**
   * Monitors every monitored resource not watched yet (upstream resyncMonitors): at start, and
   * whenever discovery finds new resources (a CRD established, an aggregated API).
   */
  private addMonitors(): void {
    const ctx = this.ctx;
    for (const def of monitoredResources(ctx.catalog)) {
      const key = `${def.group}/${def.version}/${def.resource}`;
      if (this.monitored.has(key)) continue;
      this.monitored.add(key);
      const informer = this.informer<KubeObject>(def);
      const typed = (obj: KubeObject): KubeObject => (obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion: def.group ? `${def.group}/${def.version}` : def.version, kind: def.kind });
      informer.addEventHandler({
        onAdd: (obj) => this.push({ type: 'add', obj: typed(obj) }),
        onUpdate: (old, cur) => this.push({ type: 'update', obj: typed(cur), old }),
        onDelete: (obj) => this.push({ type: 'delete', obj: typed(unwrapTombstone(obj)) }),
      });
      this.monitors.push(informer);
    }
  }

  /** Graph changes are applied in order by one drain, never from the handlers themselves. */
  private push(event: GraphEvent): void {
    if (this.stopped) return;
    this.changes.push(event);
    this.draining ??= setImmediate(() => {
      this.draining = undefined;
      const batch = this.changes;
      this.changes = [];
      for (const e of batch) this.graph.process(e);
    });
  }

  /** Monitors added later (discovery) join the graph as they sync; the run does not wait for them. */
  override async run(signal: AbortSignal): Promise<void> {
    const stopListening = this.ctx.discovery?.onChange(() => this.stopped || this.addMonitors());
    try {
      await super.run(signal);
    } finally {
      stopListening?.();
      this.stopped = true;
      if (this.draining) clearImmediate(this.draining);
      this.orphanQueue.shutDown();
    }
  }

  protected sync(uid: string): Promise<void> {
    return this.attemptToDelete(uid);
  }

  protected override loops(signal: AbortSignal): Promise<void>[] {
    this.logger.info('garbage collector started', { monitors: this.monitors.length, unsynced: this.monitors.filter((m) => !m.hasSynced()).length });
    return [runWorkers(this.orphanQueue, this.ctx.options.workers, (uid) => this.attemptToOrphan(uid), { signal, logger: this.logger })];
  }

  // ---------------------------------------------------------------- API access

  private resourceOf(apiVersion: string, kind: string): ResourceDef {
    const { group, version } = parseApiVersion(apiVersion);
    const def = this.ctx.catalog.lookupKind(group, version, kind);
    if (!def) throw new Error(`unable to get the resource of ${kind} in ${apiVersion}`);
    return def;
  }

  private clientFor(id: { apiVersion: string; kind: string; namespace: string }): ResourceClient<KubeObject> {
    const def = this.resourceOf(id.apiVersion, id.kind);
    return this.ctx.client.resource<KubeObject>(def, def.scope === 'Namespaced' ? id.namespace : undefined);
  }

  /** GET the object, or undefined when it is gone. */
  private async getObject(id: ObjectIdentity): Promise<KubeObject | undefined> {
    try {
      return await this.clientFor(id).get(id.name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Merge-patches the object's metadata with its resourceVersion as precondition; gone is fine. */
  private async patchMetadata(id: ObjectIdentity, resourceVersion: string | undefined, metadata: Record<string, unknown>): Promise<void> {
    try {
      await this.clientFor(id).patch(id.name, 'merge', { metadata: { ...metadata, resourceVersion } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  // ---------------------------------------------------------------- attemptToDelete

  /** upstream attemptToDeleteWorker + attemptToDeleteItem. */
  private async attemptToDelete(uid: string): Promise<void> {
    const node = this.graph.nodes.get(uid);
    if (!node) return;
    try {
      await this.attemptToDeleteItem(node);
    } catch (err) {
      if (err instanceof NamespacedOwnerOfClusterScopedObject) {
        this.ctx.logger.warn(err.message);
        return;
      }
      throw err;
    }
    // A virtual owner that exists but no informer reported yet: check again later.
    const now = this.graph.nodes.get(uid);
    if (now?.virtual) {
      const n = this.virtualPolls.get(uid) ?? 0;
      this.virtualPolls.set(uid, n + 1);
      this.queue.addAfter(uid, Math.min(100 * 2 ** n, MAX_VIRTUAL_POLL_MS));
    } else {
      this.virtualPolls.delete(uid);
    }
  }

  private async attemptToDeleteItem(node: GraphNode): Promise<void> {
    if (node.beingDeleted && !node.deletingDependents) return;
    const latest = await this.getObject(node.identity);
    if (!latest || latest.metadata.uid !== node.identity.uid) {
      this.push({ type: 'virtualDelete', identity: node.identity });
      return;
    }
    if (node.deletingDependents) return this.processDeletingDependents(node);
    const refs = latest.metadata.ownerReferences ?? [];
    if (!refs.length) return;
    const classified = await this.classify(node, refs);
    const dependents = [...node.dependents];
    const decision = decideDependent(classified, dependents.length > 0, dependents.some((d) => d.deletingDependents), latest.metadata.finalizers ?? []);
    const id = node.identity;
    switch (decision.action) {
      case 'keep':
        return;
      case 'removeOwnerRefs': {
        const kept = refs.filter((r) => !decision.uids.includes(r.uid));
        return this.patchMetadata(id, latest.metadata.resourceVersion, { ownerReferences: kept.length ? kept : null });
      }
      case 'deleteForeground':
        if (decision.unblock) {
          const unblocked = refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r));
          await this.patchMetadata(id, latest.metadata.resourceVersion, { ownerReferences: unblocked });
        }
        return this.deleteObject(id, 'Foreground');
      case 'delete':
        return this.deleteObject(id, decision.policy);
    }
  }

  /** upstream classifyReferences / isDangling: reads each owner (absent ones are remembered). */
  private async classify(node: GraphNode, refs: OwnerReference[]): Promise<ClassifiedRef[]> {
    const out: ClassifiedRef[] = [];
    for (const ref of refs) {
      const namespace = node.identity.namespace;
      if (this.absentOwners.has(absentKey(ref, '')) || this.absentOwners.has(absentKey(ref, namespace))) {
        out.push({ ref, state: 'dangling' });
        continue;
      }
      const def = this.resourceOf(ref.apiVersion, ref.kind);
      const namespaced = def.scope === 'Namespaced';
      if (!namespace && namespaced) {
        throw new NamespacedOwnerOfClusterScopedObject(`${node.identity.kind} ${node.identity.name} is cluster-scoped but names the namespaced owner ${ref.kind} ${ref.name}: ignored`);
      }
      const ownerId: ObjectIdentity = { apiVersion: ref.apiVersion, kind: ref.kind, namespace: namespaced ? namespace : '', name: ref.name, uid: ref.uid };
      const owner = await this.getObject(ownerId);
      if (!owner || owner.metadata.uid !== ref.uid) {
        this.absentOwners.add(absentKey(ref, ownerId.namespace));
        out.push({ ref, state: 'dangling' });
        continue;
      }
      const waiting = !!owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER);
      out.push({ ref, state: waiting ? 'waiting' : 'solid' });
    }
    return out;
  }

  private async deleteObject(id: ObjectIdentity, policy: 'Orphan' | 'Foreground' | 'Background'): Promise<void> {
    try {
      await this.clientFor(id).delete(id.name, { propagationPolicy: policy, preconditions: { uid: id.uid } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** upstream processDeletingDependentsItem: the finalizer goes once no dependent blocks. */
  private async processDeletingDependents(node: GraphNode): Promise<void> {
    const blocking = node.blockingDependents();
    if (!blocking.length) return this.removeFinalizer(node.identity, FOREGROUND_FINALIZER);
    for (const dep of blocking) if (!dep.deletingDependents) this.queue.add(dep.identity.uid);
  }

  // ---------------------------------------------------------------- attemptToOrphan

  /** upstream attemptToOrphanWorker: drop the owner's references from its dependents, then the finalizer. */
  private async attemptToOrphan(uid: string): Promise<void> {
    const owner = this.graph.nodes.get(uid);
    if (!owner) return;
    const failures: string[] = [];
    await Promise.all(
      [...owner.dependents].map(async (dep) => {
        try {
          await this.removeOwnerRef(dep.identity, uid);
        } catch (err) {
          failures.push(`${dep.identity.kind} ${dep.identity.namespace}/${dep.identity.name}: ${(err as Error).message}`);
        }
      }),
    );
    if (failures.length) throw new Error(`orphaning dependents of ${owner.identity.kind} ${owner.identity.name}: ${failures.join('; ')}`);
    await this.removeFinalizer(owner.identity, ORPHAN_FINALIZER);
  }

  private async removeOwnerRef(id: ObjectIdentity, ownerUid: string): Promise<void> {
    const obj = await this.getObject(id);
    if (!obj || obj.metadata.uid !== id.uid) return;
    const refs = obj.metadata.ownerReferences ?? [];
    if (!refs.some((r) => r.uid === ownerUid)) return;
    const kept = refs.filter((r) => r.uid !== ownerUid);
    await this.patchMetadata(id, obj.metadata.resourceVersion, { ownerReferences: kept.length ? kept : null });
  }

  /** Removes one finalizer, re-reading on conflict (upstream removeFinalizer with RetryOnConflict). */
  private async removeFinalizer(id: ObjectIdentity, finalizer: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const obj = await this.getObject(id);
      if (!obj || obj.metadata.uid !== id.uid) return;
      const finalizers = obj.metadata.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return;
      const kept = finalizers.filter((f) => f !== finalizer);
      try {
        await this.patchMetadata(id, obj.metadata.resourceVersion, { finalizers: kept.length ? kept : null });
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }
}
