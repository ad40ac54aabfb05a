import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { applyPatch, type Operation } from 'fast-json-patch';
import type { KubeObject } from '@orch/apimachinery';

/**
 * A small in-memory API server on a loopback port that speaks the gateway's wire format
 * (JSON objects and lists with resourceVersion, `limit`/`continue`, chunked watch streams
 * with BOOKMARKs, 409/404/410 Status answers). It is the test peer for the client's
 * protocol handling; the real gateway is exercised by integration tests.
 * Test-only: not exported from the library.
 */

export interface PeerRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Client port of the connection, to see keep-alive reuse. */
  remotePort?: number;
}

/**
 * A canned answer: JSON `body`, or raw `chunks` written one by one (with `gapMs` between)
 * before the end, no answer at all (`hang`) until the peer stops, or the connection cut
 * without an answer (`reset`).
 */
export interface PeerResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  chunks?: (string | Buffer)[];
  gapMs?: number;
  hang?: boolean;
  reset?: boolean;
}

interface Stored {
  gvr: string;
  key: string;
  obj: KubeObject;
}

interface HistoryEntry extends Stored {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
}

interface Watcher {
  gvr: string;
  namespace?: string;
  match: (o: KubeObject) => boolean;
  bookmarks: boolean;
  res: http.ServerResponse;
}

interface Parsed {
  gvr: string;
  group: string;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message });

function parsePath(path: string): Parsed | undefined {
  const seg = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (seg[0] === 'api' && seg.length >= 3) {
    group = '';
    rest = seg.slice(1);
  } else if (seg[0] === 'apis' && seg.length >= 4) {
    group = seg[1];
    rest = seg.slice(2);
  } else return undefined;
  const version = rest[0];
  rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  return { gvr: `${group}/${version}/${resource}`, group, version, namespace, name, subresource };
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function labelMatcher(selector: string | null): (o: KubeObject) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(',').map((t) => t.trim());
  return (o) => {
    const labels = o.metadata.labels ?? {};
    return terms.every((t) => {
      let m: RegExpExecArray | null;
      if ((m = /^([^!=]+)!=(.*)$/.exec(t))) return labels[m[1]] !== m[2];
      if ((m = /^([^!=]+)==?(.*)$/.exec(t))) return labels[m[1]] === m[2];
      if (t.startsWith('!')) return !(t.slice(1) in labels);
      return t in labels;
    });
  };
}

function fieldMatcher(selector: string | null): (o: KubeObject) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(',').map((t) => /^([^!=]+)(!=|==?)(.*)$/.exec(t.trim()));
  return (o) =>
    terms.every((m) => {
      if (!m) return false;
      const value = m[1] === 'metadata.name' ? o.metadata.name : m[1] === 'metadata.namespace' ? o.metadata.namespace : undefined;
      return m[2] === '!=' ? value !== m[3] : value === m[3];
    });
}

