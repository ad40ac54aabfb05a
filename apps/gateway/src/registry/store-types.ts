import { convertObject } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { ConflictRetryPolicy } from './conflict-retries';
import type { StoredText } from './stored-text';

// What the generic store takes and gives: lists, list and watch options, watch events and
// sinks, write results, conversions (generic-store.ts re-exports them).

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

/** A watch event: its object, or (for sinks that take JSON text) its object's JSON text. */
export type WatchEventOut = ObjectWatchEvent | TextWatchEvent;

export interface ObjectWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | Record<string, unknown>;
  json?: never;
}

/**
 * An event whose object is the stored text as the resource serves it (no parse), the same
 * StoredText for every watcher sent the event; its JSON is byte for byte the object's.
 */
export interface TextWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  json: StoredText;
  object?: never;
}

/** Where a watch writes its events. `end` is called at most once. */
export interface WatchSink {
  send(event: WatchEventOut): void;
  end(): void;
  /**
   * The sink writes events as JSON in the resource's own group (a plain JSON watch): it takes
   * TextWatchEvents, which watches send whenever the object reads as stored.
   */
  readonly acceptsText?: boolean;
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
