import type { ResourceDef } from '@orch/api';
import { ConversionError, applyDefaults, convertObject, groupVersionString, omitEmptyFields, schemaForKind } from '@orch/api';
import {
  FieldError,
  StatusError,
  generateName,
  parseFieldSelector,
  parseLabelSelector,
  qualifiedName,
  type DeleteOptions,
  type FieldSelector,
  type KubeObject,
  type LabelSelector,
  type QualifiedResource,
} from '@orch/apimachinery';
import {
  CompactedError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  RevisionConflictError,
  type KeyValue,
  type Store,
  type StoreEvent,
} from '@orch/storage';
import { Backoff, sleep } from '@orch/client';
import type { Subscription, WatchCache } from '@orch/watch';
import { ManagedFieldsTracker } from './managed-fields';
import { validateObjectMeta, validateObjectMetaUpdate } from './metadata-validation';
import { deepCopy, newUid, nowTime, sameJson, specPart } from './object-meta';
import type { RequestContext, StatusStrategy, Strategy } from './strategy';

/** A list as returned to clients. */
export interface ObjectList {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

export interface WatchEventOut {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | Record<string, unknown>;
}

/** Where a watch writes its events. `end` is called at most once. */
export interface WatchSink {
  send(event: WatchEventOut): void;
  end(): void;
}

export interface WatchHandle {
  stop(): void;
}

export interface RegistryOptions {
  /** SPEC Limits: continue tokens live 5 minutes. */
  continueTokenLifetimeMs: number;
  /** How long a read waits for a resourceVersion not yet seen before 504. */
  tooLargeResourceVersionWaitMs: number;
  /** Interval of BOOKMARK events for watches that allow them. */
  bookmarkIntervalMs: number;
  watchListEnabled: boolean;
  /** Serve lists from the watch cache when it is provably fresh (ConsistentListFromCache gate). */
  consistentListFromCache?: boolean;
  /** How long a list waits for the cache to reach the store's revision before reading the store. */
  cacheFreshnessWaitMs?: number;
  /** Retries of unconditional writes that lost a race (default DEFAULT_CONFLICT_RETRY). */
  conflictRetry?: ConflictRetryPolicy;
}

/**
 * How an unconditional write (a patch or update without resourceVersion, a delete without
 * preconditions) retries when another write landed between its read and its write. Upstream's
 * GuaranteedUpdate re-reads and re-applies until it succeeds; here each retry first waits a
 * jittered pause that grows with every lost race, so many writers of one object take turns
 * instead of colliding in lockstep. `maxAttempts` is only a safety net against livelock:
 * reaching it is a 429 with Retry-After (nothing was written; clients retry), never a 409.
 */
export interface ConflictRetryPolicy {
  maxAttempts: number;
  /** Pause before the first retry; each later one doubles it up to maxDelayMs, plus up to 100% jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_CONFLICT_RETRY: ConflictRetryPolicy = { maxAttempts: 100, initialDelayMs: 1, maxDelayMs: 100 };

/** The attempts of one write (see ConflictRetryPolicy). */
class ConflictRetries {
  private attempts = 1;
  private readonly backoff: Backoff;

  constructor(
    private readonly policy: ConflictRetryPolicy,
    private readonly what: string,
  ) {
    this.backoff = new Backoff({ initialMs: policy.initialDelayMs, maxMs: policy.maxDelayMs, factor: 2, jitter: 1 });
  }

  /** Waits before the next attempt, or throws 429 when the attempts are used up. */
  async next(): Promise<void> {
    if (++this.attempts > this.policy.maxAttempts) {
      throw StatusError.tooManyRequests(`${this.what} was changed by other writers during each of ${this.policy.maxAttempts} attempts; nothing was written, please try again`, 1);
    }
    await sleep(this.backoff.next());
  }
}

/** Checks that a namespace exists and accepts new content; throws StatusError otherwise. */

export interface CreateResult {
  object: KubeObject;
  /**
   * The object as JSON text, when a write stored it as this resource serves it: the stored text
   * with its resourceVersion spliced in (the response needs no second serialization).
   */
  json?: string;
}

export interface UpdateResult extends CreateResult {
  created: boolean;
}

export interface DeleteResult {
  /** The object as it is now (deleting, with deletionTimestamp) or as it was (deleted). */
  object: KubeObject;
  /** True when the object is gone from the store. */
  deleted: boolean;
}

/**
 * Converts objects between the versions of one resource: built-in conversions
 * ({@link builtinConverter}), or a custom resource's None / Webhook conversion. Objects already
 * in `toApiVersion` come back as they are; the order is kept. May call out (a conversion
 * webhook): failures are StatusErrors, or ConversionError for a conversion that does not exist.
 */
export interface ObjectConverter {
  convert(objects: KubeObject[], toApiVersion: string): Promise<KubeObject[]>;
  /** The same conversion when it needs no call out (built-in conversions, a CRD's None); absent otherwise. */
  convertSync?(object: KubeObject, toApiVersion: string): KubeObject;
}

/** The built-in kinds' conversions (libs/api conversion.ts), synchronous underneath. */
export const builtinConverter: ObjectConverter = {
  convert: async (objects, toApiVersion) => objects.map((o) => convertObject(o, toApiVersion)),
  convertSync: (object, toApiVersion) => convertObject(object, toApiVersion),
};

/** A patch computes the new object from the current one (a copy it may mutate). */
export type PatchFn = (current: KubeObject) => KubeObject;

const MAX_GENERATE_NAME_ATTEMPTS = 8;

const DELETE_FINALIZERS = { orphan: 'orphan', foreground: 'foregroundDeletion' } as const;

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
  /** When the snapshot was first read (ms since epoch). */
  t: number;
}

/**
 * The one generic store (STYLE 1): serves every stored resource of the catalog. Behaviour
 * per kind comes from the Strategy; this class fixes the order of the steps.
 */
export class GenericStore {
  readonly qr: QualifiedResource;
  private readonly keyPrefix: string;
  private readonly apiVersion: string;
  /** apiVersion of the stored form (differs from apiVersion when the resource shares another's storage). */
  private readonly storageApiVersion: string;
  private readonly hasSchema: boolean;
  private readonly managedFields: ManagedFieldsTracker;
  /** Parsed objects of watch events, shared by every watcher of this resource. */
  private readonly decoded = new WeakMap<StoreEvent, { obj?: KubeObject | Promise<KubeObject>; prev?: KubeObject | Promise<KubeObject> }>();
  /** How a stored value in this resource's own version begins (see encode). */
  private readonly apiVersionHead: string;

