import type { ResourceDef } from '@orch/api';
import { FieldError, StatusError, generateName, qualifiedName, type DeleteOptions, type KubeObject, type QualifiedResource } from '@orch/apimachinery';
import { KeyExistsError, KeyNotFoundError, RevisionConflictError, type KeyValue, type Store } from '@orch/storage';
import type { WatchCache } from '@orch/watch';
import { ConflictRetries, DEFAULT_CONFLICT_RETRY } from './conflict-retries';
import type { ResolvedKind } from './kinds/binding';
import { ManagedFieldsTracker } from './managed-fields';
import { validateObjectMeta, validateObjectMetaUpdate } from './metadata-validation';
import { deepCopy, newUid, nowTime, sameJson, specPart } from './object-meta';
import { parseResourceVersion, ResourceReader } from './reads';
import { StoredObjects } from './stored-objects';
import { builtinConverter, type CreateResult, type DeleteResult, type ListOptions, type ObjectConverter, type ObjectList, type PatchFn, type RegistryOptions, type UpdateResult, type WatchHandle, type WatchOptions, type WatchSink } from './store-types';
import type { RequestContext, Strategy } from './strategy';
import { ResourceWatches } from './watches';

export { DEFAULT_CONFLICT_RETRY, type ConflictRetryPolicy } from './conflict-retries';
export { parseResourceVersion } from './reads';
export { injectResourceVersion } from './stored-objects';
export * from './store-types';

const MAX_GENERATE_NAME_ATTEMPTS = 8;

const DELETE_FINALIZERS = { orphan: 'orphan', foreground: 'foregroundDeletion' } as const;

/**
 * The one generic store (STYLE 1): serves every stored resource of the catalog. Behaviour
 * per kind comes from its binding, resolved once (`kind`: strategy, subresources, field
 * selectors); this class fixes the order of the steps of every write. Reads
 * (reads.ts), watches (watches.ts) and the stored form of objects (stored-objects.ts) are
 * its parts.
 */
export class GenericStore {
  readonly qr: QualifiedResource;
  private readonly objects: StoredObjects;
  private readonly reader: ResourceReader;
  private readonly watches: ResourceWatches;
  private readonly managedFields: ManagedFieldsTracker;

  constructor(
    readonly def: ResourceDef,
    /** The resource's binding, resolved (kinds/). */
    readonly kind: ResolvedKind,
    private readonly store: Store,
    private readonly watchCache: WatchCache,
    private readonly opts: RegistryOptions,
    /** Conversions between this resource's version and its storage (and other stored) versions. */
    converter: ObjectConverter = builtinConverter,
  ) {
    this.objects = new StoredObjects(def, kind, converter);
    this.qr = this.objects.qr;
    this.reader = new ResourceReader(this.objects, store, watchCache, opts);
    this.watches = new ResourceWatches(this.objects, this.reader, watchCache, opts);
    this.managedFields = new ManagedFieldsTracker(def, this.objects.apiVersion, !!kind.subresources.status?.writes);
  }

  get strategy(): Strategy {
    return this.kind.strategy;
  }

  get namespaced(): boolean {
    return this.objects.namespaced;
  }

  key(namespace: string, name: string): string {
    return this.objects.key(namespace, name);
  }

  prefix(namespace: string): string {
    return this.objects.prefix(namespace);
  }

  // ---------------------------------------------------------------- reads (reads.ts) and watches (watches.ts)

  get(namespace: string, name: string, resourceVersion?: string): Promise<KubeObject> {
    return this.reader.get(namespace, name, resourceVersion);
  }

  /** GET as JSON text when the stored value reads verbatim (see ResourceReader.getJson). */
  getJson(namespace: string, name: string, resourceVersion?: string): ReturnType<ResourceReader['getJson']> {
    return this.reader.getJson(namespace, name, resourceVersion);
  }

  /** GET of the stored value itself when it reads verbatim, else the object (see ResourceReader.getVerbatim). */
  getVerbatim(namespace: string, name: string, resourceVersion?: string): ReturnType<ResourceReader['getVerbatim']> {
    return this.reader.getVerbatim(namespace, name, resourceVersion);
  }

  list(namespace: string, opts: ListOptions): Promise<ObjectList> {
    return this.reader.list(namespace, opts);
  }

  /** A list page of the stored values themselves, or undefined (see ResourceReader.listVerbatim). */
  listVerbatim(namespace: string, opts: ListOptions): Promise<(Omit<ObjectList, 'items'> & { items: KeyValue[] }) | undefined> {
    return this.reader.listVerbatim(namespace, opts);
  }

