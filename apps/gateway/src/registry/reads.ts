import { FieldError, StatusError, type KubeObject } from '@orch/apimachinery';
import { CompactedError, FutureRevisionError, type KeyValue, type Store } from '@orch/storage';
import type { WatchCache } from '@orch/watch';
import { injectResourceVersion, parseLabels, type StoredObjects } from './stored-objects';
import type { ListOptions, ObjectList, RegistryOptions } from './store-types';

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
  /** When the snapshot was first read (ms since epoch). */
  t: number;
}

/**
 * The reads of one resource (SPEC "Resource versions", "Lists"): GETs and lists from the store,
 * or from the watch cache when it provably holds what the read must see; list pages with
 * continue tokens, resourceVersion and resourceVersionMatch semantics as upstream.
 */
export class ResourceReader {
  constructor(
    private readonly objects: StoredObjects,
    private readonly store: Store,
    private readonly watchCache: WatchCache,
    private readonly opts: RegistryOptions,
  ) {}


  async get(namespace: string, name: string, resourceVersion?: string): Promise<KubeObject> {
    return this.objects.decode(await this.getStored(namespace, name, resourceVersion));
  }

  /**
   * GET as JSON text: the stored value with its resourceVersion spliced in when it reads verbatim
   * (the JSON fast path: no parse, no serialization), else the object as `get` returns it.
   * Answered without a promise when the watch cache holds the object and the read waits for
   * nothing (cachedNow); a failure is always a rejected promise.
   */
  getJson(namespace: string, name: string, resourceVersion?: string): Promise<{ json: string } | { object: KubeObject }> | { json: string } {
    const kv = this.cachedNow(namespace, name, resourceVersion);
    if (kv && this.objects.readsVerbatim([kv])) {
      const json = injectResourceVersion(kv.value, kv.modRevision);
      if (json !== undefined) return { json };
    }
    return this.getJsonLater(namespace, name, resourceVersion);
  }

  private async getJsonLater(namespace: string, name: string, resourceVersion?: string): Promise<{ json: string } | { object: KubeObject }> {
    const got = await this.getVerbatimLater(namespace, name, resourceVersion);
    if ('object' in got) return got;
    const json = injectResourceVersion(got.stored.value, got.stored.modRevision);
    return json !== undefined ? { json } : { object: await this.objects.decode(got.stored) };
  }

  /**
   * GET of the stored value itself when it reads verbatim (the fast paths of JSON and protobuf:
   * the value, parsed with its modRevision as resourceVersion, is the object `get` returns),
   * else the object as `get` returns it. Without a promise as getJson.
   */
  getVerbatim(namespace: string, name: string, resourceVersion?: string): Promise<{ stored: KeyValue } | { object: KubeObject }> | { stored: KeyValue } {
    const kv = this.cachedNow(namespace, name, resourceVersion);
    if (kv && this.objects.readsVerbatim([kv])) return { stored: kv };
    return this.getVerbatimLater(namespace, name, resourceVersion);
  }

  private async getVerbatimLater(namespace: string, name: string, resourceVersion?: string): Promise<{ stored: KeyValue } | { object: KubeObject }> {
    const kv = await this.getStored(namespace, name, resourceVersion);
    return this.objects.readsVerbatim([kv]) ? { stored: kv } : { object: await this.objects.decode(kv) };
  }

