// Object metadata types (upstream k8s.io/apimachinery/pkg/apis/meta/v1), as JSON.

/** apiVersion and kind of an object. */
export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

/** A link to an object that owns this one (garbage collection, controllers). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** The owner is the managing controller (at most one per object). */
  controller?: boolean;
  /** Foreground deletion of the owner waits for this object. */
  blockOwnerDeletion?: boolean;
}

/** Which fields a manager owns (server-side apply). */
export interface ManagedFieldsEntry {
  manager?: string;
  /** Apply after a server-side apply patch, Update otherwise. */
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  /** RFC 3339 timestamp of the last change. */
  time?: string;
  fieldsType?: 'FieldsV1';
  /** Tree of `f:<field>` / `k:<key>` / `v:<value>` / `i:<index>` entries. */
  fieldsV1?: Record<string, unknown>;
  /** The subresource the change was made through (e.g. `status`). */
  subresource?: string;
}

/** metadata of every object. Timestamps are RFC 3339 strings (see time.ts). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  /** Opaque; compare for equality only. */
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** metadata of a list. */
export interface ListMeta {
  selfLink?: string;
  /** Version of the snapshot; constant across the chunks of one chunked list. */
  resourceVersion?: string;
  /** Token for the next chunk; absent or "" when the list is complete. */
  continue?: string;
  /** Items not in this response; omitted when unknown or when the list is complete. */
  remainingItemCount?: number;
}

/** Any API object: typed header, metadata and kind-specific fields. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A collection (`<Kind>List`). */
export interface KubeList<T = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One event of a watch stream; ERROR events carry a Status as object. */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** Conditions a delete must meet. */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Body (or query) of a DELETE. */
export interface DeleteOptions extends TypeMeta {
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  /** Deprecated: use propagationPolicy. */
  orphanDependents?: boolean;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** `["All"]` for a dry run. */
  dryRun?: string[];
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}
