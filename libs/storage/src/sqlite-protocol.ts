/** Messages between SqliteStore (main thread) and its writer worker (sqlite-writer.ts). */

/**
 * Page cache of each of the store's two connections (the main thread's reader and the writer), in
 * KiB. better-sqlite3 builds SQLite with 16 MiB per connection, which a store of 100,000 small
 * objects (52 MiB file) fills in the process's memory; beyond this the pages are read from the
 * file, i.e. from the operating system's page cache, which the process's RSS does not count.
 * Measured with 100,000 creates: RSS 24 MiB lower, creates/s and a 100,000-item list from the
 * store within the run-to-run spread.
 */
export const PAGE_CACHE_KIB = 2048;

export interface WriterConfig {
  path: string;
  /** Revisions compacted per transaction, so a large compaction never stalls writes. */
  compactionChunk: number;
}

export type WriteOp =
  | { id: number; kind: 'create'; key: string; value: string }
  | { id: number; kind: 'update'; key: string; value: string; expected?: number }
  | { id: number; kind: 'delete'; key: string; expected?: number };

export type WriteErrorKind = 'exists' | 'notFound' | 'conflict' | 'full' | 'internal';

export type WriteResult =
  | {
      id: number;
      ok: true;
      revision: number;
      createRevision: number;
      /** The superseded row (update, delete). */
      prev?: { value: string; modRevision: number };
    }
  | { id: number; ok: false; error: WriteErrorKind; message: string; actualRevision?: number };

/** Writes and compactions are processed in the order sent; 'close' ends the worker after them. */
export type ToWriter =
  | { type: 'write'; ops: WriteOp[] }
  | { type: 'compact'; id: number; revision: number }
  | { type: 'close' };

export type FromWriter =
  /** warning: what opening could not do (the store works; say it at start-up). */
  | { type: 'ready'; revision: number; warning?: string }
  /** Results of one committed group, in revision order. */
  | { type: 'written'; results: WriteResult[] }
  /** These compact requests are done (their history is gone) or failed. */
  | { type: 'compacted'; done: number[]; failed: { id: number; message: string }[] }
  | { type: 'fatal'; message: string };
