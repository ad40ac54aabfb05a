/**
 * The SQLite writer: runs in a worker thread, owns the only write connection and commits
 * every write the main thread sends in group commits. Each commit is one transaction with
 * synchronous=FULL (fsync here, never on the main thread); every write in it is checked on
 * its own, so a failed precondition fails only that write. Results go back in revision
 * order, after the commit is durable. Compaction runs between groups in bounded chunks.
 * The file gives space back (see reclaimStep): free pages go back to the disk by incremental
 * vacuum, and the write-ahead log is checkpointed and truncated after that and after any
 * write refused for a full disk (retried every second until it succeeds), so the store's
 * files shrink back to its live data instead of keeping their high-water mark.
 *
 * Tables:
 *   kv(rev, key, value, create_rev, prev_rev)  one row per write; value NULL = tombstone;
 *                                              prev_rev = the row this write superseded
 *   current(key, rev)                          the live row of every present key
 *   meta(name, value)                          'revision' (last written), 'compacted'
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { PAGE_CACHE_KIB, type FromWriter, type ToWriter, type WriteOp, type WriteResult, type WriterConfig } from './sqlite-protocol';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  rev INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  value TEXT,
  create_rev INTEGER NOT NULL,
  prev_rev INTEGER
);
CREATE INDEX IF NOT EXISTS kv_key_rev ON kv (key, rev);
CREATE TABLE IF NOT EXISTS current (key TEXT PRIMARY KEY, rev INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
`;

/** Free pages (4 KiB) below which the file keeps them for reuse instead of vacuuming. */
const RECLAIM_MIN_FREE_PAGES = 256;
/** Pages given back per writer step, so reclaiming never stalls writes long. */
const RECLAIM_PAGES_PER_STEP = 2048;
/** A reclaim step that failed (disk still full, a reader in the way) is retried after this. */
const RECLAIM_RETRY_MS = 1000;

interface LiveRow {
  rev: number;
  createRev: number;
  value: string;
}

