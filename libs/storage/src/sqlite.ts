import Database from 'better-sqlite3';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startStoreCompactor, type TimedCompactor } from './compaction';
import { prefixEnd } from './keys';
import { startModuleWorker } from './module-runner';
import { PAGE_CACHE_KIB, type FromWriter, type ToWriter, type WriteOp, type WriteResult, type WriterConfig } from './sqlite-protocol';
import { StoreWatch } from './store-watch';
import { inspectSqliteWal } from './verify';
import {
  CompactedError,
  DeleteResult,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  KeyValue,
  ListOptions,
  ListResult,
  RevisionConflictError,
  StorageFullError,
  Store,
  StoreError,
  StoreEvent,
  StoreOptions,
  WatchCallbacks,
  WatchHandle,
} from './store';

export interface SqliteStoreOptions extends StoreOptions {
  /** Revisions compacted per writer transaction, so compaction never stalls writes long (default 10000). */
  compactionChunk?: number;
  /** Receives what opening found and repaired (a torn write-ahead log) or could not do; default console.warn. */
  onWarning?: (message: string) => void;
}

/**
 * Opens (creating if needed) the SQLite store at path. Revisions continue from the last
 * one in the file. An idle store does not keep the process alive; close() it when done.
 */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
  return SqliteStore.open(path, opts);
}

type Written = Extract<WriteResult, { ok: true }>;

interface Pending {
  op: WriteOp;
  resolve(result: Written): void;
  reject(err: Error): void;
}

interface Meta {
  revision: number;
  compacted: number;
}

interface Row {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
}

interface HistoryRow {
  rev: number;
  key: string;
  value: string | null;
  prevRev: number | null;
  prevValue: string | null;
}

/** History rows read per replay step of a watch; the event loop runs between steps. */
const REPLAY_PAGE = 1000;

/** Path of the writer module next to this one: .ts under jest, .js in the build. */
const WRITER_MODULE = join(__dirname, `sqlite-writer${extname(__filename)}`);

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

class SqliteWatch extends StoreWatch {
  /** Replay is done: live events from the writer go straight to the callbacks. */
  live = false;

  constructor(
    readonly prefix: string,
    afterRevision: number,
    callbacks: WatchCallbacks,
    onStop: () => void,
  ) {
    super(afterRevision, callbacks, onStop);
  }

  /** Delivers the live events under prefix that are newer than what was delivered. */
  deliverLive(events: StoreEvent[]): void {
    if (!this.live || this.stopped) return;
    const mine = events.filter((e) => e.revision > this.delivered && e.key.startsWith(this.prefix));
    if (mine.length > 0) this.deliver(mine);
  }
}

/**
 * The embedded Store: one SQLite file in WAL mode. Writes go to a worker thread that owns
 * the write connection and commits them in group commits with synchronous=FULL, so a write
 * resolves only once durable and the event loop never waits for fsync. Reads use a
 * read-only connection on the calling thread (WAL readers neither block nor fsync), each in
 * one snapshot transaction. History rows stay until compaction, for reads at old revisions
 * and watch replay. A file has one writing store: when another one writes to it, this store
 * fails every call from then on.
 */
export class SqliteStore implements Store {
  readonly backend = 'sqlite';