  constructor(
    readonly def: ResourceDef,
    readonly strategy: Strategy,
    /** Part-of-object subresources (status, finalize). */
    readonly subresourceStrategies: Record<string, StatusStrategy>,
    private readonly store: Store,
    private readonly watchCache: WatchCache,
    private readonly opts: RegistryOptions,
    /** Conversions between this resource's version and its storage (and other stored) versions. */
    private readonly converter: ObjectConverter = builtinConverter,
  ) {
    this.qr = { group: def.group, resource: def.resource };
    // A resource stored as another (def.storage) shares its keys: one object, two views.
    const storage = def.storage ?? def;
    this.keyPrefix = `/registry/${storage.group || 'core'}/${storage.resource}/`;
    this.apiVersion = groupVersionString(def);
    this.storageApiVersion = groupVersionString(storage);
    this.hasSchema = !!schemaForKind(def.group, def.version, def.kind);
    this.managedFields = new ManagedFieldsTracker(def, this.apiVersion, !!subresourceStrategies.status);
    this.apiVersionHead = `{"apiVersion":${JSON.stringify(this.apiVersion)},`;
  }

  get namespaced(): boolean {
    return this.def.scope === 'Namespaced';
  }

  key(namespace: string, name: string): string {
    return this.namespaced ? `${this.keyPrefix}${namespace}/${name}` : `${this.keyPrefix}${name}`;
  }

  prefix(namespace: string): string {
    return this.namespaced && namespace ? `${this.keyPrefix}${namespace}/` : this.keyPrefix;
  }

  // ---------------------------------------------------------------- reads

  async get(namespace: string, name: string, resourceVersion?: string): Promise<KubeObject> {
    return this.decode(await this.getStored(namespace, name, resourceVersion));
  }

  /**
   * GET as JSON text: the stored value with its resourceVersion spliced in when it reads verbatim
   * (the JSON fast path: no parse, no serialization), else the object as `get` returns it.
   */
  async getJson(namespace: string, name: string, resourceVersion?: string): Promise<{ json: string } | { object: KubeObject }> {
    const kv = await this.getStored(namespace, name, resourceVersion);
    const json = this.readsVerbatim([kv]) ? injectResourceVersion(kv.value, kv.modRevision) : undefined;
    return json !== undefined ? { json } : { object: await this.decode(kv) };
  }

  /** The stored object of a GET: from the watch cache when it may answer (cacheServesGet), else from the store. */
  private async getStored(namespace: string, name: string, resourceVersion: string | undefined): Promise<KeyValue> {
    const atLeast = resourceVersion && resourceVersion !== '0' ? parseResourceVersion(resourceVersion) : undefined;
    if (atLeast !== undefined) await this.waitForResourceVersion(atLeast);
    const key = this.key(namespace, name);
    const kv = this.cacheServesGet(resourceVersion, atLeast) ? this.watchCache.get(key) : await this.store.get(key);
    if (!kv) throw StatusError.notFound(this.qr, name);
    return kv;
  }

  /**
   * Whether the watch cache may answer a GET (ConsistentListFromCache, ready): resourceVersion=0
   * (any recent state, as upstream); a resourceVersion the cache reached (not older than); none
   * (a consistent read) when the cache holds every write the store acknowledged — known without
   * a read only where every write goes through this process's store (SQLite).
   */
  private cacheServesGet(resourceVersion: string | undefined, atLeast: number | undefined): boolean {
    if (!this.opts.consistentListFromCache || !this.watchCache.status().ready) return false;
    if (resourceVersion === '0') return true;
    const needed = atLeast ?? this.store.acknowledgedRevision?.();
    return needed !== undefined && this.watchCache.currentRevision() >= needed;
  }

  /** Whether stored values read as they are (no conversion, no read-time normalization): the list fast paths. */
  private readsVerbatim(values: readonly { value: string }[]): boolean {
    return !this.strategy.onRead && values.every((kv) => kv.value.startsWith(this.apiVersionHead));
  }