function runWriter(port: NonNullable<typeof parentPort>, config: WriterConfig): void {
  const post = (msg: FromWriter) => port.postMessage(msg);
  const db = new Database(config.path);
  // Set before the first table exists; a file created without it is converted below.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  db.exec(SCHEMA);
  const warning = convertToIncrementalVacuum(db);

  const readMeta = db.prepare<[string], number>('SELECT value FROM meta WHERE name = ?').pluck();
  const setMeta = db.prepare('UPDATE meta SET value = ? WHERE name = ?');
  const selLive = db.prepare<[string], LiveRow>(
    'SELECT c.rev AS rev, k.create_rev AS createRev, k.value AS value FROM current c JOIN kv k ON k.rev = c.rev WHERE c.key = ?',
  );
  const insKv = db.prepare('INSERT INTO kv (rev, key, value, create_rev, prev_rev) VALUES (?, ?, ?, ?, ?)');
  const setCurrent = db.prepare('INSERT INTO current (key, rev) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET rev = excluded.rev');
  const delCurrent = db.prepare('DELETE FROM current WHERE key = ?');
  const delSuperseded = db.prepare(
    'DELETE FROM kv WHERE rev IN (SELECT prev_rev FROM kv WHERE rev > ? AND rev <= ? AND prev_rev IS NOT NULL)',
  );
  const delTombstones = db.prepare('DELETE FROM kv WHERE rev > ? AND rev <= ? AND value IS NULL');

  let revision = readMeta.get('revision')!;
  let compacted = readMeta.get('compacted')!;

  /** Applies one write at revision+1, or returns why it cannot be applied. */
  const apply = (op: WriteOp): WriteResult => {
    const live = selLive.get(op.key);
    if (op.kind === 'create') {
      if (live) return { id: op.id, ok: false, error: 'exists', message: `key ${op.key} already exists` };
      const rev = ++revision;
      insKv.run(rev, op.key, op.value, rev, null);
      setCurrent.run(op.key, rev);
      return { id: op.id, ok: true, revision: rev, createRevision: rev };
    }
    if (!live) return { id: op.id, ok: false, error: 'notFound', message: `key ${op.key} not found` };
    if (op.expected !== undefined && op.expected !== live.rev) {
      return { id: op.id, ok: false, error: 'conflict', message: `revision mismatch for ${op.key}`, actualRevision: live.rev };
    }
    const rev = ++revision;
    if (op.kind === 'update') {
      insKv.run(rev, op.key, op.value, live.createRev, live.rev);
      setCurrent.run(op.key, rev);
    } else {
      insKv.run(rev, op.key, null, live.createRev, live.rev);
      delCurrent.run(op.key);
    }
    return { id: op.id, ok: true, revision: rev, createRevision: live.createRev, prev: { value: live.value, modRevision: live.rev } };
  };

  const commitGroup = db.transaction((ops: WriteOp[]): WriteResult[] => {
    // This worker hands out revisions from memory: it must be the file's only writer.
    if (readMeta.get('revision') !== revision) throw new Error('another process wrote to the store file');
    const results = ops.map(apply);
    setMeta.run(revision, 'revision');
    return results;
  });

  /**
   * Drops history up to `to`: every row superseded by a write at or below `to` (each is the
   * prev_rev of exactly one later row) and every tombstone at or below `to`. What remains
   * answers reads at any revision >= to, and watches from it.
   */
  const compactChunk = db.transaction((to: number) => {
    delSuperseded.run(compacted, to);
    delTombstones.run(compacted, to);
    setMeta.run(to, 'compacted');
  });

  /** Free pages may be many (set by each compaction and at open). */
  let vacuumDue = true;
  /** The log holds what the file could not take or gave back (set at open, after a vacuum and a full disk). */
  let checkpointDue = true;
  let retryTimer: NodeJS.Timeout | undefined;
  const retryReclaim = () => {
    retryTimer ??= setTimeout(() => {
      retryTimer = undefined;
      schedule();
    }, RECLAIM_RETRY_MS);
  };

  /**
   * One step of giving space back: vacuums up to RECLAIM_PAGES_PER_STEP free pages when they
   * are many (at least RECLAIM_MIN_FREE_PAGES and a quarter of the file), then checkpoints
   * the log into the file and truncates both; vacuumDue/checkpointDue say what is left.
   * Throws when it cannot go on (the disk still full, a reader in the way); the caller retries.
   */
  const reclaimStep = (): void => {
    if (vacuumDue) {
      const free = db.pragma('freelist_count', { simple: true }) as number;
      const total = db.pragma('page_count', { simple: true }) as number;
      if (free >= RECLAIM_MIN_FREE_PAGES && free * 4 >= total) {
        db.exec(`PRAGMA incremental_vacuum(${RECLAIM_PAGES_PER_STEP})`);
        checkpointDue = true;
        if (free > RECLAIM_PAGES_PER_STEP) return;
      }
      vacuumDue = false;
    }
    if (checkpointDue) {
      const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (checkpoint.busy !== 0) throw new Error('a reader kept the write-ahead log from being checkpointed');
      checkpointDue = false;
    }
  };
  const reclaimDue = () => (vacuumDue || checkpointDue) && !closing;

  let pending: WriteOp[] = [];
  let compactTarget = compacted;
  let compactWaiters: { id: number; revision: number }[] = [];
  let closing = false;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    if (pending.length > 0) {
      const ops = pending;
      pending = [];
      const startRevision = revision;
      let results: WriteResult[];
      try {
        results = commitGroup.immediate(ops);
      } catch (err) {
        revision = startRevision; // rolled back
        const full = isDiskFull(err);
        if (full) checkpointDue = true; // the log holds what the file could not take: checkpoint it once space is back
        const message = full ? `the disk holding ${config.path} is full (${String(err)}): nothing was written` : `sqlite write failed: ${String(err)}`;
        results = ops.map((op) => ({ id: op.id, ok: false, error: full ? 'full' : 'internal', message }));
      }
      post({ type: 'written', results });
      if (readMeta.get('revision') !== revision) {
        post({ type: 'fatal', message: `another process writes to ${config.path}; a store file has one writer` });
        db.close();
        port.close();
        return;
      }
    }
    if (closing) compactTarget = compacted; // unfinished compaction is abandoned
    if (compacted < compactTarget) {
      const to = Math.min(compactTarget, compacted + config.compactionChunk);
      try {
        compactChunk(to);
        compacted = to;
        vacuumDue = true;
      } catch (err) {
        const failed = compactWaiters.map((w) => ({ id: w.id, message: `sqlite compaction failed: ${String(err)}` }));
        compactWaiters = [];
        compactTarget = compacted;
        post({ type: 'compacted', done: [], failed });
      }
    }
    if (compactWaiters.length > 0) {
      const done = compactWaiters.filter((w) => w.revision <= compacted).map((w) => w.id);
      const waiting = compactWaiters.filter((w) => w.revision > compacted);
      const failed = closing ? waiting.map((w) => ({ id: w.id, message: 'sqlite store closed before compaction finished' })) : [];
      compactWaiters = closing ? [] : waiting;
      if (done.length > 0 || failed.length > 0) post({ type: 'compacted', done, failed });
    }
    if (reclaimDue() && !retryTimer && pending.length === 0 && compacted >= compactTarget) {
      try {
        reclaimStep();
      } catch {
        retryReclaim();
      }
    }
    if (pending.length > 0 || compacted < compactTarget || (reclaimDue() && !retryTimer)) schedule();
    else if (closing) {
      clearTimeout(retryTimer);
      db.close();
      port.close();
    }
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  port.on('message', (msg: ToWriter) => {
    switch (msg.type) {
      case 'write':
        for (const op of msg.ops) pending.push(op);
        break;
      case 'compact':
        compactTarget = Math.max(compactTarget, Math.min(msg.revision, revision));
        compactWaiters.push({ id: msg.id, revision: Math.min(msg.revision, revision) });
        break;
      case 'close':
        closing = true;
        break;
    }
    schedule();
  });
  post({ type: 'ready', revision, warning });
  schedule(); // reclaims what the last run left (its log, free pages)
}

/**
 * A file created before the store used incremental vacuum keeps every page it ever had:
 * converts it once (a VACUUM, which needs free space about the file's size). Returns why
 * it could not, for a start-up warning; the store works either way.
 */
function convertToIncrementalVacuum(db: Database.Database): string | undefined {
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2) return undefined;
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    return undefined;
  } catch (err) {
    return `${db.name} was created without incremental vacuum and could not be converted (${String(err)}): its file will not shrink after deletes until it is`;
  }
}

/** SQLITE_FULL, or a write that failed with ENOSPC/EDQUOT underneath. */
function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === 'SQLITE_FULL' || /ENOSPC|EDQUOT|disk is full/i.test(String(err));
}

if (parentPort && (workerData as { orchSqliteWriter?: WriterConfig } | undefined)?.orchSqliteWriter) {
  const port = parentPort;
  try {
    runWriter(port, (workerData as { orchSqliteWriter: WriterConfig }).orchSqliteWriter);
  } catch (err) {
    port.postMessage({ type: 'fatal', message: String(err) } satisfies FromWriter);
  }
}
