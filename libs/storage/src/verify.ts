import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, readSync, fstatSync } from 'node:fs';
import type { Store } from './store';

/** What an integrity check read and every problem it found (none: the store is sound). */
export interface StoreVerification {
  backend: string;
  /** The revision of the snapshot that was checked. */
  revision: number;
  /** Live keys in that snapshot. */
  keys: number;
  problems: string[];
}

/** Problems listed at most, so a badly broken store still gives a readable report. */
const MAX_PROBLEMS = 50;
const PAGE = 500;

/**
 * Checks what every backend promises, on one snapshot read page by page: keys strictly
 * increasing, every value a JSON object, createRevision <= modRevision <= the snapshot's
 * revision. Read-only; safe while gateways write.
 */
export async function verifyStore(store: Store, prefix = ''): Promise<StoreVerification> {
  const problems: string[] = [];
  const problem = (p: string) => problems.length < MAX_PROBLEMS && problems.push(p);
  let revision: number | undefined;
  let keys = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, { revision, startAfter: after, limit: PAGE });
    revision = page.revision;
    for (const kv of page.items) {
      keys++;
      if (after !== undefined && Buffer.compare(Buffer.from(kv.key), Buffer.from(after)) <= 0) problem(`key ${kv.key} listed after ${after}: keys out of order`);
      if (!isJsonObject(kv.value)) problem(`key ${kv.key}: the value is not a JSON object`);
      if (!(kv.createRevision <= kv.modRevision && kv.modRevision <= revision)) {
        problem(`key ${kv.key}: revisions out of order (create ${kv.createRevision}, mod ${kv.modRevision}, snapshot ${revision})`);
      }
      after = kv.key;
    }
    if (page.remaining === 0 || page.items.length === 0) break;
  }
  return { backend: store.backend, revision: revision ?? 0, keys, problems };
}

function isJsonObject(value: string): boolean {
  try {
    const v: unknown = JSON.parse(value);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Checks a SQLite store file through its own read-only connection (safe while the gateway
 * writes): SQLite's `integrity_check`, then the store's invariants (sqlite-writer.ts): meta
 * rows present, no row newer than meta.revision, every `current` row naming the newest live
 * history row of its key, every newest live row in `current`, every value a JSON object.
 */
export function verifySqliteFile(path: string): StoreVerification {
  if (!existsSync(path)) return { backend: 'sqlite', revision: 0, keys: 0, problems: [`${path} does not exist`] };
  const problems: string[] = [];
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const conn = db;
    return conn.transaction(() => {
      for (const row of conn.prepare('PRAGMA integrity_check').pluck().all() as string[]) if (row !== 'ok') problems.push(`integrity_check: ${row}`);
      const meta = new Map((conn.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]));
      const revision = meta.get('revision');
      const compacted = meta.get('compacted');
      if (revision === undefined || compacted === undefined) problems.push('meta: the revision or compacted row is missing');
      else if (compacted > revision) problems.push(`meta: compacted revision ${compacted} is past the revision ${revision}`);
      const count = (sql: string, why: string, ...params: number[]) => {
        const n = conn.prepare(sql).pluck().get(...params) as number;
        if (n > 0) problems.push(`${n} ${why}`);
      };
      count('SELECT count(*) FROM kv WHERE rev > ?', 'history rows newer than meta.revision', revision ?? 0);
      count(
        'SELECT count(*) FROM current c LEFT JOIN kv k ON k.rev = c.rev WHERE (k.rev IS NULL OR k.key != c.key OR k.value IS NULL)',
        'current rows pointing at a missing, foreign or deleted history row',
      );
      count(
        `SELECT count(*) FROM (SELECT key, max(rev) AS rev FROM kv GROUP BY key) m JOIN kv k ON k.rev = m.rev LEFT JOIN current c ON c.key = m.key
         WHERE ((k.value IS NOT NULL AND (c.rev IS NULL OR c.rev != m.rev)) OR (k.value IS NULL AND c.key IS NOT NULL))`,
        'keys whose newest history row disagrees with the current table',
      );
      count(
        "SELECT count(*) FROM current c JOIN kv k ON k.rev = c.rev WHERE NOT (json_valid(k.value) AND json_type(k.value) = 'object')",
        'live values that are not JSON objects',
      );
      const keys = conn.prepare('SELECT count(*) FROM current').pluck().get() as number;
      return { backend: 'sqlite', revision: revision ?? 0, keys, problems: problems.slice(0, MAX_PROBLEMS) };
    })();
  } catch (err) {
    return { backend: 'sqlite', revision: 0, keys: 0, problems: [...problems, `cannot read ${path}: ${(err as Error).message}`] };
  } finally {
    db?.close();
  }
}