  /** Starts a watch (see ResourceWatches.watch). */
  watch(namespace: string, opts: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    return this.watches.watch(namespace, opts, sink);
  }

  /** Fields a field selector may use on this resource, with their values in `obj`. */
  fieldAttributes(obj: KubeObject): Record<string, string> {
    return this.objects.fieldAttributes(obj);
  }

  /** `object` in `toApiVersion`, a version of this resource's storage family (see StoredObjects.convertTo). */
  convertTo(object: KubeObject, toApiVersion: string): Promise<KubeObject> {
    return this.objects.convertTo(object, toApiVersion);
  }

  /** A stored object as this resource serves it, without waiting (see StoredObjects.decodeSync). */
  decodeSync(kv: KeyValue): KubeObject {
    return this.objects.decodeSync(kv);
  }

  // ---------------------------------------------------------------- writes

  /**
   * POST: creates the object in the namespace of the URL (rest.BeforeCreate order, STYLE 2).
   * `applied`: the input comes from a server-side apply and already carries its managedFields.
   * The input is taken over, not copied (a request's decoded body has no other user): it is
   * changed as the object is made and may be the result; pass a copy of an object you keep.
   */
  async create(namespace: string, obj: KubeObject, ctx: RequestContext, applied = false): Promise<CreateResult> {
    this.objects.checkTypeMeta(obj);
    const meta = obj.metadata;
    this.objects.checkNamespace(meta, namespace);
    await ctx.admission?.mutate('CREATE', obj, undefined);

    const generated = !meta.name && !!meta.generateName;
    for (let attempt = 0; ; attempt++) {
      if (generated) meta.name = generateName(meta.generateName!);
      const attemptObj = attempt === 0 ? obj : deepCopy(obj);
      this.prepareCreate(attemptObj, ctx);
      await ctx.admission?.validate('CREATE', attemptObj, undefined);
      if (!applied) this.managedFields.trackUpdate(undefined, attemptObj, ctx, '');
      // Without an allocating strategy, no `await undefined` (a promise and a microtask per create).
      const allocation = this.kind.strategy.allocate ? await this.kind.strategy.allocate(attemptObj, undefined, ctx) : undefined;
      if (ctx.dryRun) {
        if (await this.store.get(this.objects.key(namespace, attemptObj.metadata.name!))) {
          if (generated && attempt < MAX_GENERATE_NAME_ATTEMPTS) continue;
          throw StatusError.alreadyExists(this.qr, attemptObj.metadata.name!);
        }
        return { object: attemptObj };
      }
      let revision: number;
      const stored = await this.objects.encode(attemptObj);
      try {
        revision = (await this.store.create(this.objects.key(namespace, attemptObj.metadata.name!), stored)).modRevision;
      } catch (err) {
        await allocation?.revert();
        if (err instanceof KeyExistsError) {
          if (generated && attempt < MAX_GENERATE_NAME_ATTEMPTS) continue;
          throw StatusError.alreadyExists(this.qr, attemptObj.metadata.name!);
        }
        throw err;
      }
      if (allocation) await allocation.commit();
      return { object: await this.objects.withRevision(attemptObj, revision), json: this.objects.servedJson(stored, revision) };
    }
  }

  /** System fields, strategy hooks and validation of a new object; throws 422 on invalid input. */
  private prepareCreate(obj: KubeObject, ctx: RequestContext): void {
    const meta = obj.metadata;
    meta.uid = newUid();
    meta.creationTimestamp = nowTime();
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (!this.objects.namespaced) delete meta.namespace;
    if ('spec' in obj) meta.generation = 1;
    else delete meta.generation;
    this.objects.applyDefaults(obj, 'create');
    this.kind.strategy.prepareForCreate?.(obj, ctx);
    this.objects.omitEmptyFields(obj);
    const errs = [...(this.kind.strategy.validate?.(obj, ctx) ?? []), ...validateObjectMeta(meta, this.objects.namespaced, this.kind.strategy.nameRule)];
    if (errs.length > 0) throw StatusError.invalid(obj.kind, this.def.group, meta.name ?? meta.generateName ?? '', errs);
    this.kind.strategy.canonicalize?.(obj);
  }

