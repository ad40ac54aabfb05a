import type { ResourceDef } from '@orch/api';
import { Backoff, sleep, type BackoffOptions } from './backoff';
import { Indexer, NAMESPACE_INDEX, deepFreeze, namespaceIndexFunc, type IndexFunc } from './cache';
import { isGone, isServiceUnavailable } from './errors';
import { isConnectionError } from './reachability';
import type { RestClient, WatchHandle, WatchHandlers } from './rest';
import type { KubeList, KubeObject, WatchEvent } from '@orch/apimachinery';
import { objectKey, type GroupVersionResource, type ListOptions, type Logger } from './types';

/** What a reflector needs from the API: list and watch one collection. `ResourceClient` is one. */
export interface ListerWatcher<T> {
  list(opts: ListOptions, signal?: AbortSignal): Promise<KubeList<T>>;
  watch(opts: ListOptions, handlers: WatchHandlers<T>): WatchHandle;
  /** After a connection error: true once an unreachable server is back (see RestClient.serverReturned). */
  serverReturned?(signal: AbortSignal, onUnreachable?: () => void): Promise<boolean>;
}

/** Upper bound of the random wait before reconnecting to a server that came back (spreads many clients). */
const RETURN_JITTER_MS = 1000;

/**
 * Handed to `onDelete` when an object vanished while the watch was down: the relist no longer
 * had it, so its final state is unknown and `obj` is the last state the cache saw.
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {
    Object.freeze(this);
  }
}

/** Event callbacks. They should only enqueue keys; objects they get are frozen cache entries. */
export interface ResourceEventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** The object behind a delete notification, tombstone or not. */
export function unwrapTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** What {@link visitOnEvents} registers on: a SharedInformer, or anything taking event handlers. */
type EventSource<T> = { addEventHandler(handler: ResourceEventHandler<T>): unknown };

/**
 * Registers handlers on `informer` that call `visit` with the object of every add, update and
 * delete (tombstones unwrapped). On an update the new object is visited, and before it the old
 * one when `visitOld(oldObj, newObj)` holds (by default always: a change may move the object
 * to another key or owner).
 */
export function visitOnEvents<T>(informer: EventSource<T>, visit: (obj: T) => void, visitOld: (oldObj: T, newObj: T) => boolean = () => true): void {
  informer.addEventHandler({
    onAdd: visit,
    onUpdate: (oldObj, newObj) => {
      if (visitOld(oldObj, newObj)) visit(oldObj);
      visit(newObj);
    },
    onDelete: (obj) => visit(unwrapTombstone(obj)),
  });
}

/**
 * Registers handlers on `informer` that add `keyOf(obj)` to `queue`: on add, on update (the old
 * object's key and the new one's: a change may move the object to another key) and on delete
 * (tombstones unwrapped). An undefined key is skipped.
 */
export function enqueueOnEvents<T>(informer: EventSource<T>, queue: { add(key: string): void }, keyOf: (obj: T) => string | undefined): void {
  visitOnEvents(informer, (obj) => {
    const key = keyOf(obj);
    if (key !== undefined) queue.add(key);
  });
}

export interface ReflectorOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of the list (`limit`), default 500. */
  pageSize?: number;
  /** Retry backoff after failures (default 800 ms doubling to 30 s, full jitter). */
  backoff?: BackoffOptions;
  /** A watch that delivered an event or lasted this long resets the backoff (default 10 s). */
  healthyAfterMs?: number;
  /** Server-side timeout of each watch; default random in [300, 600) s like upstream. */
  watchTimeoutSeconds?: () => number;
  logger?: Logger;
  /** For log messages, e.g. `pods`. */
  name?: string;
}

/** Receives what a reflector learns, in order. Called synchronously from the reflector. */
export interface ReflectorSink<T> {
  /** A complete list at `resourceVersion`: the sink's contents become exactly `items`. */
  replace(items: T[], resourceVersion: string): void;
  /** One ADDED/MODIFIED/DELETED watch event. */
  apply(event: WatchEvent<T>): void;
}