export class ApiPeer {
  readonly requests: PeerRequest[] = [];
  /** Set by {@link compact}: watches and continue tokens from before it get 410. */
  compactedRv = 0;
  /** How a too-old watch is refused: 200 + ERROR event (watch cache) or a plain 410 answer. */
  goneMode: 'event' | 'status' = 'event';
  /** While true, writes are not sent to open watches (as if the connection stalled). */
  paused = false;
  private rv = 1;
  private readonly objects = new Map<string, Map<string, Stored>>();
  private readonly history: HistoryEntry[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly interceptors: ((req: PeerRequest) => PeerResponse | undefined)[] = [];
  private downPort?: number;
  /** Set by shutDown(): requests on connections still open are answered 503. */
  private closing = false;
  /** Requests answered 503 because the peer was shutting down. */
  refusedWhileClosing = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<ApiPeer> {
    const server = http.createServer();
    const peer = new ApiPeer(server);
    server.on('request', (req, res) => peer.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return peer;
  }

  get url(): string {
    const port = this.downPort ?? (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${port}`;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Ends open watches and closes the server. */
  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * A server restart, first half: cuts every connection and stops listening, keeping the
   * objects and their history (as a restarted API server on the same store would).
   */
  async goDown(): Promise<void> {
    this.downPort = (this.server.address() as AddressInfo).port;
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * A server restart, first half, done gracefully as the gateway does it: stops listening,
   * then ends every watch normally; requests still arriving on open connections are answered
   * 503 with `Connection: close` (as a closing Fastify server does) until {@link comeBack}.
   */
  async shutDown(): Promise<void> {
    this.downPort = (this.server.address() as AddressInfo).port;
    this.closing = true;
    this.server.close();
    this.closeWatches();
  }

  /** Listens again on the port it had before {@link goDown} or {@link shutDown}. */
  async comeBack(): Promise<void> {
    if (this.downPort === undefined) throw new Error('comeBack() without goDown() or shutDown()');
    const port = this.downPort;
    this.downPort = undefined;
    this.closing = false;
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }

  /** Answers matching requests before the normal handling; return undefined to pass. */
  intercept(fn: (req: PeerRequest) => PeerResponse | undefined): void {
    this.interceptors.push(fn);
  }

  /** Requests whose method and path match. */
  requestsTo(method: string, pathPrefix: string): PeerRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));
  }

  /** List (not watch) requests to a collection path. */
  lists(path: string): PeerRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.path === path && !r.query.get('watch'));
  }

  /** Watch requests to a collection path. */
  watches(path: string): PeerRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.path === path && r.query.get('watch') === 'true');
  }

  /** Objects currently stored for a `group/version/resource` key. */
  stored(gvr: string): KubeObject[] {
    return [...(this.objects.get(gvr)?.values() ?? [])].map((s) => s.obj);
  }

  /** Writes an object directly (as another client would), emitting ADDED or MODIFIED. */
  put(gvr: string, obj: KubeObject): KubeObject {
    const key = this.key(obj);
    const exists = this.objects.get(gvr)?.has(key) ?? false;
    const stored = this.store(gvr, { ...obj, metadata: { uid: randomUUID(), creationTimestamp: new Date().toISOString(), ...obj.metadata } });
    this.record(exists ? 'MODIFIED' : 'ADDED', gvr, stored);
    return stored;
  }

  /** Deletes an object directly, emitting DELETED. */
  remove(gvr: string, namespace: string | undefined, name: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    const s = this.objects.get(gvr)?.get(key);
    if (!s) return;
    this.objects.get(gvr)?.delete(key);
    this.rv++;
    this.record('DELETED', gvr, { ...s.obj, metadata: { ...s.obj.metadata, resourceVersion: String(this.rv) } });
  }

  /** Drops the event history: watches from an older resourceVersion now get 410. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history.length = 0;
  }

  /** Sends a BOOKMARK at the current resourceVersion to watches that asked for them. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (w.bookmarks) w.res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } } }) + '\n');
    }
  }

  /** Ends every open watch normally (as a server-side timeout would). */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  private key(obj: KubeObject): string {
    return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : (obj.metadata.name ?? '');
  }

  private store(gvr: string, obj: KubeObject): KubeObject {
    this.rv++;
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } };
    let m = this.objects.get(gvr);
    if (!m) this.objects.set(gvr, (m = new Map()));
    m.set(this.key(stored), { gvr, key: this.key(stored), obj: stored });
    return stored;
  }

  private record(type: HistoryEntry['type'], gvr: string, obj: KubeObject): void {
    const entry: HistoryEntry = { rv: this.rv, type, gvr, key: this.key(obj), obj };
    this.history.push(entry);
    if (this.paused) return;
    for (const w of this.watchers) this.send(w, entry);
  }

  private send(w: Watcher, e: HistoryEntry): void {
    if (e.gvr !== w.gvr || (w.namespace && e.obj.metadata.namespace !== w.namespace) || !w.match(e.obj)) return;
    w.res.write(JSON.stringify({ type: e.type, object: e.obj }) + '\n');
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://peer');
      const pr: PeerRequest = { method: req.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), remotePort: req.socket.remotePort };
      this.requests.push(pr);
      if (this.closing) {
        this.refusedWhileClosing++;
        this.json(res, 503, status(503, 'ServiceUnavailable', 'the server is shutting down'), { Connection: 'close' });
        return;
      }
      for (const fn of this.interceptors) {
        const answer = fn(pr);
        if (answer) {
          this.respondCanned(res, answer);
          return;
        }
      }
      const p = parsePath(u.pathname);
      if (!p) {
        this.json(res, 404, status(404, 'NotFound', `no route for ${u.pathname}`));
        return;
      }
      this.route(pr, p, res);
    });
  }

  private respondCanned(res: http.ServerResponse, a: PeerResponse): void {
    if (a.hang) return;
    if (a.reset) {
      res.socket?.destroy();
      return;
    }
    if (!a.chunks) {
      this.json(res, a.status, a.body, a.headers);
      return;
    }
    res.writeHead(a.status, { 'Content-Type': 'application/json', ...a.headers });
    const parts = [...a.chunks];
    const next = () => {
      const part = parts.shift();
      if (part === undefined) {
        res.end();
        return;
      }
      res.write(part);
      setTimeout(next, a.gapMs ?? 1);
    };
    next();
  }

  private json(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
    res.end(text);
  }

  private route(pr: PeerRequest, p: Parsed, res: http.ServerResponse): void {
    const q = pr.query;
    const body = pr.body ? (JSON.parse(pr.body) as Record<string, unknown>) : undefined;
    const key = (name: string) => (p.namespace ? `${p.namespace}/${name}` : name);
    const existing = p.name ? this.objects.get(p.gvr)?.get(key(p.name)) : undefined;
    const notFound = () => this.json(res, 404, status(404, 'NotFound', `${p.gvr} "${p.name}" not found`));

    if (!p.name) {
      if (pr.method === 'GET' && (q.get('watch') === 'true' || q.get('watch') === '1')) return this.watch(p, q, res);
      if (pr.method === 'GET') return this.list(p, q, res);
      if (pr.method === 'POST') return this.create(p, body as unknown as KubeObject, res);
      if (pr.method === 'DELETE') {
        const match = this.matcher(p, q);
        const gone = [...(this.objects.get(p.gvr)?.values() ?? [])].filter((s) => match(s.obj));
        for (const s of gone) this.remove(p.gvr, s.obj.metadata.namespace, s.obj.metadata.name ?? '');
        return this.json(res, 200, { kind: 'List', apiVersion: 'v1', metadata: {}, items: gone.map((s) => s.obj) });
      }
    }
    if (p.subresource && pr.method === 'POST') {
      if (!existing) return notFound();
      return this.json(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    }
    if (pr.method === 'GET') return existing ? this.json(res, 200, existing.obj) : notFound();
    if (pr.method === 'PUT') {
      if (!existing) return notFound();
      const obj = body as unknown as KubeObject;
      const rv = obj.metadata?.resourceVersion;
      if (rv && rv !== existing.obj.metadata.resourceVersion) {
        return this.json(res, 409, status(409, 'Conflict', `Operation cannot be fulfilled on ${p.gvr} "${p.name}": the object has been modified; please apply your changes to the latest version and try again`));
      }
      const next = p.subresource === 'status' ? { ...existing.obj, status: (obj as unknown as Record<string, unknown>)['status'] } : { ...obj, metadata: { ...obj.metadata, uid: existing.obj.metadata.uid } };
      const stored = this.store(p.gvr, next);
      this.record('MODIFIED', p.gvr, stored);
      return this.json(res, 200, stored);
    }
    if (pr.method === 'PATCH') {
      const type = pr.headers['content-type'];
      if (!existing) {
        if (type !== 'application/apply-patch+yaml') return notFound();
        return this.create(p, { ...(body as unknown as KubeObject), metadata: { ...(body as unknown as KubeObject).metadata, name: p.name } }, res);
      }
      const patched = type === 'application/json-patch+json' ? applyPatch(structuredClone(existing.obj), body as unknown as Operation[]).newDocument : (mergePatch(existing.obj, body) as KubeObject);
      const stored = this.store(p.gvr, patched);
      this.record('MODIFIED', p.gvr, stored);
      return this.json(res, 200, stored);
    }
    if (pr.method === 'DELETE') {
      if (!existing) return notFound();
      const pre = (body?.['preconditions'] ?? {}) as { uid?: string; resourceVersion?: string };
      if ((pre.uid && pre.uid !== existing.obj.metadata.uid) || (pre.resourceVersion && pre.resourceVersion !== existing.obj.metadata.resourceVersion)) {
        return this.json(res, 409, status(409, 'Conflict', 'Precondition failed'));
      }
      this.remove(p.gvr, p.namespace, p.name ?? '');
      return this.json(res, 200, existing.obj);
    }
    this.json(res, 405, status(405, 'MethodNotAllowed', `${pr.method} not supported`));
  }

  private matcher(p: Parsed, q: URLSearchParams): (o: KubeObject) => boolean {
    const labels = labelMatcher(q.get('labelSelector'));
    const fields = fieldMatcher(q.get('fieldSelector'));
    return (o) => (!p.namespace || o.metadata.namespace === p.namespace) && labels(o) && fields(o);
  }

  private create(p: Parsed, obj: KubeObject, res: http.ServerResponse): void {
    const meta = { ...obj.metadata };
    if (p.namespace) meta.namespace = p.namespace;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomUUID().slice(0, 5)}`;
    if (!meta.name) return this.json(res, 422, status(422, 'Invalid', 'metadata.name: Required value'));
    const key = meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
    if (this.objects.get(p.gvr)?.has(key)) return this.json(res, 409, status(409, 'AlreadyExists', `${p.gvr} "${meta.name}" already exists`));
    delete meta.resourceVersion;
    const stored = this.store(p.gvr, { ...obj, metadata: { ...meta, uid: randomUUID(), creationTimestamp: new Date().toISOString() } });
    this.record('ADDED', p.gvr, stored);
    this.json(res, 201, stored);
  }

  private list(p: Parsed, q: URLSearchParams, res: http.ServerResponse): void {
    const match = this.matcher(p, q);
    const limit = Number(q.get('limit') ?? 0);
    let after = '';
    let listRv = this.rv;
    const token = q.get('continue');
    if (token) {
      const t = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { rv: number; after: string };
      if (t.rv < this.compactedRv) return this.json(res, 410, status(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.'));
      after = t.after;
      listRv = t.rv;
    }
    const all = [...(this.objects.get(p.gvr)?.values() ?? [])].filter((s) => match(s.obj)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const rest = all.filter((s) => s.key > after);
    const page = limit > 0 ? rest.slice(0, limit) : rest;
    const more = page.length < rest.length;
    const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
    if (more) metadata['continue'] = Buffer.from(JSON.stringify({ rv: listRv, after: page[page.length - 1].key })).toString('base64');
    this.json(res, 200, { kind: 'List', apiVersion: p.group ? `${p.group}/${p.version}` : p.version, metadata, items: page.map((s) => s.obj) });
  }

  private watch(p: Parsed, q: URLSearchParams, res: http.ServerResponse): void {
    const from = q.get('resourceVersion');
    if (from && from !== '0' && Number(from) < this.compactedRv) {
      const gone = status(410, 'Expired', `too old resource version: ${from} (${this.compactedRv})`);
      if (this.goneMode === 'status') return this.json(res, 410, gone);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ type: 'ERROR', object: gone }) + '\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = { gvr: p.gvr, namespace: p.namespace, match: this.matcher(p, q), bookmarks: q.get('allowWatchBookmarks') === 'true', res };
    if (!from || from === '0') {
      for (const s of this.objects.get(p.gvr)?.values() ?? []) this.send(w, { ...s, rv: 0, type: 'ADDED' });
    } else {
      for (const e of this.history) if (e.rv > Number(from)) this.send(w, e);
    }
    this.watchers.add(w);
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      clearTimeout(timer);
      this.watchers.delete(w);
    });
  }
}
