import {
  CRD_CLEANUP_FINALIZER,
  customResourceDefs,
  isCrdConditionTrue,
  type Catalog,
  type CustomResourceDefinition,
  type ResourceDef,
} from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { RateLimitingQueue, runWorkers } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { StoreEvent } from '@orch/storage';
import type { Subscription, WatchCache } from '@orch/watch';
import type { GenericStore, ObjectConverter } from '../registry/generic-store';
import { setCrdCondition } from '../registry/kinds/apiextensions/customresourcedefinitions';
import { customKind, type CustomResourceRules, type ResolvedKind } from '../registry/kinds';
import type { RequestContext } from '../registry/strategy';
import { checkNames } from './naming';

/** What the custom resources of one gateway replica are built from. */
export interface CustomResourcesDeps {
  catalog: Catalog;
  /** The replica's registries: custom resources are added and removed here at run time. */
  registries: Map<ResourceDef, GenericStore>;
  watchCache: WatchCache;
  /** The registry of CustomResourceDefinitions. */
  crds: () => GenericStore;
  /** A generic store for a custom resource (the same constructor every built-in kind uses). */
  newStore(def: ResourceDef, kind: ResolvedKind, converter: ObjectConverter): GenericStore;
  /** Conversion between a custom resource's versions (None or its webhook). */
  converter(def: ResourceDef): ObjectConverter;
  /** The compiled x-kubernetes-validations of a custom resource's schema. */
  rules(def: ResourceDef): CustomResourceRules;
  /** The context of the gateway's own writes. */
  systemContext(): RequestContext;
  logger: Logger;
  /** Called after the served custom resources changed (aggregation registers their APIServices). */
  onServedChange?: () => void;
}

/** Served catalog entries of one CRD and the state they were built from. */
interface Served {
  fingerprint: string;
  defs: ResourceDef[];
}

/** How long the cleanup of a deleted CRD waits before it looks again for instances still being finalized. */
const CLEANUP_RECHECK_MS = 1000;
/** How long to wait before following the CRDs again after the watch cache ended the subscription. */
const RESUBSCRIBE_MS = 200;

/**
 * Custom resources on one gateway replica (upstream apiextensions-apiserver: crdHandler,
 * discovery and the naming, establishing and finalizer controllers).
 *
 * - Serving: follows CustomResourceDefinitions through the replica's watch cache (so every
 *   replica learns of a change as soon as its cache does) and keeps the catalog and the
 *   registries in step: an Established CRD adds one catalog entry and one generic store per
 *   served version; a changed CRD replaces them; a removed one takes them away. Discovery,
 *   OpenAPI, routing and authorization read the catalog, so they follow.
 * - Status: NamesAccepted (no name used twice in a group), Established, status.acceptedNames.
 * - Deletion: a CRD held by the cleanup finalizer has its custom resources deleted, then the
 *   finalizer removed (Terminating: InstanceDeletionInProgress → InstanceDeletionCompleted).
 *
 * Every replica runs the controllers: their writes are idempotent and conflicts retry, so the
 * first replica to act wins and the others find nothing to do.
 */
export class CustomResources {
  private readonly served = new Map<string, Served>();
  private readonly known = new Map<string, CustomResourceDefinition>();
  private readonly queue = new RateLimitingQueue<string>();
  private readonly abort = new AbortController();
  private subscription?: Subscription;
  private resubscribeTimer?: NodeJS.Timeout;
  private workers?: Promise<void>;
  private readonly prefix: string;

  constructor(private readonly deps: CustomResourcesDeps) {
    this.prefix = deps.crds().prefix('');
  }