/**
 * Keeps a sink in step with one collection (upstream reflector): list with pagination, then
 * watch from the list's resourceVersion with bookmarks. A watch that closes normally, or whose
 * connection was refused or cut (a server stopping or restarting), is resumed from the last
 * resourceVersion seen (events and bookmarks); 410 Gone or any other failure leads to a relist.
 * Between failures it waits with exponential backoff + jitter (capped at 30 s), except after a
 * failure that may mean the server is going away (a connection refused or cut, a watch ended
 * early, a 503 — what a closing server answers on its open connections): if the server then
 * refuses connections, the wait ends as soon as it accepts them again (plus up to 1 s of
 * jitter), so a restarted server is not left unwatched for a grown backoff. It never gives up
 * until {@link stop}.
 */
export class Reflector<T extends KubeObject> {
  private readonly abort = new AbortController();
  private readonly logger: Logger;
  private lastSyncRv = '';
  private needList = true;
  private watchHandle?: WatchHandle;
  private loop?: Promise<void>;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    private readonly opts: ReflectorOptions = {},
  ) {
    this.logger = opts.logger ?? console;
  }

  /** ResourceVersion of the last list, event or bookmark applied. */
  lastSyncResourceVersion(): string {
    return this.lastSyncRv;
  }

  /** Starts the list/watch loop in the background. */
  run(): void {
    if (this.loop) throw new Error('reflector already started');
    this.loop = this.runLoop();
  }

  /** Stops the loop, the open watch, any in-flight list and backoff timer; resolves when all ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.watchHandle?.stop();
    await this.loop;
  }

  private async runLoop(): Promise<void> {
    const signal = this.abort.signal;
    const backoff = new Backoff(this.opts.backoff);
    while (!signal.aborted) {
      let healthy = false;
      // The server may be gone (a cut connection, a 503, or a watch it ended early): wait for it to listen again.
      let serverMayBeGone = false;
      let watching = false;
      try {
        if (this.needList) await this.list(signal);
        watching = true;
        healthy = await this.watchOnce(signal);
        serverMayBeGone = !healthy;
      } catch (err) {
        if (signal.aborted) break;
        const connectionLost = isConnectionError(err);
        serverMayBeGone = connectionLost || isServiceUnavailable(err);
        // A watch cut with its connection resumes where it was; the server says 410 if it cannot.
        const resume = watching && connectionLost;
        if (!resume) this.needList = true;
        const what = `${this.opts.name ?? 'reflector'}: ${(err as Error).message}`;
        if (isGone(err)) this.logger.info(`${what}; relisting`);
        else if (serverMayBeGone) this.logger.warn(`${what}; ${resume ? 'resuming the watch' : 'relisting'} once the server answers`);
        else this.logger.warn(`${what}; relisting after backoff`);
      }
      if (healthy) backoff.reset();
      else if (!(await this.pause(backoff.next(), serverMayBeGone, signal))) break;
    }
  }

  /**
   * Waits `delayMs`; when the server may be gone, only until it accepts connections again if it
   * did not at first (then a random wait of at most 1 s). Resolves false if stopped.
   */
  private async pause(delayMs: number, serverMayBeGone: boolean, signal: AbortSignal): Promise<boolean> {
    // Stopped while watching: an abort listener added now would never fire.
    if (signal.aborted) return false;
    if (!serverMayBeGone || !this.lw.serverReturned) return sleep(delayMs, signal);
    const waiting = new AbortController();
    const onStop = () => waiting.abort();
    signal.addEventListener('abort', onStop, { once: true });
    try {
      const name = this.opts.name ?? 'reflector';
      const returned = this.lw.serverReturned(waiting.signal, () => this.logger.info(`${name}: the server does not accept connections; waiting for it`)).then((back) => {
        if (back) waiting.abort();
        return back;
      });
      await sleep(delayMs, waiting.signal);
      waiting.abort();
      if (!(await returned) || signal.aborted) return !signal.aborted;
      this.logger.info(`${name}: the server accepts connections again; reconnecting`);
      return sleep(Math.random() * Math.min(delayMs, RETURN_JITTER_MS), signal);
    } finally {
      signal.removeEventListener('abort', onStop);
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.lw.list(
        { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector, limit: this.opts.pageSize ?? 500, continue: cont },
        signal,
      );
      const kind = page.kind?.endsWith('List') ? page.kind.slice(0, -'List'.length) : '';
      for (const item of page.items) {
        // List items may omit their type; handlers and event recorders want it.
        if (!item.apiVersion && page.apiVersion) item.apiVersion = page.apiVersion;
        if (!item.kind && kind) item.kind = kind;
        items.push(item);
      }
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? '';
    } while (cont && !signal.aborted);
    if (signal.aborted) return;
    this.sink.replace(items, rv);
    this.lastSyncRv = rv;
    this.needList = false;
  }

  /** One watch; resolves on a normal close (true if it was healthy), rejects on failure. */
  private watchOnce(signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        resolve(false);
        return;
      }
      const started = Date.now();
      let events = 0;
      let failure: Error | undefined;
      const timeoutSeconds = this.opts.watchTimeoutSeconds?.() ?? 300 + Math.floor(Math.random() * 300);
      this.watchHandle = this.lw.watch(
        {
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          resourceVersion: this.lastSyncRv,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        {
          onEvent: (ev) => {
            events++;
            if (ev.type !== 'BOOKMARK') this.sink.apply(ev);
            this.lastSyncRv = ev.object.metadata?.resourceVersion || this.lastSyncRv;
          },
          onError: (err) => (failure = err),
          onClose: () => {
            this.watchHandle = undefined;
            if (failure) reject(failure);
            else resolve(events > 0 || Date.now() - started >= (this.opts.healthyAfterMs ?? 10_000));
          },
        },
      );
    });
  }
}