  /** A list of the snapshot (`raw`: items are the store's KeyValues, for listJson). */
  async list(namespace: string, opts: ListOptions, raw = false): Promise<ObjectList> {
    const labels = parseLabels(opts.labelSelector);
    const fields = this.parseFields(opts.fieldSelector);
    const filtered = !labels.empty() || !fields.empty();
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const match = opts.resourceVersionMatch ?? '';
    if (match && !opts.resourceVersion) {
      throw StatusError.badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (match && match !== 'Exact' && match !== 'NotOlderThan') {
      throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [FieldError.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', ''])]);
    }
    if (match === 'Exact' && opts.resourceVersion === '0') {
      throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
        FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
      ]);
    }

    const legacyExact = limit > 0 && !match && !!opts.resourceVersion && opts.resourceVersion !== '0';
    let revision: number | undefined;
    let startAfter: string | undefined;
    let snapshotTime = Date.now();
    if (opts.continue) {
      if (opts.resourceVersion && opts.resourceVersion !== '0') {
        throw StatusError.badRequest('specifying resource version is not allowed when using continue');
      }
      const token = this.decodeContinue(opts.continue);
      revision = token.rv;
      startAfter = token.start;
      snapshotTime = token.t;
    } else if (opts.resourceVersion && opts.resourceVersion !== '0') {
      const rv = parseResourceVersion(opts.resourceVersion);
      await this.waitForResourceVersion(rv);
      // A limit with a resourceVersion and no match is upstream's legacy exact read.
      if (match === 'Exact' || legacyExact) revision = rv;
    }

    const prefix = this.prefix(namespace);
    // Upstream's cacher rules: Exact and legacy exact read their snapshot (from the cache only
    // while it holds exactly that one), continuing pages the snapshot of their token; others
    // read the cache once it is provably fresh.
    if (!opts.continue && match !== 'Exact' && !legacyExact) revision = (await this.freshCacheRevision(opts.resourceVersion)) ?? revision;
    const items: KubeObject[] = [];
    let lastKey: string | undefined;
    let more = false;
    let remaining = 0;
    let snapshot = revision;
    try {
      // Read pages of the snapshot until `limit` items pass the filters or it is exhausted:
      // from the watch cache while it holds exactly that snapshot, else from the store.
      for (;;) {
        const pageOpts = { revision: snapshot, startAfter, limit: limit ? (filtered ? Math.max(limit - items.length, 256) : limit - items.length) : 0 };
        const page = this.cacheHolds(snapshot) ? this.watchCache.list(prefix, pageOpts) : await this.store.list(prefix, pageOpts);
        snapshot = page.revision;
        const decoded = raw ? undefined : await this.decodeAll(page.items);
        for (const [i, kv] of page.items.entries()) {
          lastKey = kv.key;
          if (!decoded) {
            items.push(kv as unknown as KubeObject);
            if (limit && items.length >= limit) break;
            continue;
          }
          const obj = decoded[i];
          if (!filtered || this.matches(obj, labels, fields)) {
            items.push(obj);
            if (limit && items.length >= limit) break;
          }
        }
        const consumedPage = lastKey === page.items[page.items.length - 1]?.key;
        remaining = page.remaining + (consumedPage ? 0 : page.items.length - 1 - page.items.findIndex((kv) => kv.key === lastKey));
        if (limit && items.length >= limit) {
          more = remaining > 0;
          break;
        }
        if (page.remaining === 0 || page.items.length === 0) break;
        startAfter = lastKey;
      }
    } catch (err) {
      if (err instanceof CompactedError) {
        if (opts.continue) throw continueExpired();
        throw StatusError.gone(`The resourceVersion for the provided list is too old.`);
      }
      if (err instanceof FutureRevisionError) throw tooLargeResourceVersion(err.requested, err.current);
      throw err;
    }

    const list: ObjectList = {
      apiVersion: this.apiVersion,
      kind: this.def.listKind,
      metadata: { resourceVersion: String(snapshot ?? 0) },
      items,
    };
    if (more && lastKey) {
      list.metadata.continue = encodeContinue({ v: 'meta.orch.io/v1', rv: snapshot!, start: lastKey, t: snapshotTime });
      if (!filtered) list.metadata.remainingItemCount = remaining;
    }
    return list;
  }

  /**
   * The watch cache's revision when it provably holds every write the store acknowledged before
   * this call (upstream ConsistentListFromCache): it reached the store's current revision, or
   * the resourceVersion asked for (NotOlderThan). Undefined: read the store.
   */
  private async freshCacheRevision(resourceVersion: string | undefined): Promise<number | undefined> {
    if (!this.opts.consistentListFromCache || !this.watchCache.status().ready) return undefined;
    const atLeast = resourceVersion && resourceVersion !== '0' ? parseResourceVersion(resourceVersion) : await this.store.currentRevision();
    if (!(await this.watchCache.waitForRevision(atLeast, this.opts.cacheFreshnessWaitMs ?? 250))) return undefined;
    return this.watchCache.currentRevision();
  }

  /** Whether the watch cache holds exactly the snapshot at `revision` (it has applied it and nothing newer). */
  private cacheHolds(revision: number | undefined): boolean {
    return !!this.opts.consistentListFromCache && revision !== undefined && this.watchCache.currentRevision() === revision && this.watchCache.status().ready;
  }

  /**
   * The JSON text of a list without parsing the stored objects (the fast path for plain JSON
   * lists without selectors): each stored value gets its resourceVersion spliced in. Returns
   * undefined when a value is not in the canonical stored form; the caller then uses list().
   */
  async listJson(namespace: string, opts: ListOptions): Promise<string | undefined> {
    if (opts.labelSelector || opts.fieldSelector || this.strategy.onRead) return undefined;
    const page = await this.list(namespace, { ...opts }, true);
    if (!this.readsVerbatim(page.items as unknown as KeyValue[])) return undefined;
    const parts: string[] = [];
    for (const kv of page.items as unknown as KeyValue[]) {
      const json = injectResourceVersion(kv.value, kv.modRevision);
      if (json === undefined) return undefined;
      parts.push(json);
    }
    return `{"apiVersion":${JSON.stringify(page.apiVersion)},"kind":${JSON.stringify(page.kind)},"metadata":${JSON.stringify(page.metadata)},"items":[${parts.join(',')}]}`;
  }

