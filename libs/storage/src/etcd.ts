import { Etcd3, ICompare, IDuplexStream, IEvent, IKeyValue, IWatchRequest, IWatchResponse, KVClient } from 'etcd3';
import { startStoreCompactor, type TimedCompactor } from './compaction';
import { prefixEndBytes } from './keys';
import { StoreWatch } from './store-watch';
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

export interface EtcdStoreOptions extends StoreOptions {
  /** Client URLs of the etcd members, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[];
  /** Prepended to every key in etcd, so several stores can share one cluster (default ''). */
  prefix?: string;
}

/**
 * The HTTP/2 flow-control window this client grants etcd (per stream and per connection). With
 * HTTP/2's default 64 KiB, etcd can queue only about 500 watch responses for a client that is
 * not reading (descheduled on a busy machine, a GC pause) before its send blocks; the watch's
 * send channel (128 responses) then fills, etcd moves the watcher off its synced set, and its
 * sync loop catches it up at the next 100 ms tick: a whole step of latency for every event
 * behind it. 16 MiB holds some 60,000 responses; etcd never sends more than the window.
 */
const ETCD_FLOW_CONTROL_WINDOW = 16 * 1024 * 1024;

/** Connects to etcd (failing when it cannot be reached) and starts the compactor. */
export async function openEtcdStore(opts: EtcdStoreOptions): Promise<EtcdStore> {
  // Lists of a large resource exceed gRPC's default 4 MiB response limit.
  const client = new Etcd3({ hosts: opts.endpoints, grpcOptions: { 'grpc.max_receive_message_length': -1, 'grpc-node.flow_control_window': ETCD_FLOW_CONTROL_WINDOW } });
  const store = new EtcdStore(client, opts);
  try {
    await store.currentRevision();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';
/**
 * "\0": the lowest etcd key (keys cannot be empty), the suffix that turns a key into the
 * next possible one, and the key read when only the response's revision matters.
 */
const ZERO = Buffer.from([0]);

function wrap(err: unknown, what: string): StoreError {
  const message = err instanceof Error ? err.message : String(err);
  // etcd answers "mvcc: database space exceeded" once its backend reaches --quota-backend-bytes.
  const type = message.includes('database space exceeded') ? StorageFullError : StoreError;
  return Object.assign(new type(`etcd ${what} failed: ${message}`), { cause: err });
}

const isCompacted = (err: unknown) => err instanceof Error && err.message.includes(COMPACTED);
const isFuture = (err: unknown) => err instanceof Error && err.message.includes(FUTURE);

class EtcdWatch extends StoreWatch {
  private stream: IDuplexStream<IWatchRequest, IWatchResponse> | undefined;

  constructor(
    delivered: number,
    callbacks: WatchCallbacks,
    private readonly toEvent: (e: IEvent) => StoreEvent,
    onStop: () => void,
  ) {
    super(delivered, callbacks, onStop);
  }

  /**
   * Opens a watch stream of its own, with previous values. It starts at `delivered`, not
   * delivered+1, and drops that revision's event: etcd then fails the watch exactly when
   * delivered is below the compacted revision, as the Store contract says (etcd itself
   * accepts a start at the compacted revision, whose event lacks its previous value).
   */
  async start(client: Etcd3, key: Buffer, rangeEnd: Buffer): Promise<void> {
    try {
      const stream = await client.watchClient.watch();
      if (this.stopped) return stream.cancel();
      this.stream = stream;
      stream.on('data', (res: IWatchResponse) => this.onResponse(res));
      stream.on('error', (err: Error) => this.fail(wrap(err, 'watch')));
      stream.on('end', () => this.fail(new StoreError('etcd watch stream ended')));
      stream.write({ create_request: { key, range_end: rangeEnd, start_revision: Math.max(this.delivered, 1), prev_kv: true } });
    } catch (err) {
      this.fail(wrap(err, 'watch'));
    }
  }

  protected override release(): void {
    this.stream?.cancel();
  }

  private onResponse(res: IWatchResponse): void {
    if (this.stopped) return;
    if (res.canceled) {
      const compacted = Number(res.compact_revision);
      this.fail(compacted > 0 ? new CompactedError(this.delivered, compacted) : new StoreError(`etcd watch canceled: ${res.cancel_reason}`));
      return;
    }
    this.deliver(res.events.map(this.toEvent).filter((e) => e.revision > this.delivered));
  }
}

/**
 * The Store on etcd v3. Writes are transactions guarded by create/mod revision compares,
 * reads are ranges at a revision, watches are etcd watches with previous values, and
 * every StoreError maps from the etcd error. Each watch has a stream of its own and ends
 * with onError when the stream breaks (the caller re-watches from its last revision).
 */
export class EtcdStore implements Store {
  readonly backend = 'etcd';
  private readonly kv: KVClient;
  private readonly prefix: string;
  private readonly watches = new Set<EtcdWatch>();
  private readonly compactor: TimedCompactor;
  /** The highest compaction this client knows of (reads below it fail). */
  private knownCompacted = 0;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly client: Etcd3,
    opts: Omit<EtcdStoreOptions, 'endpoints'>,
  ) {
    this.kv = client.kv;
    this.prefix = opts.prefix ?? '';
    this.compactor = startStoreCompactor(this, opts);
  }

  async get(key: string, revision?: number): Promise<KeyValue | undefined> {
    const res = await this.read(() => this.kv.range({ key: this.k(key), revision: revision ?? 0 }), revision, 'get');
    return res.kvs.length > 0 ? this.toKeyValue(res.kvs[0]) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const from =
      opts.startAfter !== undefined && Buffer.compare(Buffer.from(opts.startAfter), Buffer.from(prefix)) >= 0
        ? Buffer.concat([this.k(opts.startAfter), ZERO])
        : this.rangeStart(prefix);
    const res = await this.read(
      () => this.kv.range({ key: from, range_end: this.rangeEnd(prefix), revision: opts.revision ?? 0, limit }),
      opts.revision,
      'list',
    );
    const items = res.kvs.map((kv) => this.toKeyValue(kv));
    const revision = opts.revision && opts.revision > 0 ? opts.revision : Number(res.header.revision);
    return { items, revision, remaining: Number(res.count) - items.length };
  }

  async count(prefix: string): Promise<number> {
    const res = await this.read(() => this.kv.range({ key: this.rangeStart(prefix), range_end: this.rangeEnd(prefix), count_only: true }), undefined, 'count');
    return Number(res.count);
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const k = this.k(key);
    const res = await this.write(
      () =>
        this.kv.txn({
          compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
          success: [{ request_put: { key: k, value: Buffer.from(value) } }],
        }),
      'create',
    );
    if (!res.succeeded) throw new KeyExistsError(`key ${key} already exists`, key);
    const revision = Number(res.header.revision);
    return { key, value, createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue> {
    const k = this.k(key);
    const res = await this.write(
      () =>
        this.kv.txn({
          compare: this.preconditions(k, expectedModRevision),
          success: [{ request_put: { key: k, value: Buffer.from(value), prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        }),
      'update',
    );
    if (!res.succeeded) throw this.preconditionError(key, res.responses[0].response_range.kvs[0]);
    const prev = res.responses[0].response_put.prev_kv;
    return { key, value, createRevision: Number(prev.create_revision), modRevision: Number(res.header.revision) };
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const k = this.k(key);
    const res = await this.write(
      () =>
        this.kv.txn({
          compare: this.preconditions(k, expectedModRevision),
          success: [{ request_delete_range: { key: k, prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        }),
      'delete',
    );
    if (!res.succeeded) throw this.preconditionError(key, res.responses[0].response_range.kvs[0]);
    return { prev: this.toKeyValue(res.responses[0].response_delete_range.prev_kvs[0]), revision: Number(res.header.revision) };
  }

  async currentRevision(): Promise<number> {
    const res = await this.read(() => this.kv.range({ key: ZERO, count_only: true }), undefined, 'read revision');
    return Number(res.header.revision);
  }

  /**
   * etcd does not report its compacted revision, so this finds the oldest readable
   * revision by binary search (a few cheap reads), starting from what this client knows.
   */
  async compactedRevision(): Promise<number> {
    let lo = Math.max(this.knownCompacted, 1);
    let hi = Math.max(await this.currentRevision(), lo);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await this.readableAt(mid)) hi = mid;
      else lo = mid + 1;
    }
    if (lo > 1) this.knownCompacted = Math.max(this.knownCompacted, lo);
    return this.knownCompacted;
  }

  async compact(revision: number): Promise<void> {
    const current = await this.currentRevision();
    if (revision > current) throw new FutureRevisionError(revision, current);
    if (revision <= this.knownCompacted) return;
    try {
      await this.kv.compact({ revision });
    } catch (err) {
      if (!isCompacted(err)) throw wrap(err, 'compact'); // else another client compacted further
    }
    this.knownCompacted = Math.max(this.knownCompacted, revision);
  }

  watch(prefix: string, afterRevision: number, callbacks: WatchCallbacks): WatchHandle {
    const w = new EtcdWatch(Math.max(0, afterRevision), callbacks, (e) => this.toEvent(e), () => this.watches.delete(w));
    if (this.closed) {
      setImmediate(() => w.fail(new StoreError('etcd store is closed')));
      return w;
    }
    this.watches.add(w);
    void w.start(this.client, this.rangeStart(prefix), this.rangeEnd(prefix));
    return w;
  }

  async close(): Promise<void> {
    this.closed ??= (async () => {
      await this.compactor.stop();
      for (const w of [...this.watches]) w.fail(new StoreError('etcd store is closed'));
      this.client.close();
    })();
    return this.closed;
  }

  private k(key: string): Buffer {
    return Buffer.from(this.prefix + key);
  }

  /** The first key of prefix's range (etcd has no empty key: "\0" is the lowest). */
  private rangeStart(prefix: string): Buffer {
    const start = this.k(prefix);
    return start.length > 0 ? start : ZERO;
  }

  private rangeEnd(prefix: string): Buffer {
    return prefixEndBytes(this.k(prefix));
  }

  /** The key exists and, when expected is given, was last written at that revision. */
  private preconditions(key: Buffer, expected: number | undefined): ICompare[] {
    const compare: ICompare[] = [{ key, target: 'Create', result: 'Greater', create_revision: 0 }];
    if (expected !== undefined) compare.push({ key, target: 'Mod', result: 'Equal', mod_revision: expected });
    return compare;
  }

  private preconditionError(key: string, current: IKeyValue | undefined): StoreError {
    if (!current) return new KeyNotFoundError(`key ${key} not found`, key);
    return new RevisionConflictError(key, Number(current.mod_revision));
  }

  private async readableAt(revision: number): Promise<boolean> {
    try {
      await this.kv.range({ key: ZERO, revision, count_only: true });
      return true;
    } catch (err) {
      if (isCompacted(err)) return false;
      throw wrap(err, 'read');
    }
  }

  /** Runs a read, mapping etcd's revision errors to CompactedError and FutureRevisionError. */
  private async read<T>(call: () => Promise<T>, revision: number | undefined, what: string): Promise<T> {
    this.checkOpen();
    try {
      return await call();
    } catch (err) {
      if (revision && isCompacted(err)) throw new CompactedError(revision, await this.compactedRevision());
      if (revision && isFuture(err)) throw new FutureRevisionError(revision, await this.currentRevision());
      throw wrap(err, what);
    }
  }

  private async write<T>(call: () => Promise<T>, what: string): Promise<T> {
    this.checkOpen();
    try {
      return await call();
    } catch (err) {
      throw wrap(err, what);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreError('etcd store is closed');
  }

  private toKeyValue(kv: IKeyValue): KeyValue {
    return {
      key: kv.key.toString().slice(this.prefix.length),
      value: kv.value.toString(),
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
    };
  }

  private toEvent(e: IEvent): StoreEvent {
    const key = e.kv.key.toString().slice(this.prefix.length);
    const revision = Number(e.kv.mod_revision);
    const prevValue = e.prev_kv ? e.prev_kv.value.toString() : undefined;
    if (e.type === 'Delete') return { type: 'delete', key, revision, prevValue };
    if (e.kv.create_revision === e.kv.mod_revision) return { type: 'create', key, revision, value: e.kv.value.toString() };
    return { type: 'update', key, revision, value: e.kv.value.toString(), prevValue };
  }
}