  /**
   * PUT: replaces the object (or its status). Creates it when absent and the strategy allows.
   * A stale metadata.resourceVersion is a 409 Conflict (optimistic concurrency, STYLE 5).
   */
  async update(namespace: string, name: string, input: KubeObject, ctx: RequestContext, subresource = ''): Promise<UpdateResult> {
    this.objects.checkTypeMeta(input);
    this.objects.checkNamespace(input.metadata, namespace);
    if (input.metadata.name !== name) {
      throw StatusError.badRequest(`the name of the object (${input.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    }
    const expected = input.metadata.resourceVersion;
    if (expected !== undefined && expected !== '') parseResourceVersion(expected, 'metadata.resourceVersion');
    return this.guaranteedUpdate(namespace, name, ctx, subresource, expected || undefined, () => deepCopy(input), true);
  }

  /** PATCH: applies patchFn to the latest object, retrying on concurrent writes. */
  async patch(namespace: string, name: string, patchFn: PatchFn, ctx: RequestContext, subresource = ''): Promise<UpdateResult> {
    return this.guaranteedUpdate(namespace, name, ctx, subresource, undefined, patchFn, false);
  }

  /**
   * PATCH with application/apply-patch+yaml (SPEC "Apply ownership"): server-side apply of
   * `config` by ctx.fieldManager; creates the object when absent (`created`). Conflicts
   * with other managers are 409 unless `force`.
   */
  async apply(namespace: string, name: string, config: KubeObject, force: boolean, ctx: RequestContext): Promise<UpdateResult> {
    const applyFn: PatchFn = (current) => this.managedFields.apply(current.metadata ? current : undefined, config, force, ctx);
    return this.guaranteedUpdate(namespace, name, ctx, '', undefined, applyFn, false, true);
  }

  private async guaranteedUpdate(
    namespace: string,
    name: string,
    ctx: RequestContext,
    subresource: string,
    expectedRv: string | undefined,
    compute: PatchFn,
    isPut: boolean,
    /** compute is a server-side apply: it creates absent objects and sets managedFields itself. */
    applied = false,
  ): Promise<UpdateResult> {
    const key = this.objects.key(namespace, name);
    const retries = this.conflictRetries(name);
    for (;; await retries.next()) {
      // A stale read only costs a conflict and a retry: the write below is conditional on its revision.
      const kv = this.reader.cacheServesGet(undefined, undefined) ? this.watchCache.get(key) : await this.store.get(key);
      if (!kv) {
        if (applied) {
          const obj = compute({} as KubeObject);
          if (obj.metadata?.name !== name) {
            throw StatusError.badRequest(`the name of the object (${obj.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
          }
          try {
            return { ...(await this.create(namespace, obj, ctx, true)), created: true };
          } catch (err) {
            if (err instanceof StatusError && err.reason === 'AlreadyExists') continue; // created meanwhile: apply to it
            throw err;
          }
        }
        if (isPut && !subresource && this.kind.strategy.allowCreateOnUpdate) {
          const obj = compute({} as KubeObject);
          return { ...(await this.create(namespace, obj, ctx)), created: true };
        }
        throw StatusError.notFound(this.qr, name);
      }
      const old = await this.objects.decode(kv);
      checkIfMatch(ctx, old, this.qr);
      let obj = compute(deepCopy(old));
      if (!isPut) {
        this.objects.checkTypeMeta(obj);
        if (obj.metadata?.name !== name) {
          throw StatusError.badRequest(`the name of the object (${obj.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
        }
        this.objects.checkNamespace(obj.metadata, namespace);
      }
      // A patch is conditional only when it sets metadata.resourceVersion itself (the patched
      // copy otherwise carries the version it was read at): unconditional patches retry.
      const patchedRv = isPut ? undefined : obj.metadata.resourceVersion;
      const wantRv = expectedRv ?? (patchedRv !== undefined && patchedRv !== old.metadata.resourceVersion ? patchedRv : undefined);
      if (wantRv !== undefined && wantRv !== old.metadata.resourceVersion) {
        throw StatusError.conflict(this.qr, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      if (isPut && wantRv === undefined && !this.kind.strategy.allowUnconditionalUpdate) {
        throw StatusError.invalid(old.kind, this.def.group, name, [
          FieldError.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
        ]);
      }
      await ctx.admission?.mutate('UPDATE', obj, old);
      obj = this.prepareUpdate(obj, old, ctx, subresource);
      await ctx.admission?.validate('UPDATE', obj, old);
      if (!applied) this.managedFields.trackUpdate(old, obj, ctx, subresource);
      if (sameJson(obj, old)) return { object: old, created: false };

      // Two-phase deletion: the last finalizer of a deleting object removes it.
      const meta = obj.metadata;
      const finalizersLeft = (meta.finalizers ?? []).length > 0 || !!this.kind.strategy.holdsDeletion?.(obj);
      const removes = !!meta.deletionTimestamp && !finalizersLeft && (meta.deletionGracePeriodSeconds ?? 0) === 0;
      const allocation = subresource || removes || !this.kind.strategy.allocate ? undefined : await this.kind.strategy.allocate(obj, old, ctx);
      if (ctx.dryRun) return { object: obj, created: false };
      let revision: number;
      const stored = removes ? undefined : await this.objects.encode(obj);
      try {
        revision = stored === undefined ? (await this.store.delete(key, kv.modRevision)).revision : (await this.store.update(key, stored, kv.modRevision)).modRevision;
      } catch (err) {
        await allocation?.revert();
        if (err instanceof RevisionConflictError) {
          if (wantRv !== undefined) {
            throw StatusError.conflict(this.qr, name, 'the object has been modified; please apply your changes to the latest version and try again');
          }
          continue; // unconditional: retry on the new state
        }
        if (err instanceof KeyNotFoundError) throw StatusError.notFound(this.qr, name);
        throw err;
      }
      if (removes) await this.kind.strategy.release?.(obj);
      else if (allocation) await allocation.commit();
      return { object: await this.objects.withRevision(obj, revision), json: stored === undefined ? undefined : this.objects.servedJson(stored, revision), created: false };
    }
  }

  private conflictRetries(name: string): ConflictRetries {
    return new ConflictRetries(this.opts.conflictRetry ?? DEFAULT_CONFLICT_RETRY, `${qualifiedName(this.qr)} ${JSON.stringify(name)}`);
  }

  /** Carries system fields over from old, runs strategy hooks and validation. */
  private prepareUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext, subresource: string): KubeObject {
    const meta = obj.metadata;
    const oldMeta = old.metadata;
    if (meta.uid && meta.uid !== oldMeta.uid) {
      throw StatusError.conflict(this.qr, oldMeta.name!, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${oldMeta.uid}`);
    }
    meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.resourceVersion = oldMeta.resourceVersion;
    if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (!this.objects.namespaced) delete meta.namespace;
    if (oldMeta.generateName && meta.generateName === undefined) meta.generateName = oldMeta.generateName;

    this.objects.applyDefaults(obj, 'update');
    if (subresource) {
      const sub = this.kind.subresources[subresource]?.writes;
      if (!sub) throw StatusError.notFound(this.qr, `${oldMeta.name}/${subresource}`);
      sub.prepareForUpdate(obj, old);
      this.objects.omitEmptyFields(obj);
      const errs = sub.validateUpdate?.(obj, old) ?? [];
      if (errs.length) throw StatusError.invalid(old.kind, this.def.group, oldMeta.name!, errs);
    } else {
      const hasStatus = !!this.kind.subresources.status?.writes;
      if (hasStatus && 'status' in old) (obj as Record<string, unknown>).status = (old as Record<string, unknown>).status;
      else if (hasStatus) delete (obj as Record<string, unknown>).status;
      this.kind.strategy.prepareForUpdate?.(obj, old, ctx);
      this.objects.omitEmptyFields(obj);
      const errs = [
        ...(this.kind.strategy.validateUpdate?.(obj, old, ctx) ?? []),
        ...validateObjectMeta(meta, this.objects.namespaced, this.kind.strategy.nameRule),
        ...validateObjectMetaUpdate(meta, oldMeta),
      ];
      if (errs.length) throw StatusError.invalid(old.kind, this.def.group, oldMeta.name!, errs);
    }
    if (oldMeta.generation !== undefined || 'spec' in obj) {
      const bump = specPart(obj) !== specPart(old);
      meta.generation = (oldMeta.generation ?? 1) + (bump ? 1 : 0);
    }
    this.kind.strategy.canonicalize?.(obj);
    return obj;
  }

  /**
   * DELETE (SPEC "Object deletion"): preconditions, propagation finalizers, graceful
   * deletion; the object is removed at once only when nothing holds it.
   */
  async delete(namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    const key = this.objects.key(namespace, name);
    validateDeleteOptions(options);
    const retries = this.conflictRetries(name);
    for (;; await retries.next()) {
      const kv = await this.store.get(key);
      if (!kv) throw StatusError.notFound(this.qr, name);
      const current = await this.objects.decode(kv);
      checkIfMatch(ctx, current, this.qr);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw StatusError.conflict(this.qr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw StatusError.conflict(
          this.qr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      await ctx.admission?.mutate('DELETE', undefined, current);
      await ctx.admission?.validate('DELETE', undefined, current);

      const obj = deepCopy(current);
      const meta = obj.metadata;
      const finalizers = new Set(meta.finalizers ?? []);
      const policy = options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined);
      if (!meta.deletionTimestamp) {
        for (const f of this.kind.strategy.finalizersOnDelete?.(current) ?? []) finalizers.add(f);
        if (policy === 'Orphan') finalizers.add(DELETE_FINALIZERS.orphan);
        if (policy === 'Foreground') finalizers.add(DELETE_FINALIZERS.foreground);
      } else if (policy === 'Orphan' || policy === 'Foreground') {
        // A later delete may switch the propagation of a deleting object.
        finalizers.delete(policy === 'Orphan' ? DELETE_FINALIZERS.foreground : DELETE_FINALIZERS.orphan);
        finalizers.add(policy === 'Orphan' ? DELETE_FINALIZERS.orphan : DELETE_FINALIZERS.foreground);
      }
      const grace = this.kind.strategy.gracePeriodSeconds?.(current, options);
      const alreadyDeleting = !!meta.deletionTimestamp;
      const pendingGrace = grace !== undefined && grace > 0;

      if (finalizers.size === 0 && !pendingGrace && !this.kind.strategy.holdsDeletion?.(obj)) {
        if (ctx.dryRun) return { object: current, deleted: true };
        let revision: number;
        try {
          revision = (await this.store.delete(key, kv.modRevision)).revision;
        } catch (err) {
          if (err instanceof RevisionConflictError) continue;
          if (err instanceof KeyNotFoundError) throw StatusError.notFound(this.qr, name);
          throw err;
        }
        await this.kind.strategy.release?.(current);
        return { object: await this.objects.withRevision(current, revision), deleted: true };
      }

      // Mark for deletion: finalizers and/or grace period hold the object.
      meta.finalizers = finalizers.size ? [...finalizers] : undefined;
      if (!meta.finalizers) delete meta.finalizers;
      const now = Date.now();
      if (!alreadyDeleting) {
        meta.deletionTimestamp = nowTime(new Date(now + (pendingGrace ? grace! * 1000 : 0)));
        meta.deletionGracePeriodSeconds = pendingGrace ? grace! : 0;
        this.kind.strategy.beforeDelete?.(obj);
      } else if (grace !== undefined && grace < (meta.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period shortens a pending graceful deletion.
        meta.deletionTimestamp = nowTime(new Date(now + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
      }
      if (sameJson(obj, current)) return { object: current, deleted: false };
      if (ctx.dryRun) return { object: obj, deleted: false };
      try {
        const written = await this.store.update(key, await this.objects.encode(obj), kv.modRevision);
        return { object: await this.objects.withRevision(obj, written.modRevision), deleted: false };
      } catch (err) {
        if (err instanceof RevisionConflictError) continue;
        if (err instanceof KeyNotFoundError) throw StatusError.notFound(this.qr, name);
        throw err;
      }
    }
  }

  /** DELETE on a collection: deletes every object the selectors match; returns them as a list. */
  async deleteCollection(namespace: string, listOpts: ListOptions, options: DeleteOptions, ctx: RequestContext): Promise<ObjectList> {
    const list = await this.reader.list(namespace, { labelSelector: listOpts.labelSelector, fieldSelector: listOpts.fieldSelector });
    const items: KubeObject[] = [];
    for (const item of list.items) {
      try {
        const res = await this.delete(item.metadata.namespace ?? '', item.metadata.name!, options, ctx);
        items.push(res.object);
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) continue;
        throw err;
      }
    }
    return { ...list, items };
  }
}

/** The If-Match precondition (RequestContext.ifMatchResourceVersion) against the stored object. */
function checkIfMatch(ctx: RequestContext, current: KubeObject, qr: QualifiedResource): void {
  const want = ctx.ifMatchResourceVersion;
  if (want !== undefined && want !== '*' && want !== current.metadata.resourceVersion) {
    throw StatusError.conflict(qr, current.metadata.name ?? '', `Precondition failed: If-Match resourceVersion ${want}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
  }
}


function validateDeleteOptions(options: DeleteOptions): void {
  const errs: FieldError[] = [];
  const policy = options.propagationPolicy;
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
    errs.push(FieldError.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (policy !== undefined && options.orphanDependents !== undefined) {
    errs.push(FieldError.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (options.gracePeriodSeconds !== undefined && (!Number.isInteger(options.gracePeriodSeconds) || options.gracePeriodSeconds < 0)) {
    errs.push(FieldError.invalid('gracePeriodSeconds', options.gracePeriodSeconds, 'must be a non-negative integer'));
  }
  if (errs.length) throw StatusError.invalid('DeleteOptions', 'meta.orch.io', '', errs);
}