type Notification<T> =
  | { seq: number; kind: 'add'; obj: T }
  | { seq: number; kind: 'update'; old: T; obj: T }
  | { seq: number; kind: 'delete'; obj: T | DeletedFinalStateUnknown<T> }
  | { seq: number; kind: 'synced' }
  | { seq: number; kind: 'replay'; listener: Listener<T>; objs: T[] };

interface Listener<T> {
  handler: ResourceEventHandler<T>;
  /** Notifications with seq <= since predate this listener (its replay covers them). */
  since: number;
}

export interface InformerOptions extends ReflectorOptions {
  /**
   * How cached objects are frozen: `deep` (default outside production) makes any mutation
   * throw; `shallow` (default when NODE_ENV=production) freezes only the top level.
   */
  freeze?: 'deep' | 'shallow';
  /** Notifications dispatched per macrotask before yielding to I/O (default 500). */
  dispatchBatch?: number;
}

/**
 * Shared informer (upstream shared_informer.go): one reflector feeding one keyed, indexed
 * cache, and any number of event handlers.
 *
 * Contract:
 * - The cache is a Map by `namespace/name`; reads (`get`, `list`, `byIndex`) are O(1) plus
 *   result size and return the cached objects themselves, which are frozen: copy before
 *   changing (`structuredClone`).
 * - The cache is updated as events arrive; handlers are called later, in event order, from
 *   one dispatcher (never from the watch stream callback), so a handler may see a cache
 *   already newer than the notification it is handling. Handler errors are logged.
 * - A relist (after 410 Gone or a failed watch) is diffed against the cache: new keys →
 *   onAdd, changed resourceVersion → onUpdate, vanished keys → onDelete with a
 *   {@link DeletedFinalStateUnknown} tombstone. Watch DELETED events give the final object.
 * - A handler added after start first gets onAdd for every object cached at that moment.
 * - `hasSynced()` turns true once the first complete list has been stored and its
 *   notifications dispatched; it stays true across relists.
 * - `stop()` ends the watch, backoff timers and dispatcher; nothing is called afterwards.
 */
