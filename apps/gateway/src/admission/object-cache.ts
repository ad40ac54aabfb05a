import type { KubeObject } from '@orch/apimachinery';
import type { KeyValue, StoreEvent } from '@orch/storage';
import type { Subscription, WatchCache } from '@orch/watch';

/** What the cache needs of a resource's registry: its key layout and decoding. */
export interface CachedResource {
  prefix(namespace: string): string;
  key(namespace: string, name: string): string;
  decodeSync(kv: KeyValue): KubeObject;
}

const RESYNC_DELAY_MS = 100;
const RESYNC_MAX_DELAY_MS = 5_000;

/**
 * The objects of one resource as this gateway replica's watch cache has them, decoded once
 * and kept current from the cache's events (an informer inside the gateway). Every replica
 * follows the same feed, so a change is seen by all of them within the watch delay.
 *
 * Contract: `get` and `list` answer from memory and never block; they may lag the store by
 * the watch delay (callers needing the store's latest state read the registry). Cached
 * objects are frozen: never mutate them. `onChange` listeners run after each applied change.
 * A lost subscription (watch cache reset) relists with backoff; the cache stays usable
 * meanwhile, with its last contents.
 */
export class ObjectCache<T extends KubeObject = KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly listeners = new Set<() => void>();
  private subscription?: Subscription;
  private retry?: NodeJS.Timeout;
  private retryDelayMs = RESYNC_DELAY_MS;
  private stopped = false;
  /** Bumped on every change: callers memoize derived state (compiled expressions) on it. */
  generation = 0;

  constructor(
    private readonly watchCache: WatchCache,
    private readonly resource: CachedResource,
  ) {
    this.sync();
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects.get(this.resource.key(namespace, name));
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.objects.values()];
    const prefix = this.resource.prefix(namespace);
    const out: T[] = [];
    for (const [key, obj] of this.objects) if (key.startsWith(prefix)) out.push(obj);
    return out;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.subscription?.unsubscribe();
  }

  private sync(): void {
    if (this.stopped) return;
    const prefix = this.resource.prefix('');
    const { items, revision } = this.watchCache.list(prefix);
    this.objects.clear();
    for (const kv of items) this.put(kv.key, kv.value, kv.modRevision);
    this.changed();
    this.subscription = this.watchCache.subscribe(prefix, revision, {
      onEvent: (e) => this.apply(e),
      onError: () => {
        this.subscription = undefined;
        this.retry = setTimeout(() => this.sync(), this.retryDelayMs);
        this.retry.unref?.();
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, RESYNC_MAX_DELAY_MS);
      },
    });
  }

  private apply(e: StoreEvent): void {
    this.retryDelayMs = RESYNC_DELAY_MS;
    if (e.type === 'delete') this.objects.delete(e.key);
    else if (e.value !== undefined) this.put(e.key, e.value, e.revision);
    this.changed();
  }

  private put(key: string, value: string, revision: number): void {
    try {
      this.objects.set(key, deepFreeze(this.resource.decodeSync({ key, value, createRevision: 0, modRevision: revision }) as T));
    } catch {
      // An object the registry cannot decode (a version no longer served) is left out.
      this.objects.delete(key);
    }
  }

  private changed(): void {
    this.generation++;
    for (const l of this.listeners) l();
  }
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}