  // ---------------------------------------------------------------- writes

  /**
   * POST: creates the object in the namespace of the URL (rest.BeforeCreate order, STYLE 2).
   * `applied`: the input comes from a server-side apply and already carries its managedFields.
   */
  async create(namespace: string, input: KubeObject, ctx: RequestContext, applied = false): Promise<CreateResult> {
    const obj = deepCopy(input);
    this.checkTypeMeta(obj);
    const meta = obj.metadata;
    this.checkNamespace(meta, namespace);
    await ctx.admission?.mutate('CREATE', obj, undefined);

    const generated = !meta.name && !!meta.generateName;
    for (let attempt = 0; ; attempt++) {
      if (generated) meta.name = generateName(meta.generateName!);
      const attemptObj = attempt === 0 ? obj : deepCopy(obj);
      this.prepareCreate(attemptObj, ctx);
      await ctx.admission?.validate('CREATE', attemptObj, undefined);
      if (!applied) this.managedFields.trackUpdate(undefined, attemptObj, ctx, '');
      const allocation = await this.strategy.allocate?.(attemptObj, undefined, ctx);
      if (ctx.dryRun) {
        if (await this.store.get(this.key(namespace, attemptObj.metadata.name!))) {
          if (generated && attempt < MAX_GENERATE_NAME_ATTEMPTS) continue;
          throw StatusError.alreadyExists(this.qr, attemptObj.metadata.name!);
        }
        return { object: attemptObj };
      }
      let revision: number;
      const stored = await this.encode(attemptObj);
      try {
        revision = (await this.store.create(this.key(namespace, attemptObj.metadata.name!), stored)).modRevision;
      } catch (err) {
        await allocation?.revert();
        if (err instanceof KeyExistsError) {
          if (generated && attempt < MAX_GENERATE_NAME_ATTEMPTS) continue;
          throw StatusError.alreadyExists(this.qr, attemptObj.metadata.name!);
        }
        throw err;
      }
      await allocation?.commit();
      return { object: await this.withRevision(attemptObj, revision), json: this.servedJson(stored, revision) };
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
    if (!this.namespaced) delete meta.namespace;
    if ('spec' in obj) meta.generation = 1;
    else delete meta.generation;
    this.applyDefaults(obj, 'create');
    this.strategy.prepareForCreate?.(obj, ctx);
    this.omitEmptyFields(obj);
    const errs = [...(this.strategy.validate?.(obj, ctx) ?? []), ...validateObjectMeta(meta, this.namespaced, this.strategy.nameRule)];
    if (errs.length > 0) throw StatusError.invalid(obj.kind, this.def.group, meta.name ?? meta.generateName ?? '', errs);
    this.strategy.canonicalize?.(obj);
  }

  /**
   * PUT: replaces the object (or its status). Creates it when absent and the strategy allows.
   * A stale metadata.resourceVersion is a 409 Conflict (optimistic concurrency, STYLE 5).
   */
  async update(namespace: string, name: string, input: KubeObject, ctx: RequestContext, subresource = ''): Promise<UpdateResult> {
    this.checkTypeMeta(input);
    this.checkNamespace(input.metadata, namespace);
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
    const key = this.key(namespace, name);
    const retries = this.conflictRetries(name);
    for (;; await retries.next()) {
      // A stale read only costs a conflict and a retry: the write below is conditional on its revision.
      const kv = this.cacheServesGet(undefined, undefined) ? this.watchCache.get(key) : await this.store.get(key);
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
        if (isPut && !subresource && this.strategy.allowCreateOnUpdate) {
          const obj = compute({} as KubeObject);
          return { ...(await this.create(namespace, obj, ctx)), created: true };
        }
        throw StatusError.notFound(this.qr, name);
      }
      const old = await this.decode(kv);
      checkIfMatch(ctx, old, this.qr);
      let obj = compute(deepCopy(old));
      if (!isPut) {
        this.checkTypeMeta(obj);
        if (obj.metadata?.name !== name) {
          throw StatusError.badRequest(`the name of the object (${obj.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
        }
        this.checkNamespace(obj.metadata, namespace);
      }
      // A patch is conditional only when it sets metadata.resourceVersion itself (the patched
      // copy otherwise carries the version it was read at): unconditional patches retry.
      const patchedRv = isPut ? undefined : obj.metadata.resourceVersion;
      const wantRv = expectedRv ?? (patchedRv !== undefined && patchedRv !== old.metadata.resourceVersion ? patchedRv : undefined);
      if (wantRv !== undefined && wantRv !== old.metadata.resourceVersion) {
        throw StatusError.conflict(this.qr, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      if (isPut && wantRv === undefined && !this.strategy.allowUnconditionalUpdate) {
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
      const finalizersLeft = (meta.finalizers ?? []).length > 0 || !!this.strategy.holdsDeletion?.(obj);
      const removes = !!meta.deletionTimestamp && !finalizersLeft && (meta.deletionGracePeriodSeconds ?? 0) === 0;
      const allocation = subresource || removes ? undefined : await this.strategy.allocate?.(obj, old, ctx);
      if (ctx.dryRun) return { object: obj, created: false };
      let revision: number;
      const stored = removes ? undefined : await this.encode(obj);
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
      if (removes) await this.strategy.release?.(obj);
      else await allocation?.commit();
      return { object: await this.withRevision(obj, revision), json: stored === undefined ? undefined : this.servedJson(stored, revision), created: false };
    }
  }

  /** A stored text as this resource serves it at `revision`, when the storage version is the served one (else undefined). */
  private servedJson(stored: string, revision: number): string | undefined {
    return this.storageApiVersion === this.apiVersion ? injectResourceVersion(stored, revision) : undefined;
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
    if (!this.namespaced) delete meta.namespace;
    if (oldMeta.generateName && meta.generateName === undefined) meta.generateName = oldMeta.generateName;

    this.applyDefaults(obj, 'update');
    if (subresource) {
      const sub = this.subresourceStrategies[subresource];
      if (!sub) throw StatusError.notFound(this.qr, `${oldMeta.name}/${subresource}`);
      sub.prepareForUpdate(obj, old);
      this.omitEmptyFields(obj);
      const errs = sub.validateUpdate?.(obj, old) ?? [];
      if (errs.length) throw StatusError.invalid(old.kind, this.def.group, oldMeta.name!, errs);
    } else {
      const hasStatus = !!this.subresourceStrategies.status;
      if (hasStatus && 'status' in old) (obj as Record<string, unknown>).status = (old as Record<string, unknown>).status;
      else if (hasStatus) delete (obj as Record<string, unknown>).status;
      this.strategy.prepareForUpdate?.(obj, old, ctx);
      this.omitEmptyFields(obj);
      const errs = [
        ...(this.strategy.validateUpdate?.(obj, old, ctx) ?? []),
        ...validateObjectMeta(meta, this.namespaced, this.strategy.nameRule),
        ...validateObjectMetaUpdate(meta, oldMeta),
      ];
      if (errs.length) throw StatusError.invalid(old.kind, this.def.group, oldMeta.name!, errs);
    }
    if (oldMeta.generation !== undefined || 'spec' in obj) {
      const bump = specPart(obj) !== specPart(old);
      meta.generation = (oldMeta.generation ?? 1) + (bump ? 1 : 0);
    }
    this.strategy.canonicalize?.(obj);
    return obj;
  }

  /**
   * DELETE (SPEC "Object deletion"): preconditions, propagation finalizers, graceful
   * deletion; the object is removed at once only when nothing holds it.
   */
  async delete(namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    validateDeleteOptions(options);
    const retries = this.conflictRetries(name);
    for (;; await retries.next()) {
      const kv = await this.store.get(key);
      if (!kv) throw StatusError.notFound(this.qr, name);
      const current = await this.decode(kv);
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
        for (const f of this.strategy.finalizersOnDelete?.(current) ?? []) finalizers.add(f);
        if (policy === 'Orphan') finalizers.add(DELETE_FINALIZERS.orphan);
        if (policy === 'Foreground') finalizers.add(DELETE_FINALIZERS.foreground);
      } else if (policy === 'Orphan' || policy === 'Foreground') {
        // A later delete may switch the propagation of a deleting object.
        finalizers.delete(policy === 'Orphan' ? DELETE_FINALIZERS.foreground : DELETE_FINALIZERS.orphan);
        finalizers.add(policy === 'Orphan' ? DELETE_FINALIZERS.orphan : DELETE_FINALIZERS.foreground);
      }
      const grace = this.strategy.gracePeriodSeconds?.(current, options);
      const alreadyDeleting = !!meta.deletionTimestamp;
      const pendingGrace = grace !== undefined && grace > 0;

      if (finalizers.size === 0 && !pendingGrace && !this.strategy.holdsDeletion?.(obj)) {
        if (ctx.dryRun) return { object: current, deleted: true };
        let revision: number;
        try {
          revision = (await this.store.delete(key, kv.modRevision)).revision;
        } catch (err) {
          if (err instanceof RevisionConflictError) continue;
          if (err instanceof KeyNotFoundError) throw StatusError.notFound(this.qr, name);
          throw err;
        }
        await this.strategy.release?.(current);
        return { object: await this.withRevision(current, revision), deleted: true };
      }

      // Mark for deletion: finalizers and/or grace period hold the object.
      meta.finalizers = finalizers.size ? [...finalizers] : undefined;
      if (!meta.finalizers) delete meta.finalizers;
      const now = Date.now();
      if (!alreadyDeleting) {
        meta.deletionTimestamp = nowTime(new Date(now + (pendingGrace ? grace! * 1000 : 0)));
        meta.deletionGracePeriodSeconds = pendingGrace ? grace! : 0;
        this.strategy.beforeDelete?.(obj);
      } else if (grace !== undefined && grace < (meta.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period shortens a pending graceful deletion.
        meta.deletionTimestamp = nowTime(new Date(now + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
      }
      if (sameJson(obj, current)) return { object: current, deleted: false };
      if (ctx.dryRun) return { object: obj, deleted: false };
      try {
        const written = await this.store.update(key, await this.encode(obj), kv.modRevision);
        return { object: await this.withRevision(obj, written.modRevision), deleted: false };
      } catch (err) {
        if (err instanceof RevisionConflictError) continue;
        if (err instanceof KeyNotFoundError) throw StatusError.notFound(this.qr, name);
        throw err;
      }
    }
  }

  /** DELETE on a collection: deletes every object the selectors match; returns them as a list. */
  async deleteCollection(namespace: string, listOpts: ListOptions, options: DeleteOptions, ctx: RequestContext): Promise<ObjectList> {
    const list = await this.list(namespace, { labelSelector: listOpts.labelSelector, fieldSelector: listOpts.fieldSelector });
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

  // ---------------------------------------------------------------- watch

  /**
   * Starts a watch (SPEC Events). Without a resourceVersion (or "0") the current objects
   * come first as ADDED events. Errors before the first event are thrown as StatusError;
   * history lost later arrives as an ERROR event with a 410 Status, then the sink ends.
   */
  async watch(namespace: string, opts: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    const labels = parseLabels(opts.labelSelector);
    const fields = this.parseFields(opts.fieldSelector);
    const filtered = !labels.empty() || !fields.empty();
    const prefix = this.prefix(namespace);
    const rvParam = opts.resourceVersion ?? '';
    if (opts.sendInitialEvents !== undefined) {
      if (!this.opts.watchListEnabled) {
        throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
          FieldError.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'),
        ]);
      }
      if (opts.resourceVersionMatch !== 'NotOlderThan') {
        throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
          FieldError.forbidden('resourceVersionMatch', "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ]);
      }
    } else if (opts.resourceVersionMatch) {
      throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
        FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      ]);
    }
    const initialEvents = opts.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
    let from: number;
    const initial: KubeObject[] = [];
    if (initialEvents) {
      if (rvParam && rvParam !== '0') await this.waitForResourceVersion(parseResourceVersion(rvParam));
      const snapshot = await this.list(namespace, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
      from = Number(snapshot.metadata.resourceVersion);
      initial.push(...snapshot.items);
      // The cache may not have reached the snapshot yet; events up to it are in the list.
      await this.watchCache.waitForRevision(from, this.opts.tooLargeResourceVersionWaitMs);
    } else {
      from = parseResourceVersion(rvParam);
      if (from > this.watchCache.currentRevision()) {
        const ok = await this.watchCache.waitForRevision(from, this.opts.tooLargeResourceVersionWaitMs);
        if (!ok) throw tooLargeResourceVersion(from, this.watchCache.currentRevision());
      }
    }

    let ended = false;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    // Events whose objects need an asynchronous conversion (a conversion webhook) are sent in
    // order through this chain; while it holds any, later events queue behind them.
    let chain: Promise<void> = Promise.resolve();
    let queued = 0;
    const end = () => {
      if (ended) return;
      ended = true;
      subscription?.unsubscribe();
      clearInterval(bookmarkTimer);
      sink.end();
    };
    for (const obj of initial) sink.send({ type: 'ADDED', object: obj });
    if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
      sink.send(this.bookmark(from, true));
    }
    let subscription: Subscription | undefined = undefined;
    // History lost (too old, or the cache reset) arrives as onError: upstream sends the 410 as
    // an ERROR event of a successful watch response, and the client relists.
    subscription = this.watchCache.subscribe(prefix, from, {
      onEvent: (event) => {
        // Events up to the start revision are in the initial list already (the cache may lag it).
        if (ended || event.revision <= from) return;
        const out = this.toWatchEvent(event, filtered, labels, fields);
        if (!(out instanceof Promise) && queued === 0) {
          if (out) sink.send(out);
          return;
        }
        queued++;
        chain = chain
          .then(async () => {
            const ev = await out;
            if (!ended && ev) sink.send(ev);
          })
          .catch((err: unknown) => {
            if (ended) return;
            const status = err instanceof StatusError ? err : StatusError.internal((err as Error).message);
            sink.send({ type: 'ERROR', object: status.toStatus() as unknown as Record<string, unknown> });
            end();
          })
          .finally(() => queued--);
      },
      onError: (err) => {
        if (ended) return;
        sink.send({ type: 'ERROR', object: StatusError.gone(err.message).toStatus() as unknown as Record<string, unknown> });
        end();
      },
    });
    if (opts.allowWatchBookmarks) {
      // Only a revision this watcher has been handed every event up to.
      bookmarkTimer = setInterval(() => {
        // A bookmark never overtakes events still being converted.
        if (!ended && subscription && queued === 0) sink.send(this.bookmark(Math.max(from, subscription.progress()), false));
      }, this.opts.bookmarkIntervalMs);
      bookmarkTimer.unref?.();
    }
    return { stop: end };
  }

  private bookmark(revision: number, initialEventsEnd: boolean): WatchEventOut {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' };
    return { type: 'BOOKMARK', object: { kind: this.def.kind, apiVersion: this.apiVersion, metadata } };
  }

  /** The watch event of a store event for one watcher (a promise when its objects need an asynchronous conversion). */
  private toWatchEvent(event: StoreEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): WatchEventOut | undefined | Promise<WatchEventOut | undefined> {
    // The previous state is needed for deletions, and for filtered watchers to see objects leave the selection.
    const obj = event.type === 'delete' ? undefined : this.eventObject(event, false);
    const prev = event.type === 'delete' || (filtered && event.type !== 'create') ? this.eventObject(event, true) : undefined;
    if (obj instanceof Promise || prev instanceof Promise) return Promise.all([obj, prev]).then(([o, p]) => this.selectEvent(event, { obj: o, prev: p }, filtered, labels, fields));
    return this.selectEvent(event, { obj, prev }, filtered, labels, fields);
  }

  /**
   * The new (or, `previous`, the old) object of a store event in this resource's version,
   * decoded once for every watcher of this resource (a promise while it is being converted).
   * A deleted object is reported with the revision of its deletion.
   */
  private eventObject(event: StoreEvent, previous: boolean): KubeObject | Promise<KubeObject> | undefined {
    const value = previous ? event.prevValue : event.value;
    if (value === undefined) return undefined;
    let cached = this.decoded.get(event);
    if (!cached) this.decoded.set(event, (cached = {}));
    const have = previous ? cached.prev : cached.obj;
    if (have) return have;
    const parsed = this.parse(value, event.revision);
    let out: KubeObject | Promise<KubeObject>;
    if (parsed.apiVersion === this.apiVersion) {
      this.strategy.onRead?.(parsed);
      out = parsed;
    } else {
      out = this.served([parsed]).then((objs) => objs[0]);
    }
    if (previous) cached.prev = out;
    else cached.obj = out;
    return out;
  }

  private selectEvent(event: StoreEvent, d: DecodedEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): WatchEventOut | undefined {
    if (event.type === 'delete') {
      const prev = d.prev!;
      return !filtered || this.matches(prev, labels, fields) ? { type: 'DELETED', object: prev } : undefined;
    }
    const obj = d.obj!;
    if (!filtered) return { type: event.type === 'create' ? 'ADDED' : 'MODIFIED', object: obj };
    const now = this.matches(obj, labels, fields);
    if (event.type === 'create') return now ? { type: 'ADDED', object: obj } : undefined;
    const before = d.prev ? this.matches(d.prev, labels, fields) : false;
    if (now && before) return { type: 'MODIFIED', object: obj };
    if (now) return { type: 'ADDED', object: obj };
    // Leaving the selection is a DELETED to this watcher (with the new state).
    if (before) return { type: 'DELETED', object: obj };
    return undefined;
  }

  // ---------------------------------------------------------------- helpers

  /** Schema defaults of built-in kinds (SPEC Versioning defaults); custom kinds have none here. */
  private applyDefaults(obj: KubeObject, operation: 'create' | 'update'): void {
    if (this.hasSchema) applyDefaults(obj, this.def.group, this.def.version, this.def.kind, { operation });
  }

  /**
   * Built-in kinds are stored as Go's JSON encoding would write them: without the empty values
   * of `omitempty` fields, whatever the request's format spelled out (protobuf bodies carry
   * `stdin: false`); so equal objects compare equal (a rollout undo finds its ReplicaSet).
   */
  private omitEmptyFields(obj: KubeObject): void {
    if (this.hasSchema) omitEmptyFields(obj as unknown as Record<string, unknown>, this.def.group, this.def.version, this.def.kind);
  }

  /** Fields a field selector may use on this resource. */
  fieldAttributes(obj: KubeObject): Record<string, string> {
    const attrs: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
    if (this.namespaced) attrs['metadata.namespace'] = obj.metadata.namespace ?? '';
    return { ...attrs, ...(this.strategy.fieldAttributes?.(obj) ?? {}) };
  }

  private parseFields(selector: string | undefined): FieldSelector {
    const fields = parseFieldSelector(selector ?? '');
    fields.checkSupported(this.allowedFieldNames());
    return fields;
  }

  private allowedFieldNames(): Set<string> {
    const probe = { apiVersion: this.apiVersion, kind: this.def.kind, metadata: {} } as KubeObject;
    return new Set(Object.keys(this.fieldAttributes(probe)));
  }

  private matches(obj: KubeObject, labels: LabelSelector, fields: FieldSelector): boolean {
    return labels.matches(obj.metadata.labels ?? {}) && (fields.empty() || fields.matches(this.fieldAttributes(obj)));
  }

  private checkTypeMeta(obj: KubeObject): void {
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw StatusError.badRequest('the body of the request must be an object');
    if (obj.metadata === undefined || obj.metadata === null) (obj as { metadata: object }).metadata = {};
    if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
      throw StatusError.badRequest(`json: cannot unmarshal ${Array.isArray(obj.metadata) ? 'array' : typeof obj.metadata} into Go struct field ${this.def.kind}.metadata of type v1.ObjectMeta`);
    }
    if (obj.kind !== undefined && obj.kind !== this.def.kind) {
      throw StatusError.badRequest(`the kind of the object (${obj.kind}) does not match the kind of the resource (${this.def.kind})`);
    }
    obj.kind = this.def.kind;
    obj.apiVersion = this.apiVersion;
  }

  private checkNamespace(meta: KubeObject['metadata'], namespace: string): void {
    if (!this.namespaced) return;
    if (meta.namespace && meta.namespace !== namespace) {
      throw StatusError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  }

  private decodeContinue(token: string): ContinueToken {
    let parsed: ContinueToken;
    try {
      parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
    } catch {
      throw StatusError.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
    }
    if (parsed?.v !== 'meta.orch.io/v1' || !Number.isInteger(parsed.rv) || parsed.rv <= 0 || typeof parsed.start !== 'string' || !parsed.start.startsWith(this.keyPrefix)) {
      throw StatusError.badRequest('continue key is not valid: the token does not belong to this resource or is malformed');
    }
    if (Date.now() - (parsed.t ?? 0) > this.opts.continueTokenLifetimeMs) throw continueExpired();
    return parsed;
  }

  private async waitForResourceVersion(rv: number): Promise<void> {
    const current = await this.store.currentRevision();
    if (rv <= current) return;
    const ok = await this.watchCache.waitForRevision(rv, this.opts.tooLargeResourceVersionWaitMs);
    if (!ok) throw tooLargeResourceVersion(rv, current);
  }

  /**
   * `object` (of this resource, or of one stored as the same objects) in `toApiVersion`, a
   * version of this resource's storage family: for admission hooks that match another version
   * (matchPolicy Equivalent). The input is not modified. A conversion that does not exist is a
   * 500, as upstream's "unable to convert".
   */
  async convertTo(object: KubeObject, toApiVersion: string): Promise<KubeObject> {
    if (object.apiVersion === toApiVersion) return object;
    let out: KubeObject;
    try {
      [out] = await this.converter.convert([structuredClone(object)], toApiVersion);
    } catch (err) {
      if (err instanceof ConversionError) throw StatusError.internal(err.message);
      throw err;
    }
    if (toApiVersion === this.apiVersion) this.strategy.afterConversion?.(out);
    return out;
  }

  private async decode(kv: KeyValue): Promise<KubeObject> {
    return (await this.decodeAll([kv]))[0];
  }

  /**
   * A stored object as this resource serves it, without waiting: for in-gateway caches of
   * built-in resources. Throws when the object needs a conversion that calls out (a webhook).
   */
  decodeSync(kv: KeyValue): KubeObject {
    let obj = this.parse(kv.value, kv.modRevision);
    if (obj.apiVersion !== this.apiVersion) {
      if (!this.converter.convertSync) throw new Error(`${obj.apiVersion} ${obj.kind} needs an asynchronous conversion to ${this.apiVersion}`);
      obj = this.converter.convertSync(obj, this.apiVersion);
      this.strategy.afterConversion?.(obj);
    }
    this.strategy.onRead?.(obj);
    return obj;
  }

  /** Stored objects as this resource serves them: in its version, normalized by the strategy (onRead). */
  private async decodeAll(kvs: readonly KeyValue[]): Promise<KubeObject[]> {
    return this.served(kvs.map((kv) => this.parse(kv.value, kv.modRevision)));
  }

  /** A stored value parsed, with its resourceVersion (still in the version it was stored in). */
  private parse(value: string, revision: number): KubeObject {
    const obj = JSON.parse(value) as KubeObject;
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }

  /** Objects converted to this resource's version (where they are in another) and normalized (afterConversion, onRead). */
  private async served(objs: KubeObject[]): Promise<KubeObject[]> {
    let out = objs;
    if (!objs.every((o) => o.apiVersion === this.apiVersion)) {
      out = await this.converter.convert(objs, this.apiVersion);
      if (this.strategy.afterConversion) out.forEach((o, i) => objs[i].apiVersion !== this.apiVersion && this.strategy.afterConversion!(o));
    }
    if (this.strategy.onRead) for (const o of out) this.strategy.onRead(o);
    return out;
  }

  /**
   * Stored form, in the storage version: apiVersion, kind and metadata first (so listJson can
   * splice resourceVersion in without parsing), resourceVersion left out (it is the store
   * revision). An object that cannot be converted to the storage version is a 400.
   */
  private async encode(input: KubeObject): Promise<string> {
    let obj = input;
    try {
      if (input.apiVersion !== this.storageApiVersion) obj = (await this.converter.convert([input], this.storageApiVersion))[0];
    } catch (err) {
      if (err instanceof ConversionError) throw StatusError.badRequest(err.message);
      throw err;
    }
    const { apiVersion, kind, metadata, ...rest } = obj;
    const { resourceVersion: _rv, ...meta } = metadata;
    return JSON.stringify({ apiVersion, kind, metadata: meta, ...rest });
  }

  /** The written object as readers will see it (through the storage version when it differs), at `revision`. */
  private async withRevision(written: KubeObject, revision: number): Promise<KubeObject> {
    let obj = written;
    if (this.storageApiVersion !== this.apiVersion) {
      const [stored] = await this.converter.convert([written], this.storageApiVersion);
      [obj] = await this.converter.convert([stored], this.apiVersion);
    }
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }
}

/** The objects of one store event, as one resource serves them. */
interface DecodedEvent {
  obj?: KubeObject;
  prev?: KubeObject;
}

const METADATA_HEAD = '"metadata":{';

/**
 * Splices `"resourceVersion":"<rev>"` into a stored object's metadata. Stored objects begin
 * with apiVersion and kind (validated strings) and then metadata, so the first `"metadata":{`
 * is the top-level one. Undefined when the value does not have that shape.
 */
export function injectResourceVersion(json: string, revision: number): string | undefined {
  if (!json.startsWith('{"apiVersion":"')) return undefined;
  const at = json.indexOf(METADATA_HEAD);
  if (at < 0 || at > 512) return undefined;
  const insertAt = at + METADATA_HEAD.length;
  const rv = `"resourceVersion":"${revision}"`;
  return json.charCodeAt(insertAt) === 125 /* } */ ? `${json.slice(0, insertAt)}${rv}${json.slice(insertAt)}` : `${json.slice(0, insertAt)}${rv},${json.slice(insertAt)}`;
}

/** The If-Match precondition (RequestContext.ifMatchResourceVersion) against the stored object. */
function checkIfMatch(ctx: RequestContext, current: KubeObject, qr: QualifiedResource): void {
  const want = ctx.ifMatchResourceVersion;
  if (want !== undefined && want !== '*' && want !== current.metadata.resourceVersion) {
    throw StatusError.conflict(qr, current.metadata.name ?? '', `Precondition failed: If-Match resourceVersion ${want}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
  }
}

function parseLabels(selector: string | undefined): LabelSelector {
  return parseLabelSelector(selector ?? '');
}

/** resourceVersion is opaque to clients but ours are decimal revisions. */
export function parseResourceVersion(rv: string, field = 'resourceVersion'): number {
  if (!/^\d+$/.test(rv) || rv.length > 19) {
    throw StatusError.badRequest(`invalid ${field}: ${JSON.stringify(rv)}: must be a resourceVersion returned by the server`);
  }
  return Number(rv);
}

function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return StatusError.timeout(`Too large resource version: ${requested}, current: ${current}`, 1);
}

function continueExpired(): StatusError {
  return StatusError.gone(
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64');
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