export class SharedInformer<T extends KubeObject> {
  private readonly indexer = new Indexer<T>();
  private readonly reflector: Reflector<T>;
  private readonly logger: Logger;
  private readonly freeze: (obj: T) => T;
  private readonly listeners = new Set<Listener<T>>();
  private readonly queue: Notification<T>[] = [];
  private queueHead = 0;
  private seq = 0;
  private drainTimer?: NodeJS.Immediate;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private state: 'new' | 'running' | 'stopped' = 'new';

  constructor(lw: ListerWatcher<T>, private readonly opts: InformerOptions = {}) {
    this.logger = opts.logger ?? console;
    const mode = opts.freeze ?? (process.env['NODE_ENV'] === 'production' ? 'shallow' : 'deep');
    this.freeze = mode === 'deep' ? deepFreeze : (o) => Object.freeze(o);
    this.indexer.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    this.reflector = new Reflector<T>(lw, { replace: (items, rv) => this.replace(items, rv), apply: (ev) => this.apply(ev) }, opts);
  }

  /** Registers handlers; returns a function that unregisters them. */
  addEventHandler(handler: ResourceEventHandler<T>): () => void {
    const listener: Listener<T> = { handler, since: this.seq };
    this.listeners.add(listener);
    if (this.indexer.size > 0) this.enqueue({ kind: 'replay', listener, objs: this.indexer.list() });
    return () => this.listeners.delete(listener);
  }

  /** Adds a secondary index (existing objects are indexed at once). */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.indexer.addIndexer(name, fn);
  }

  get(key: string): T | undefined {
    return this.indexer.get(key);
  }

  list(): T[] {
    return this.indexer.list();
  }

  keys(): string[] {
    return this.indexer.keys();
  }

  byIndex(name: string, value: string): T[] {
    return this.indexer.byIndex(name, value);
  }

  /** Objects in one namespace (via the built-in namespace index). */
  listInNamespace(namespace: string): T[] {
    return this.indexer.byIndex(NAMESPACE_INDEX, namespace);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once synced, false if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.state === 'stopped' || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        resolve(false);
      };
      const waiter = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.synced);
      };
      this.syncWaiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  get running(): boolean {
    return this.state === 'running';
  }

  /** Starts listing and watching. */
  run(): void {
    if (this.state !== 'new') throw new Error(`${this.opts.name ?? 'informer'}: cannot run, already ${this.state}`);
    this.state = 'running';
    this.reflector.run();
  }

  /** Stops the reflector and the dispatcher; idempotent. Pending notifications are dropped. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    await this.reflector.stop();
    if (this.drainTimer) clearImmediate(this.drainTimer);
    this.drainTimer = undefined;
    this.queue.length = 0;
    this.queueHead = 0;
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }

  private replace(items: T[], _rv: string): void {
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = this.freeze(raw);
      const key = objectKey(obj);
      seen.add(key);
      const old = this.indexer.get(key);
      if (old === undefined) {
        this.indexer.set(key, obj);
        this.enqueue({ kind: 'add', obj });
      } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        this.indexer.set(key, obj);
        this.enqueue({ kind: 'update', old, obj });
      }
    }
    for (const [key, old] of [...this.indexer.entries()]) {
      if (seen.has(key)) continue;
      this.indexer.delete(key);
      this.enqueue({ kind: 'delete', obj: new DeletedFinalStateUnknown(key, old) });
    }
    if (!this.synced) this.enqueue({ kind: 'synced' });
  }

  private apply(ev: WatchEvent<T>): void {
    const obj = this.freeze(ev.object);
    const key = objectKey(obj);
    if (ev.type === 'DELETED') {
      if (this.indexer.delete(key) !== undefined) this.enqueue({ kind: 'delete', obj });
      return;
    }
    const old = this.indexer.get(key);
    this.indexer.set(key, obj);
    this.enqueue(old === undefined ? { kind: 'add', obj } : { kind: 'update', old, obj });
  }

  private enqueue(n: DistributiveOmit<Notification<T>, 'seq'>): void {
    if (this.state === 'stopped') return;
    this.queue.push({ ...n, seq: ++this.seq } as Notification<T>);
    if (!this.drainTimer && this.state === 'running') this.drainTimer = setImmediate(() => this.drain());
  }

  private drain(): void {
    this.drainTimer = undefined;
    const batch = this.opts.dispatchBatch ?? 500;
    for (let i = 0; i < batch && this.queueHead < this.queue.length; i++) {
      const n = this.queue[this.queueHead++];
      this.dispatch(n);
      if (this.state !== 'running') return;
    }
    if (this.queueHead >= this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else {
      this.drainTimer = setImmediate(() => this.drain());
    }
  }

  private dispatch(n: Notification<T>): void {
    if (n.kind === 'synced') {
      this.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
      return;
    }
    if (n.kind === 'replay') {
      if (!this.listeners.has(n.listener)) return;
      for (const obj of n.objs) this.call('onAdd', () => n.listener.handler.onAdd?.(obj));
      return;
    }
    for (const l of [...this.listeners]) {
      if (n.seq <= l.since) continue;
      const h = l.handler;
      if (n.kind === 'add') this.call('onAdd', () => h.onAdd?.(n.obj));
      else if (n.kind === 'update') this.call('onUpdate', () => h.onUpdate?.(n.old, n.obj));
      else this.call('onDelete', () => h.onDelete?.(n.obj));
    }
  }

  private call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error(`${this.opts.name ?? 'informer'}: ${what} handler failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Selects the informer a factory returns: one per resource + namespace + selectors. */