/** The shape of a SQLite write-ahead log found next to a database file. */
export interface WalInspection {
  /** Whole frames that belong to committed transactions (SQLite replays these). */
  committedFrames: number;
  /** Valid frames after the last commit: a transaction that never committed. */
  uncommittedFrames: number;
  /** Bytes of a torn write: a frame cut short, or one whose checksum fails, after the committed ones. */
  tornBytes: number;
  /** A sentence for the log when the tail is torn or uncommitted; undefined for a clean log. */
  message?: string;
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;

/**
 * Reads the write-ahead log of `dbPath` (`<dbPath>-wal`) the way SQLite recovers it (salts and
 * cumulative checksums, https://www.sqlite.org/fileformat2.html#walformat) and reports what
 * recovery will drop: an uncommitted transaction, or a torn write (a frame cut short or with a
 * bad checksum among the current generation's frames). Frames of an older generation (other
 * salts, left behind when the log restarted) are not a fault. Run it before opening the store:
 * SQLite drops the tail silently.
 */
export function inspectSqliteWal(dbPath: string): WalInspection {
  const clean: WalInspection = { committedFrames: 0, uncommittedFrames: 0, tornBytes: 0 };
  const walPath = `${dbPath}-wal`;
  let fd: number;
  try {
    fd = openSync(walPath, 'r');
  } catch {
    return clean;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return clean;
    const header = Buffer.alloc(WAL_HEADER);
    if (size < WAL_HEADER || readSync(fd, header, 0, WAL_HEADER, 0) < WAL_HEADER) {
      return { ...clean, tornBytes: size, message: `the write-ahead log ${walPath} is ${size} bytes, shorter than its header: a torn write; SQLite ignores it` };
    }
    const magic = header.readUInt32BE(0);
    if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return { ...clean, message: `the write-ahead log ${walPath} has no valid header; SQLite ignores it` };
    const bigEndian = magic === WAL_MAGIC_BE;
    const pageSize = header.readUInt32BE(8);
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);
    let sum = walChecksum(header.subarray(0, 24), bigEndian, [0, 0]);
    if (sum[0] !== header.readUInt32BE(24) || sum[1] !== header.readUInt32BE(28)) {
      return { ...clean, tornBytes: size, message: `the write-ahead log ${walPath} has a header whose checksum fails (a torn write); SQLite ignores the whole log` };
    }
    const frameSize = FRAME_HEADER + pageSize;
    const frame = Buffer.alloc(frameSize);
    let offset = WAL_HEADER;
    let valid = 0;
    let committed = 0;
    let torn = 0;
    while (offset < size) {
      const n = readSync(fd, frame, 0, frameSize, offset);
      if (n < frameSize) {
        torn = n;
        break;
      }
      if (frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) break; // an older generation
      const next = walChecksum(frame.subarray(FRAME_HEADER), bigEndian, walChecksum(frame.subarray(0, 8), bigEndian, sum));
      if (next[0] !== frame.readUInt32BE(16) || next[1] !== frame.readUInt32BE(20)) {
        torn = frameSize;
        break;
      }
      sum = next;
      valid++;
      if (frame.readUInt32BE(4) !== 0) committed = valid; // a commit frame carries the database size
      offset += frameSize;
    }
    const uncommitted = valid - committed;
    const result: WalInspection = { committedFrames: committed, uncommittedFrames: uncommitted, tornBytes: torn };
    if (torn > 0) {
      result.message =
        `the write-ahead log ${walPath} ends in a torn write (frame ${valid + 1}: ${torn === frameSize ? 'checksum mismatch' : `${torn} of ${frameSize} bytes`}` +
        `${uncommitted ? `, after ${uncommitted} frames of an unfinished transaction` : ''}); SQLite discards it and opens the store at its last complete transaction (${committed} frames kept). ` +
        'This follows a power loss, a full disk or an interrupted copy of the file';
    } else if (uncommitted > 0) {
      result.message = `the write-ahead log ${walPath} ends in ${uncommitted} frames of a transaction that never committed (the writer stopped mid-write); SQLite discards them`;
    }
    return result;
  } finally {
    closeSync(fd);
  }
}

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from `start`. */
function walChecksum(data: Buffer, bigEndian: boolean, start: [number, number]): [number, number] {
  let s0 = start[0];
  let s1 = start[1];
  for (let i = 0; i < data.length; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1];
}