  /** Serves every CRD the cache holds, then follows changes; starts the controllers. */
  start(): void {
    this.follow();
    this.workers = runWorkers(this.queue, 2, (name) => this.sync(name), { logger: this.deps.logger, signal: this.abort.signal });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.resubscribeTimer);
    this.subscription?.unsubscribe();
    await this.workers;
  }

  /** Whether a CRD of this name is served now (tests and readiness). */
  isServed(crdName: string): boolean {
    return (this.served.get(crdName)?.defs.length ?? 0) > 0;
  }

  private follow(): void {
    const { items, revision } = this.deps.watchCache.list(this.prefix);
    const seen = new Set<string>();
    for (const kv of items) {
      const crd = JSON.parse(kv.value) as CustomResourceDefinition;
      crd.metadata.resourceVersion = String(kv.modRevision);
      seen.add(crd.metadata.name!);
      this.observe(crd);
    }
    for (const name of [...this.known.keys()]) if (!seen.has(name)) this.forget(name);
    this.subscription = this.deps.watchCache.subscribe(this.prefix, revision, {
      onEvent: (event) => this.onEvent(event),
      onError: (err) => {
        if (this.abort.signal.aborted) return;
        this.deps.logger.warn(`custom resource definitions: following the watch cache again (${err.message})`);
        this.resubscribeTimer = setTimeout(() => this.follow(), RESUBSCRIBE_MS);
        this.resubscribeTimer.unref?.();
      },
    });
  }

  private onEvent(event: StoreEvent): void {
    if (event.type === 'delete') {
      const prev = event.prevValue ? (JSON.parse(event.prevValue) as CustomResourceDefinition) : undefined;
      if (prev?.metadata.name) this.forget(prev.metadata.name);
      return;
    }
    const crd = JSON.parse(event.value!) as CustomResourceDefinition;
    crd.metadata.resourceVersion = String(event.revision);
    this.observe(crd);
  }

  /**
   * A CRD as stored now: serve what it defines and let the controllers look at it (and at its
   * group). A state older than the one already seen (the cache delivering a write this replica
   * observed when it made it) is ignored.
   */
  private observe(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    const seen = this.known.get(name);
    if (seen && seen.metadata.uid === crd.metadata.uid && Number(seen.metadata.resourceVersion) >= Number(crd.metadata.resourceVersion)) return;
    this.known.set(name, crd);
    try {
      this.serve(crd);
    } catch (err) {
      this.deps.logger.error(`custom resource definition ${name} cannot be served: ${(err as Error).message}`);
    }
    this.queue.add(name);
    // A name freed or taken in the group may change another CRD's NamesAccepted.
    for (const other of this.known.values()) if (other.spec?.group === crd.spec?.group && other.metadata.name !== name) this.queue.add(other.metadata.name!);
  }

  private forget(name: string): void {
    const group = this.known.get(name)?.spec?.group;
    this.known.delete(name);
    this.unserve(name);
    for (const other of this.known.values()) if (other.spec?.group === group) this.queue.add(other.metadata.name!);
  }

  private serve(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    if (!isCrdConditionTrue(crd, 'Established')) return this.unserve(name);
    const defs = customResourceDefs(crd);
    const fingerprint = JSON.stringify([crd.metadata.uid, crd.metadata.generation, crd.status?.acceptedNames, defs.map((d) => d.custom?.terminating)]);
    if (this.served.get(name)?.fingerprint === fingerprint) return;
    const stores = defs.map((def) => {
      return [def, this.deps.newStore(def, customKind(def, this.deps.rules(def)), this.deps.converter(def))] as const;
    });
    this.unserve(name);
    for (const [def, store] of stores) {
      this.deps.catalog.register(def);
      this.deps.registries.set(def, store);
    }
    this.served.set(name, { fingerprint, defs });
    this.deps.onServedChange?.();
    this.deps.logger.info(`serving ${defs.map((d) => `${d.resource}.${d.group}/${d.version}`).join(', ')}`);
  }

  private unserve(name: string): void {
    const served = this.served.get(name);
    if (!served) return;
    for (const def of served.defs) {
      // Another definition may have registered the same group/version/resource since.
      if (this.deps.catalog.lookup(def.group, def.version, def.resource) === def) this.deps.catalog.unregister(def.group, def.version, def.resource);
      this.deps.registries.delete(def);
    }
    this.served.delete(name);
    this.deps.onServedChange?.();
  }

  // ---------------------------------------------------------------- controllers

  /** Level-triggered: brings one CRD's status and deletion along (idempotent). */
  private async sync(name: string): Promise<void> {
    let crd: CustomResourceDefinition;
    try {
      crd = (await this.deps.crds().get('', name)) as CustomResourceDefinition;
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) return;
      throw err;
    }
    if (crd.metadata.deletionTimestamp) return this.cleanup(crd);
    const next = structuredClone(crd);
    const builtins = this.deps.catalog.resources().filter((d) => !d.custom);
    const naming = checkNames(next, [...this.known.values()], builtins);
    next.status ??= {};
    next.status.acceptedNames = naming.acceptedNames;
    setCrdCondition(next, naming.namesAccepted);
    if (naming.namesAccepted.status === 'True' || isCrdConditionTrue(crd, 'Established')) {
      setCrdCondition(next, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    } else {
      setCrdCondition(next, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
    }
    await this.writeStatus(crd, next);
  }

  /**
   * Writes a changed status. The replica serves what it wrote at once (an Established CRD is
   * in this replica's discovery when the write returns); others follow through their caches.
   */
  private async writeStatus(crd: CustomResourceDefinition, next: CustomResourceDefinition): Promise<void> {
    if (JSON.stringify(crd.status) === JSON.stringify(next.status)) return;
    const written = await this.deps.crds().update('', crd.metadata.name!, next, this.deps.systemContext(), 'status');
    if (!this.abort.signal.aborted) this.observe(written.object as CustomResourceDefinition);
  }

  /**
   * A deleted CRD: deletes its custom resources (every namespace), waits until they are gone
   * (their own finalizers may hold them), then removes the cleanup finalizer.
   */
  private async cleanup(crd: CustomResourceDefinition): Promise<void> {
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    const name = crd.metadata.name!;
    const next = structuredClone(crd);
    if (!isCrdConditionTrue(crd, 'Established')) {
      setCrdCondition(next, { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' });
    } else {
      const store = this.storeForCleanup(crd);
      const ctx = this.deps.systemContext();
      const items = (await store.list('', {})).items;
      const errors: string[] = [];
      for (const ns of new Set(items.map((i) => i.metadata.namespace ?? ''))) {
        try {
          await store.deleteCollection(ns, {}, { propagationPolicy: 'Background' }, ctx);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      if (errors.length) {
        setCrdCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionFailed', message: `could not issue all deletes: ${errors.join('; ')}` });
        await this.writeStatus(crd, next);
        throw new Error(`deleting the custom resources of ${name}: ${errors.join('; ')}`);
      }
      const remaining = (await store.list('', {})).items.length;
      if (remaining > 0) {
        setCrdCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: `CustomResource deletion is in progress: ${remaining} remaining` });
        await this.writeStatus(crd, next);
        this.queue.addAfter(name, CLEANUP_RECHECK_MS);
        return;
      }
      setCrdCondition(next, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' });
    }
    await this.writeStatus(crd, next);
    const latest = (await this.deps.crds().get('', name)) as KubeObject;
    latest.metadata.finalizers = (latest.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    await this.deps.crds().update('', name, latest, this.deps.systemContext());
  }

  /** The served store of a CRD (any version reaches every stored object), or one built for the cleanup. */
  private storeForCleanup(crd: CustomResourceDefinition): GenericStore {
    const def = this.served.get(crd.metadata.name!)?.defs[0];
    const store = def && this.deps.registries.get(def);
    if (store) return store;
    const [first] = customResourceDefs(crd);
    if (!first) throw new Error(`${crd.metadata.name} has no served version to delete its custom resources through`);
    return this.deps.newStore(first, customKind(first), this.deps.converter(first));
  }
}