  /**
   * What getStored would answer from the watch cache, at once: the cached object when the cache
   * may answer (cacheServesGet) a read that waits for no resourceVersion; undefined otherwise,
   * when the object is absent and when asking throws (a closed store): getStored answers those,
   * failing as a promise.
   */
  private cachedNow(namespace: string, name: string, resourceVersion: string | undefined): KeyValue | undefined {
    if (resourceVersion && resourceVersion !== '0') return undefined;
    try {
      return this.cacheServesGet(resourceVersion, undefined) ? this.watchCache.get(this.objects.key(namespace, name)) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The stored object of a GET: from the watch cache when it may answer (cacheServesGet), else from the store. */
  async getStored(namespace: string, name: string, resourceVersion: string | undefined): Promise<KeyValue> {
    const atLeast = resourceVersion && resourceVersion !== '0' ? parseResourceVersion(resourceVersion) : undefined;
    if (atLeast !== undefined) await this.waitForResourceVersion(atLeast);
    const key = this.objects.key(namespace, name);
    const kv = this.cacheServesGet(resourceVersion, atLeast) ? this.watchCache.get(key) : await this.store.get(key);
    if (!kv) throw StatusError.notFound(this.objects.qr, name);
    return kv;
  }

  /**
   * Whether the watch cache may answer a GET (ConsistentListFromCache, ready): resourceVersion=0
   * (any recent state, as upstream); a resourceVersion the cache reached (not older than); none
   * (a consistent read) when the cache holds every write the store acknowledged — known without
   * a read only where every write goes through this process's store (SQLite).
   */
  cacheServesGet(resourceVersion: string | undefined, atLeast: number | undefined): boolean {
    if (!this.opts.consistentListFromCache || !this.watchCache.status().ready) return false;
    if (resourceVersion === '0') return true;
    const needed = atLeast ?? this.store.acknowledgedRevision?.();
    return needed !== undefined && this.watchCache.currentRevision() >= needed;
  }


  /** A list of the snapshot (`raw`: items are the store's KeyValues, for listVerbatim). */
  async list(namespace: string, opts: ListOptions, raw = false): Promise<ObjectList> {
    const labels = parseLabels(opts.labelSelector);
    const fields = this.objects.parseFields(opts.fieldSelector);
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

    const prefix = this.objects.prefix(namespace);
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
        const decoded = raw ? undefined : await this.objects.decodeAll(page.items);
        for (const [i, kv] of page.items.entries()) {
          lastKey = kv.key;
          if (!decoded) {
            items.push(kv as unknown as KubeObject);
            if (limit && items.length >= limit) break;
            continue;
          }
          const obj = decoded[i];
          if (!filtered || this.objects.matches(obj, labels, fields)) {
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
      apiVersion: this.objects.apiVersion,
      kind: this.objects.def.listKind,
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
   * A list page of the stored values themselves, for lists without selectors whose values all
   * read verbatim (the fast paths of JSON and protobuf, written from the stored texts or their
   * messages encoded once; see getVerbatim), else undefined: the caller uses list().
   */
  async listVerbatim(namespace: string, opts: ListOptions): Promise<(Omit<ObjectList, 'items'> & { items: KeyValue[] }) | undefined> {
    if (opts.labelSelector || opts.fieldSelector || this.objects.kind.strategy.onRead) return undefined;
    const page = await this.list(namespace, { ...opts }, true);
    const items = page.items as unknown as KeyValue[];
    return this.objects.readsVerbatim(items) ? { ...page, items } : undefined;
  }

  private decodeContinue(token: string): ContinueToken {
    let parsed: ContinueToken;
    try {
      parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
    } catch {
      throw StatusError.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
    }
    if (parsed?.v !== 'meta.orch.io/v1' || !Number.isInteger(parsed.rv) || parsed.rv <= 0 || typeof parsed.start !== 'string' || !parsed.start.startsWith(this.objects.keyPrefix)) {
      throw StatusError.badRequest('continue key is not valid: the token does not belong to this resource or is malformed');
    }
    if (Date.now() - (parsed.t ?? 0) > this.opts.continueTokenLifetimeMs) throw continueExpired();
    return parsed;
  }

  async waitForResourceVersion(rv: number): Promise<void> {
    const current = await this.store.currentRevision();
    if (rv <= current) return;
    const ok = await this.watchCache.waitForRevision(rv, this.opts.tooLargeResourceVersionWaitMs);
    if (!ok) throw tooLargeResourceVersion(rv, current);
  }

}

/** resourceVersion is opaque to clients but ours are decimal revisions. */
export function parseResourceVersion(rv: string, field = 'resourceVersion'): number {
  if (!/^\d+$/.test(rv) || rv.length > 19) {
    throw StatusError.badRequest(`invalid ${field}: ${JSON.stringify(rv)}: must be a resourceVersion returned by the server`);
  }
  return Number(rv);
}

export function tooLargeResourceVersion(requested: number, current: number): StatusError {
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
