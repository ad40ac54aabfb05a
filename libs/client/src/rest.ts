import * as http from 'node:http';
import * as https from 'node:https';
import { readFileSync } from 'node:fs';
import { Catalog, type ResourceDef } from '@orch/api';
import type { KubeList, KubeObject, Status, WatchEvent } from '@orch/apimachinery';
import type { ClientConfig } from './config';
import { ApiError, RequestTimeoutError } from './errors';
import { JsonStreamDecoder } from './json-stream';
import { ServerReachability, type ServerReachabilityOptions } from './reachability';
import type { CallOptions, DeleteRequestOptions, GroupVersionResource, ListOptions, PatchOptions, PatchType, WriteOptions } from './types';

/** Version this client reports in its user agent. */
export const CLIENT_VERSION = 'v1.32.0';

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Re-read interval of `ClientConfig.tokenFile` (upstream's cached token source: one minute). */
const TOKEN_FILE_TTL_MS = 60_000;

type Query = Record<string, string | number | boolean | undefined>;

export interface RestClientOptions {
  /** Component name for the user agent `orch-<component>/v1.32.0`. */
  component: string;
  /** Per-request timeout for everything but watches (default 30 s). */
  timeoutMs?: number;
  /** Resolves `{group, version, resource}` to scope; defaults to the built-in catalog. */
  catalog?: Catalog;
  /** How {@link RestClient.serverReturned} probes a server that stopped answering. */
  reachability?: ServerReachabilityOptions;
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path (`/api/v1/...`), without query. */
  path: string;
  query?: Query;
  /** JSON-encoded when set. */
  body?: unknown;
  /** Defaults to `application/json` when there is a body. */
  contentType?: string;
  /** Overrides the client's timeout for this request. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Callbacks of a watch. `onClose` is called exactly once, last, however the watch ends. */
export interface WatchHandlers<T> {
  onEvent(event: WatchEvent<T>): void;
  /** The watch failed: non-2xx answer, ERROR event (410 Expired, ...), network error, bad stream. */
  onError?(err: Error): void;
  onClose?(): void;
}

export interface WatchHandle {
  /** Ends the watch; no callback but `onClose` runs afterwards. Idempotent. */
  stop(): void;
  /** Resolves after `onClose` ran. */
  readonly done: Promise<void>;
}

function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

function listQuery(opts: ListOptions = {}): Query {
  return {
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    limit: opts.limit,
    continue: opts.continue,
    resourceVersion: opts.resourceVersion,
    resourceVersionMatch: opts.resourceVersionMatch,
    timeoutSeconds: opts.timeoutSeconds,
    allowWatchBookmarks: opts.allowWatchBookmarks,
    sendInitialEvents: opts.sendInitialEvents,
  };
}

function writeQuery(opts: WriteOptions = {}): Query {
  return { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager, fieldValidation: opts.fieldValidation };
}

function deleteBody(opts: DeleteRequestOptions = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (opts.propagationPolicy) body['propagationPolicy'] = opts.propagationPolicy;
  if (opts.gracePeriodSeconds !== undefined) body['gracePeriodSeconds'] = opts.gracePeriodSeconds;
  if (opts.preconditions) body['preconditions'] = opts.preconditions;
  if (opts.dryRun) body['dryRun'] = ['All'];
  return body;
}

/**
 * HTTP(S) client for the gateway: keep-alive agent, TLS (CA, client cert/key, server name),
 * bearer token, JSON bodies, request timeouts. Non-2xx answers reject with {@link ApiError};
 * a request that gets no answer in time rejects with {@link RequestTimeoutError}.
 * Use {@link resource} for typed per-resource calls; call {@link close} when done.
 */
export class RestClient {
  readonly config: ClientConfig;
  readonly userAgent: string;
  private readonly base: URL;
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly catalog: Catalog;
  private readonly reachability: ServerReachability;
  private fileToken?: { value: string; readAt: number };

  constructor(config: ClientConfig, opts: RestClientOptions) {
    this.config = config;
    this.base = new URL(config.server);
    this.userAgent = `orch-${opts.component}/${CLIENT_VERSION}`;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.catalog = opts.catalog ?? new Catalog();
    const defaultPort = this.base.protocol === 'https:' ? 443 : 80;
    this.reachability = new ServerReachability(this.base.hostname.replace(/^\[|\]$/g, ''), Number(this.base.port) || defaultPort, opts.reachability);
    if (this.base.protocol === 'https:') {
      this.transport = https;
      this.agent = new https.Agent({
        keepAlive: true,
        ca: config.caPem,
        cert: config.certPem,
        key: config.keyPem,
        servername: config.tlsServerName,
        rejectUnauthorized: !config.insecureSkipTlsVerify,
      });
    } else if (this.base.protocol === 'http:') {
      this.transport = http;
      this.agent = new http.Agent({ keepAlive: true });
    } else {
      throw new Error(`unsupported server URL ${JSON.stringify(config.server)}: want https:// or http://`);
    }
  }

  /**
   * A client for one resource type. A cluster-scoped resource rejects a namespace; for a
   * namespaced one, calls that name an object use `namespace`, else the object's own
   * `metadata.namespace`, and list/watch without a namespace span all namespaces.
   * `{group, version, resource}` not in the catalog (custom resources) is treated as
   * namespaced exactly when a namespace is given.
   */
  resource<T extends KubeObject = KubeObject>(def: ResourceDef | GroupVersionResource, namespace?: string): ResourceClient<T> {
    const known = 'scope' in def ? def : this.catalog.lookup(def.group, def.version, def.resource);
    const namespaced = known ? known.scope === 'Namespaced' : namespace !== undefined;
    if (!namespaced && namespace) throw new Error(`${def.resource} is cluster-scoped: no namespace may be given (got ${JSON.stringify(namespace)})`);
    return new ResourceClient<T>(this, { group: def.group, version: def.version, resource: def.resource }, namespaced, namespace);
  }

  /** Sends one request and returns the parsed JSON answer (undefined for an empty body). */
  async request<R>(opts: RequestOptions): Promise<R> {
    const { statusCode, headers, body } = await this.send(opts);
    if (statusCode < 200 || statusCode > 299) {
      throw ApiError.fromResponse(statusCode, body.toString('utf8'), headers['retry-after'] as string | undefined);
    }
    return (body.length ? JSON.parse(body.toString('utf8')) : undefined) as R;
  }

  /**
   * Opens a watch on `path` (a collection path; `watch=true` is added). Parses the chunked
   * stream incrementally and calls `onEvent` per document; an ERROR event is reported as an
   * {@link ApiError} through `onError` and ends the watch. No client-side timeout applies:
   * bound it with `timeoutSeconds`.
   */
  watch<T>(path: string, query: Query, handlers: WatchHandlers<T>): WatchHandle {
    let closed = false;
    let stopped = false;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const url = this.url(path, { ...query, watch: true });
    const finish = (err?: Error) => {
      if (closed) return;
      closed = true;
      req.destroy();
      if (err && !stopped) safeCall(() => handlers.onError?.(err));
      safeCall(() => handlers.onClose?.());
      resolveDone();
    };
    const req = this.transport.request(url, { method: 'GET', agent: this.agent, headers: this.headers({ Accept: 'application/json' }) });
    req.on('error', (err) => finish(err));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status === 401) this.config.tokenSource?.rejected?.();
      if (status < 200 || status > 299) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => finish(ApiError.fromResponse(status, Buffer.concat(chunks).toString('utf8'), res.headers['retry-after'] as string | undefined)));
        res.on('error', (err) => finish(err));
        return;
      }
      const decoder = new JsonStreamDecoder();
      res.on('data', (chunk: Buffer) => {
        if (closed) return;
        let docs: unknown[];
        try {
          docs = decoder.push(chunk);
        } catch (err) {
          finish(err as Error);
          return;
        }
        for (const doc of docs) {
          if (closed) return;
          const ev = doc as { type?: string; object?: unknown };
          if (ev.type === 'ERROR') {
            finish(ApiError.fromWatchObject(ev.object));
            return;
          }
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED' && ev.type !== 'BOOKMARK') {
            finish(new Error(`unexpected watch event type ${JSON.stringify(ev.type)}`));
            return;
          }
          try {
            handlers.onEvent(ev as WatchEvent<T>);
          } catch (err) {
            finish(err as Error);
            return;
          }
        }
      });
      res.on('end', () => finish(decoder.hasPartial() ? new Error('watch stream ended in the middle of an event') : undefined));
      res.on('error', (err) => finish(err));
      res.on('close', () => finish(res.complete ? undefined : new Error('watch connection closed before the stream ended')));
    });
    req.end();
    return {
      stop: () => {
        stopped = true;
        finish();
      },
      done,
    };
  }

  /**
   * After a connection error: resolves true once a server that did not accept connections
   * accepts them again (one shared probe per client; `onUnreachable` is called when the first
   * attempt failed), false if it accepted them at once or `signal` aborted. Lets retry loops
   * come back as soon as a restarted server listens.
   */
  serverReturned(signal: AbortSignal, onUnreachable?: () => void): Promise<boolean> {
    return this.reachability.returned(signal, onUnreachable);
  }

  /** Destroys the agent and its sockets, in-flight requests and watches included: stop informers first. */
  close(): void {
    this.agent.destroy();
  }

  /** Full URL of an API path with query. */
  url(path: string, query?: Query): string {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    return `${this.base.origin}${prefix}${path}${encodeQuery(query)}`;
  }

  private bearerToken(): string | undefined {
    if (this.config.token) return this.config.token;
    if (this.config.tokenSource) return this.config.tokenSource.token();
    const file = this.config.tokenFile;
    if (!file) return undefined;
    const now = Date.now();
    if (!this.fileToken || now - this.fileToken.readAt >= TOKEN_FILE_TTL_MS) {
      try {
        this.fileToken = { value: readFileSync(file, 'utf8').trim(), readAt: now };
      } catch (err) {
        // Keep the last good token if a rotation is in progress; fail only if we never had one.
        if (!this.fileToken) throw err;
      }
    }
    return this.fileToken.value;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { 'User-Agent': this.userAgent, ...extra };
    const token = this.bearerToken();
    if (token) h['Authorization'] = `Bearer ${token}`;
    return h;
  }

  private send(opts: RequestOptions): Promise<{ statusCode: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    const url = this.url(opts.path, opts.query);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const extra: Record<string, string> = { Accept: 'application/json' };
    if (payload) {
      extra['Content-Type'] = opts.contentType ?? 'application/json';
      extra['Content-Length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(opts.signal.reason ?? new Error('aborted'));
        return;
      }
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const req = this.transport.request(url, { method: opts.method, agent: this.agent, headers: this.headers(extra) });
      const onAbort = () => {
        settle(() => reject(opts.signal?.reason ?? new Error('aborted')));
        req.destroy();
      };
      const timer = setTimeout(() => {
        settle(() => reject(new RequestTimeoutError(opts.method, url, timeoutMs)));
        req.destroy();
      }, timeoutMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => settle(() => reject(err)));
      req.on('response', (res) => {
        if (res.statusCode === 401) this.config.tokenSource?.rejected?.();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => settle(() => reject(err)));
        res.on('end', () => settle(() => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })));
      });
      req.end(payload);
    });
  }
}

