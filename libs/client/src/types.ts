/** Request options and references the client adds to the wire types of `@orch/apimachinery`. */
import type { ObjectMeta } from '@orch/apimachinery';

/** A reference to an object (events' `regarding`/`related`). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** Names one resource type when no catalog entry is at hand (e.g. a custom resource). */
export interface GroupVersionResource {
  /** '' for the core group. */
  group: string;
  version: string;
  resource: string;
}

/** Query parameters of list, watch and deletecollection. */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /** Opaque; '' or absent means a consistent (most recent) read. */
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Server-side timeout of a list or watch. */
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

/** Per-call controls that are not sent to the server. */
export interface CallOptions {
  /** Aborts the request (it rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Options of a delete, sent as the `DeleteOptions` body. */
export interface DeleteRequestOptions extends CallOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Query parameters of writes. */
export interface WriteOptions extends CallOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export interface PatchOptions extends WriteOptions {
  /** Apply patches only: take ownership of conflicting fields. */
  force?: boolean;
  /** e.g. `status`, `scale`. */
  subresource?: string;
}

/** The logging the client needs; `console` and the server-common logger satisfy it. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones (upstream MetaNamespaceKeyFunc). */
export function objectKey(obj: { metadata?: ObjectMeta }): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Splits a key made by {@link objectKey}. */
export function splitObjectKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
