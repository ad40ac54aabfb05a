/**
 * The one storage seam of the gateway. Keys are opaque strings ordered bytewise
 * (`/registry/<group>/<resource>/<namespace>/<name>`); values are serialized objects.
 *
 * Revisions: every successful write (create, update, delete) gets the next global
 * revision, strictly increasing across the whole store. It is the resourceVersion
 * clients see. Writes resolve only once durable (they survive kill -9).
 */
export interface KeyValue {
  key: string;
  value: string;
  /** Revision of the write that created this key (since its last deletion). */
  createRevision: number;
  /** Revision of the last write to this key. */
  modRevision: number;
}

export interface StoreEvent {
  type: 'create' | 'update' | 'delete';
  key: string;
  revision: number;
  /** New value: set for create and update. */
  value?: string;
  /** Previous value: set for update and delete. */
  prevValue?: string;
}

export interface ListOptions {
  /** Read the snapshot at this revision (must be >= compacted revision); default: latest. */
  revision?: number;
  /** Return only keys strictly greater than this one (for continue tokens). */
  startAfter?: string;
  /** At most this many items; 0 or undefined means all. */
  limit?: number;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision of the snapshot that was read. */
  revision: number;
  /** Number of keys in the snapshot after the last returned item. */
  remaining: number;
}

export interface DeleteResult {
  /** The value that was deleted. */
  prev: KeyValue;
  /** The revision of the delete. */
  revision: number;
}

export interface WatchHandle {
  stop(): void;
}

export interface WatchCallbacks {
  /** Events arrive in revision order, without gaps, each batch ordered. */
  onEvents(events: StoreEvent[]): void;
  /** The feed broke (e.g. compacted past afterRevision, connection lost); no more events come. */
  onError(err: Error): void;
}

export interface Store {
  /** A short name for logs and metrics ('sqlite', 'etcd'). */
  readonly backend: string;

  get(key: string, revision?: number): Promise<KeyValue | undefined>;
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Number of live keys under prefix at the latest revision. */
  count(prefix: string): Promise<number>;

  /** Fails with KeyExistsError when the key is present. */
  create(key: string, value: string): Promise<KeyValue>;
  /**
   * Replaces the value. With expectedModRevision, fails with RevisionConflictError
   * unless the key's modRevision equals it. Fails with KeyNotFoundError when absent.
   */
  update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue>;
  /** Same preconditions as update. */
  delete(key: string, expectedModRevision?: number): Promise<DeleteResult>;

  /** The latest revision (0 when empty). */
  currentRevision(): Promise<number>;
  /**
   * The revision of the newest write this store acknowledged, known without a read: only a store
   * through which every write to its data goes (SQLite: one writing process per file) has it;
   * where others write too (etcd) it is absent. A cache that reached it holds every write any
   * client has seen acknowledged.
   */
  acknowledgedRevision?(): number;
  /**
   * History up to this revision is gone: reads at a revision below it, and watches from an
   * afterRevision below it, fail with CompactedError (reads at exactly this revision work).
   */
  compactedRevision(): Promise<number>;
  /**
   * Drops the history superseded at or below revision (the state at revision stays
   * readable). A revision already compacted is a no-op; a future one is a FutureRevisionError.
   */
  compact(revision: number): Promise<void>;

  /**
   * The change feed: every event under prefix with revision > afterRevision, in order,
   * then live events. Fails (onError with CompactedError) when afterRevision is compacted.
   */
  watch(prefix: string, afterRevision: number, callbacks: WatchCallbacks): WatchHandle;

  close(): Promise<void>;
}

export class StoreError extends Error {
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class KeyExistsError extends StoreError {}
export class KeyNotFoundError extends StoreError {}
export class RevisionConflictError extends StoreError {
  constructor(
    key: string,
    readonly actualRevision: number,
  ) {
    super(`revision mismatch for ${key}: current modRevision ${actualRevision}`, key);
  }
}
/**
 * The store refused a write because its space is exhausted: the disk under a SQLite file, or
 * etcd's space quota. Nothing was written; reads keep working, and writes succeed again once
 * space is freed.
 */
export class StorageFullError extends StoreError {}
/** The requested revision was compacted away. */
export class CompactedError extends StoreError {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`required revision ${requested} has been compacted (compacted revision ${compacted})`);
  }
}
/** The requested revision is newer than the store's latest. */
export class FutureRevisionError extends StoreError {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`required revision ${requested} is a future revision (current ${current})`);
  }
}

/** Options shared by every backend. */
export interface StoreOptions {
  /** History older than this is compacted (default 5 minutes, SPEC Limits). */
  historyRetentionMs?: number;
  /** How often the compactor runs (default 30 s). */
  compactionIntervalMs?: number;
  /** Receives failures of background work such as compaction (default: console.warn). */
  onBackgroundError?: (err: Error) => void;
}