function safeCall(fn: () => void): void {
  try {
    fn();
  } catch {
    // A throwing onError/onClose must not break the watch's own cleanup.
  }
}

/**
 * Typed calls on one resource type (SPEC "Scope and URL shapes"). Created by
 * {@link RestClient.resource}; immutable, cheap, safe to share.
 */
export class ResourceClient<T extends KubeObject = KubeObject> {
  constructor(
    readonly rest: RestClient,
    readonly gvr: GroupVersionResource,
    readonly namespaced: boolean,
    readonly namespace?: string,
  ) {}

  /** The same resource in another namespace. */
  inNamespace(namespace: string): ResourceClient<T> {
    if (!this.namespaced) throw new Error(`${this.gvr.resource} is cluster-scoped: no namespace may be given`);
    return new ResourceClient<T>(this.rest, this.gvr, true, namespace);
  }

  /** Collection path in `namespace` (all namespaces when undefined). */
  collectionPath(namespace = this.namespace): string {
    const { group, version, resource } = this.gvr;
    const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    return namespace && this.namespaced ? `${base}/namespaces/${encodeURIComponent(namespace)}/${resource}` : `${base}/${resource}`;
  }

  /** Path of one object (and optionally a subresource). */
  itemPath(name: string, subresource?: string, namespace?: string): string {
    if (!name) throw new Error(`a name is required for a single ${this.gvr.resource} object`);
    const ns = namespace ?? this.namespace;
    if (this.namespaced && !ns) throw new Error(`a namespace is required for namespaced resource ${this.gvr.resource} "${name}"`);
    return `${this.collectionPath(ns)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
  }

  private objectPath(obj: KubeObject, subresource?: string): string {
    return this.itemPath(obj.metadata.name ?? '', subresource, this.namespace ?? obj.metadata.namespace);
  }

  get(name: string, opts: CallOptions & { resourceVersion?: string } = {}): Promise<T> {
    return this.rest.request<T>({ method: 'GET', path: this.itemPath(name), query: { resourceVersion: opts.resourceVersion }, signal: opts.signal });
  }

  /** One page of the collection; follow `metadata.continue` for more. */
  list(opts: ListOptions = {}, signal?: AbortSignal): Promise<KubeList<T>> {
    return this.rest.request<KubeList<T>>({ method: 'GET', path: this.collectionPath(), query: listQuery(opts), signal });
  }

  /** POST to the collection of the client's namespace, else of `obj.metadata.namespace`. */
  create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const ns = this.namespace ?? obj.metadata.namespace;
    if (this.namespaced && !ns) throw new Error(`a namespace is required to create ${this.gvr.resource}`);
    return this.rest.request<T>({ method: 'POST', path: this.collectionPath(ns), query: writeQuery(opts), body: obj, signal: opts.signal });
  }

  /** PUT the whole object; its `metadata.resourceVersion` makes this a conditional update (409 when stale). */
  update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.objectPath(obj), query: writeQuery(opts), body: obj, signal: opts.signal });
  }

  /** PUT the object to its `status` subresource. */
  updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.objectPath(obj, 'status'), query: writeQuery(opts), body: obj, signal: opts.signal });
  }

  /**
   * PATCH with the content type of `type`. `apply` (server-side apply) needs a
   * `fieldManager` and creates the object when absent; its body is sent as JSON.
   */
  patch<R = T>(name: string, type: PatchType, body: unknown, opts: PatchOptions = {}): Promise<R> {
    if (type === 'apply' && !opts.fieldManager) throw new Error('an apply patch needs a fieldManager');
    if (type !== 'apply' && opts.force !== undefined) throw new Error('force is only allowed on apply patches');
    return this.rest.request<R>({
      method: 'PATCH',
      path: this.itemPath(name, opts.subresource),
      query: { ...writeQuery(opts), force: opts.force },
      body,
      contentType: PATCH_CONTENT_TYPES[type],
      signal: opts.signal,
    });
  }

  /** DELETE; answers the object while finalizers or grace keep it, else a Success Status. */
  delete(name: string, opts: DeleteRequestOptions = {}): Promise<T | Status> {
    return this.rest.request<T | Status>({ method: 'DELETE', path: this.itemPath(name), body: deleteBody(opts), signal: opts.signal });
  }

  /** DELETE on the collection, narrowed by selectors. */
  deleteCollection(opts: ListOptions & DeleteRequestOptions = {}): Promise<KubeList<T> | Status> {
    return this.rest.request<KubeList<T> | Status>({ method: 'DELETE', path: this.collectionPath(), query: listQuery(opts), body: deleteBody(opts), signal: opts.signal });
  }

  /** See {@link RestClient.serverReturned}. */
  serverReturned(signal: AbortSignal, onUnreachable?: () => void): Promise<boolean> {
    return this.rest.serverReturned(signal, onUnreachable);
  }

  /**
   * Watches the collection from `opts.resourceVersion`. Objects of ADDED/MODIFIED/DELETED
   * events are of type T; BOOKMARK objects carry only kind, apiVersion and resourceVersion.
   */
  watch(opts: ListOptions, handlers: WatchHandlers<T>): WatchHandle {
    return this.rest.watch<T>(this.collectionPath(), listQuery(opts), handlers);
  }

  /** GET a subresource (`scale`, `status`, `log`). */
  getSubresource<R>(name: string, subresource: string, query?: Query, opts: CallOptions = {}): Promise<R> {
    return this.rest.request<R>({ method: 'GET', path: this.itemPath(name, subresource), query, signal: opts.signal });
  }

  /** POST to a subresource (`pods/binding`, `pods/eviction`). */
  createSubresource<R>(name: string, subresource: string, body: unknown, opts: WriteOptions = {}): Promise<R> {
    return this.rest.request<R>({ method: 'POST', path: this.itemPath(name, subresource), query: writeQuery(opts), body, signal: opts.signal });
  }

  /** PUT to a subresource (`deployments/scale`). */
  updateSubresource<R>(name: string, subresource: string, body: unknown, opts: WriteOptions = {}): Promise<R> {
    return this.rest.request<R>({ method: 'PUT', path: this.itemPath(name, subresource), query: writeQuery(opts), body, signal: opts.signal });
  }
}