export interface InformerSelection {
  /** Overrides the factory's namespace; '' means all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerFactoryOptions {
  /** Default namespace of the informers (all namespaces when unset). */
  namespace?: string;
  /** Options for every informer the factory creates. */
  informer?: Omit<InformerOptions, 'labelSelector' | 'fieldSelector' | 'name'>;
}

/**
 * Hands out one {@link SharedInformer} per resource + namespace + selectors, so components
 * share caches and watches. `start()` runs every informer created so far; informers
 * requested after `start()` run at once.
 */
export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private started = false;
  private shutDown = false;

  constructor(
    private readonly client: RestClient,
    private readonly opts: InformerFactoryOptions = {},
  ) {}

  informerFor<T extends KubeObject = KubeObject>(def: ResourceDef | GroupVersionResource, sel: InformerSelection = {}): SharedInformer<T> {
    if (this.shutDown) throw new Error('informer factory is shut down');
    const namespace = (sel.namespace ?? this.opts.namespace) || undefined;
    const key = [def.group, def.version, def.resource, namespace ?? '', sel.labelSelector ?? '', sel.fieldSelector ?? ''].join('|');
    let inf = this.informers.get(key);
    if (!inf) {
      const rc = this.client.resource<KubeObject>(def, namespace);
      inf = new SharedInformer<KubeObject>(rc, { ...this.opts.informer, labelSelector: sel.labelSelector, fieldSelector: sel.fieldSelector, name: `${def.resource}${namespace ? ` in ${namespace}` : ''}` });
      this.informers.set(key, inf);
      if (this.started) inf.run();
    }
    return inf as unknown as SharedInformer<T>;
  }

  /** Runs every informer not yet running. */
  start(): void {
    if (this.shutDown) throw new Error('informer factory is shut down');
    this.started = true;
    for (const inf of this.informers.values()) if (!inf.running) inf.run();
  }

  /** Resolves true when every informer has synced; false if `signal` aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((inf) => inf.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** Stops every informer; resolves when all have ended. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    await Promise.all([...this.informers.values()].map((inf) => inf.stop()));
  }
}