  private nextId = 1;
  private readonly inflight = new Map<number, Pending>();
  private outbox: WriteOp[] = [];
  /** Writes sent to the writer whose results have not come back: while any are, the outbox waits. */
  private sentUnanswered = 0;
  private readonly compactions = new Map<number, { resolve(): void; reject(err: Error): void }>();
  /** Revision of the last write result received from the writer (all earlier ones too). */
  private dispatched: number;
  private readonly watchers = new Set<SqliteWatch>();
  private readonly statements = new Map<string, Database.Statement>();
  private readonly readTxn: <T>(fn: (meta: Meta) => T) => T;
  private readonly compactor: TimedCompactor;
  /** Set when the store no longer accepts calls (closing, closed or broken). */
  private closedReason: string | undefined;
  private closing: Promise<void> | undefined;
  private readonly writerClosed: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    private readonly db: Database.Database,
    revision: number,
    opts: SqliteStoreOptions,
  ) {
    this.dispatched = revision;
    const readMeta = db.prepare<[], { name: string; value: number }>('SELECT name, value FROM meta');
    const inTxn = db.transaction((fn: (meta: Meta) => unknown) => {
      const meta: Meta = { revision: 0, compacted: 0 };
      for (const row of readMeta.all()) if (row.name === 'revision' || row.name === 'compacted') meta[row.name] = row.value;
      return fn(meta);
    });
    this.readTxn = <T>(fn: (meta: Meta) => T) => inTxn(fn) as T;

    worker.on('message', (msg: FromWriter) => this.onMessage(msg));
    this.writerClosed = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.breakDown(`sqlite writer exited (code ${code})`);
        resolve();
      });
    });
    worker.on('error', (err) => this.breakDown(`sqlite writer failed: ${err.message}`));
    worker.unref();

    this.compactor = startStoreCompactor(this, opts);
  }

  /** Starts the writer (which creates the schema), then opens the read connection. */
  static async open(path: string, opts: SqliteStoreOptions): Promise<SqliteStore> {
    // SQLite drops a torn or unfinished tail of the log silently: say so before it does.
    const wal = inspectSqliteWal(path);
    const warn = opts.onWarning ?? ((m: string) => console.warn(m));
    if (wal.message) warn(`sqlite store: ${wal.message}`);
    const config: WriterConfig = { path, compactionChunk: opts.compactionChunk ?? 10000 };
    const worker = startModuleWorker(WRITER_MODULE, { workerData: { orchSqliteWriter: config } });
    const ready = await new Promise<Extract<FromWriter, { type: 'ready' }>>((resolve, reject) => {
      const fail = (why: string) => {
        off();
        void worker.terminate();
        const damaged = /not a database|malformed|SQLITE_CORRUPT|SQLITE_NOTADB/i.test(why);
        const advice = damaged ? ': the file is damaged; `gateway verify-store` lists the problems, restore the file from a backup' : '';
        reject(new StoreError(`cannot open sqlite store ${path}: ${why}${advice}`));
      };
      const onMessage = (msg: FromWriter) => {
        if (msg.type !== 'ready') return fail(msg.type === 'fatal' ? msg.message : `unexpected ${msg.type}`);
        off();
        resolve(msg);
      };
      const onError = (err: Error) => fail(err.message);
      const onExit = (code: number) => fail(`writer exited with code ${code}`);
      const off = () => worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    });
    if (ready.warning) warn(`sqlite store: ${ready.warning}`);
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    return new SqliteStore(worker, db, ready.revision, opts);
  }

  async get(key: string, revision?: number): Promise<KeyValue | undefined> {
    this.checkOpen();
    return this.readTxn((meta) => {
      const rev = this.readRevision(revision, meta);
      const row =
        rev === meta.revision
          ? this.stmt(
              'get',
              'SELECT k.value AS value, k.create_rev AS createRevision, c.rev AS modRevision FROM current c JOIN kv k ON k.rev = c.rev WHERE c.key = ?',
            ).get(key)
          : this.stmt(
              'getAt',
              'SELECT value, create_rev AS createRevision, rev AS modRevision FROM kv WHERE key = ? AND rev <= ? ORDER BY rev DESC LIMIT 1',
            ).get(key, rev);
      const r = row as Omit<Row, 'key'> | undefined;
      return r && r.value !== null ? { key, value: r.value, createRevision: r.createRevision, modRevision: r.modRevision } : undefined;
    });
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen();
    const limit = opts.limit && opts.limit > 0 ? opts.limit : -1;
    const after = opts.startAfter !== undefined && compareBytes(opts.startAfter, prefix) >= 0 ? opts.startAfter : undefined;
    const end = prefixEnd(prefix);
    return this.readTxn((meta) => {
      const rev = this.readRevision(opts.revision, meta);
      const latest = rev === meta.revision;
      const items = this.rangeStmt('list', latest, after !== undefined, end !== undefined).all(
        this.rangeParams(after ?? prefix, end, rev, latest, limit),
      ) as Row[];
      let remaining = 0;
      if (limit > 0 && items.length === limit) {
        const last = items[items.length - 1].key;
        remaining = this.rangeStmt('count', latest, true, end !== undefined).pluck().get(this.rangeParams(last, end, rev, latest)) as number;
      }
      return { items, revision: rev, remaining };
    });
  }

  async count(prefix: string): Promise<number> {
    this.checkOpen();
    const end = prefixEnd(prefix);
    return this.readTxn((meta) =>
      this.rangeStmt('count', true, false, end !== undefined)
        .pluck()
        .get(this.rangeParams(prefix, end, meta.revision, true)),
    ) as number;
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const r = await this.submit({ id: 0, kind: 'create', key, value });
    return { key, value, createRevision: r.createRevision, modRevision: r.revision };
  }

  async update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue> {
    const r = await this.submit({ id: 0, kind: 'update', key, value, expected: expectedModRevision });
    return { key, value, createRevision: r.createRevision, modRevision: r.revision };
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const r = await this.submit({ id: 0, kind: 'delete', key, expected: expectedModRevision });
    return { prev: { key, value: r.prev!.value, createRevision: r.createRevision, modRevision: r.prev!.modRevision }, revision: r.revision };
  }

  async currentRevision(): Promise<number> {
    this.checkOpen();
    return this.readTxn((meta) => meta.revision);
  }

  /** Every write to the file goes through this store's writer: the newest result it received. */
  acknowledgedRevision(): number {
    this.checkOpen();
    return this.dispatched;
  }

  async compactedRevision(): Promise<number> {
    this.checkOpen();
    return this.readTxn((meta) => meta.compacted);
  }

  async compact(revision: number): Promise<void> {
    this.checkOpen();
    const meta = this.readTxn((m) => m);
    if (revision > meta.revision) throw new FutureRevisionError(revision, meta.revision);
    if (revision <= meta.compacted) return;
    const id = this.nextId++;
    await new Promise<void>((resolve, reject) => {
      this.compactions.set(id, { resolve, reject });
      this.post({ type: 'compact', id, revision });
    });
  }

  watch(prefix: string, afterRevision: number, callbacks: WatchCallbacks): WatchHandle {
    const w = new SqliteWatch(prefix, Math.max(0, afterRevision), callbacks, () => this.watchers.delete(w));
    if (this.closedReason) {
      setImmediate(() => w.fail(new StoreError(this.closedReason!)));
      return w;
    }
    this.watchers.add(w);
    setImmediate(() => this.replay(w));
    return w;
  }

  /**
   * One replay step: the committed history under prefix after w.delivered, up to the last
   * revision received from the writer. Events after that reach the watch live (onWritten),
   * so replay and live delivery meet without a gap or a duplicate.
   */
  private replay(w: SqliteWatch): void {
    if (w.stopped) return;
    try {
      const end = prefixEnd(w.prefix);
      const upTo = this.dispatched;
      const rows = this.readTxn((meta) => {
        if (w.delivered < meta.compacted) throw new CompactedError(w.delivered, meta.compacted);
        const sql = `SELECT k.rev AS rev, k.key AS key, k.value AS value, k.prev_rev AS prevRev, p.value AS prevValue
          FROM kv AS k NOT INDEXED LEFT JOIN kv p ON p.rev = k.prev_rev
          WHERE k.rev > @after AND k.rev <= @upTo AND k.key >= @prefix ${end === undefined ? '' : 'AND k.key < @end'}
          ORDER BY k.rev LIMIT ${REPLAY_PAGE}`;
        const params = { after: w.delivered, upTo, prefix: w.prefix, ...(end === undefined ? {} : { end }) };
        return this.stmt(`replay:${end === undefined}`, sql).all(params) as HistoryRow[];
      });
      const events = rows.map(toEvent);
      if (rows.length === REPLAY_PAGE) {
        w.deliver(events, rows[rows.length - 1].rev);
        setImmediate(() => this.replay(w));
      } else {
        w.live = true;
        w.deliver(events, Math.max(w.delivered, upTo));
      }
    } catch (err) {
      w.fail(err instanceof Error ? err : new StoreError(String(err)));
    }
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.closedReason ??= 'sqlite store is closed';
      await this.compactor.stop();
      this.flushOutbox(true);
      this.worker.ref();
      this.worker.postMessage({ type: 'close' } satisfies ToWriter);
      await this.writerClosed;
      this.db.close();
    })();
    return this.closing;
  }

  private submit(op: WriteOp): Promise<Written> {
    this.checkOpen();
    op.id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.inflight.size === 0) this.worker.ref();
      this.inflight.set(op.id, { op, resolve, reject });
      if (this.outbox.length === 0 && this.sentUnanswered === 0) setImmediate(() => this.flushOutbox());
      this.outbox.push(op);
    });
  }

  /**
   * Sends the queued writes as one message (the writer commits them as one group) when the
   * writer has answered every write sent before; otherwise they wait for that answer
   * (onWritten sends them), so under load there is one message per commit, sized to the load,
   * instead of one per event-loop turn (postMessage was 5.5 % self time of the event loop, 64
   * clients creating). Alone, a write waits only for the turn's I/O callbacks to finish.
   * `force` sends regardless (close).
   */
  private flushOutbox(force = false): void {
    if (this.outbox.length === 0 || (this.sentUnanswered > 0 && !force)) return;
    const ops = this.outbox;
    this.outbox = [];
    this.sentUnanswered += ops.length;
    this.post({ type: 'write', ops });
  }

  private post(msg: ToWriter): void {
    this.worker.postMessage(msg);
  }

  private onMessage(msg: FromWriter): void {
    switch (msg.type) {
      case 'written':
        this.onWritten(msg.results);
        break;
      case 'compacted':
        for (const id of msg.done) this.compactions.get(id)?.resolve();
        for (const f of msg.failed) this.compactions.get(f.id)?.reject(new StoreError(f.message));
        for (const id of [...msg.done, ...msg.failed.map((f) => f.id)]) this.compactions.delete(id);
        break;
      case 'fatal':
        this.breakDown(`sqlite writer failed: ${msg.message}`);
        break;
      case 'ready':
        break;
    }
  }

  /**
   * Sends the writes that waited for this answer (so the writer commits them while these are
   * settled), then settles the writes of one committed group and feeds their events to live
   * watches.
   */
  private onWritten(results: WriteResult[]): void {
    this.sentUnanswered -= results.length;
    this.flushOutbox();
    const events: StoreEvent[] = [];
    for (const r of results) {
      const pending = this.inflight.get(r.id);
      if (!pending) continue;
      this.inflight.delete(r.id);
      const { op } = pending;
      if (!r.ok) {
        pending.reject(writeError(r, op.key));
        continue;
      }
      this.dispatched = r.revision;
      if (op.kind === 'create') events.push({ type: 'create', key: op.key, revision: r.revision, value: op.value });
      else if (op.kind === 'update') events.push({ type: 'update', key: op.key, revision: r.revision, value: op.value, prevValue: r.prev!.value });
      else events.push({ type: 'delete', key: op.key, revision: r.revision, prevValue: r.prev!.value });
      pending.resolve(r);
    }
    if (this.inflight.size === 0 && !this.closing) this.worker.unref();
    if (events.length > 0) for (const w of this.watchers) w.deliverLive(events);
  }

  /** The writer is gone: fail every pending call and watch; the store is unusable. */
  private breakDown(reason: string): void {
    this.closedReason ??= reason;
    const err = new StoreError(this.closedReason);
    for (const p of this.inflight.values()) p.reject(err);
    this.inflight.clear();
    for (const c of this.compactions.values()) c.reject(err);
    this.compactions.clear();
    for (const w of [...this.watchers]) w.fail(err);
  }

  private checkOpen(): void {
    if (this.closedReason) throw new StoreError(this.closedReason);
  }

  /** The revision a read at `requested` (0/undefined: latest) sees, or why it cannot. */
  private readRevision(requested: number | undefined, meta: Meta): number {
    if (!requested || requested <= 0) return meta.revision;
    if (requested < meta.compacted) throw new CompactedError(requested, meta.compacted);
    if (requested > meta.revision) throw new FutureRevisionError(requested, meta.revision);
    return requested;
  }

  private stmt(name: string, sql: string): Database.Statement {
    let s = this.statements.get(name);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(name, s);
    }
    return s;
  }

  /**
   * Range reads over [lower, end) (lower exclusive when `exclusive`): 'list' returns rows
   * ordered by key, 'count' their number. At the latest revision they read the `current`
   * table; at an older one, the newest history row of each key at or below @rev.
   */
  private rangeStmt(kind: 'list' | 'count', latest: boolean, exclusive: boolean, bounded: boolean): Database.Statement {
    const col = latest ? 'c.key' : 'key';
    const where = `${col} ${exclusive ? '>' : '>='} @lower${bounded ? ` AND ${col} < @end` : ''}`;
    let sql: string;
    if (latest) {
      sql =
        kind === 'list'
          ? `SELECT c.key AS key, k.value AS value, k.create_rev AS createRevision, c.rev AS modRevision
             FROM current c JOIN kv k ON k.rev = c.rev WHERE ${where} ORDER BY c.key LIMIT @limit`
          : `SELECT count(*) FROM current c WHERE ${where}`;
    } else {
      // SQLite takes the bare columns of a max() aggregate from the row holding the max.
      const newest = `SELECT key, value, create_rev AS createRevision, max(rev) AS modRevision FROM kv
        WHERE ${where} AND rev <= @rev GROUP BY key HAVING value IS NOT NULL`;
      sql = kind === 'list' ? `${newest} ORDER BY key LIMIT @limit` : `SELECT count(*) FROM (${newest})`;
    }
    return this.stmt(`${kind}:${latest}:${exclusive}:${bounded}`, sql);
  }

  private rangeParams(lower: string, end: string | undefined, rev: number, latest: boolean, limit?: number): Record<string, string | number> {
    const params: Record<string, string | number> = { lower };
    if (end !== undefined) params.end = end;
    if (!latest) params.rev = rev;
    if (limit !== undefined) params.limit = limit;
    return params;
  }
}

function toEvent(row: HistoryRow): StoreEvent {
  if (row.value === null) return { type: 'delete', key: row.key, revision: row.rev, prevValue: row.prevValue ?? undefined };
  if (row.prevRev === null) return { type: 'create', key: row.key, revision: row.rev, value: row.value };
  return { type: 'update', key: row.key, revision: row.rev, value: row.value, prevValue: row.prevValue ?? undefined };
}

function writeError(r: Extract<WriteResult, { ok: false }>, key: string): StoreError {
  switch (r.error) {
    case 'exists':
      return new KeyExistsError(r.message, key);
    case 'notFound':
      return new KeyNotFoundError(r.message, key);
    case 'conflict':
      return new RevisionConflictError(key, r.actualRevision!);
    case 'full':
      return new StorageFullError(r.message, key);
    case 'internal':
      return new StoreError(r.message, key);
  }
}
