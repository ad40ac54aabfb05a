// The browser's side of the dashboard: every cluster call goes to /k8s/<gateway path> on the
// dashboard, which adds the logged-in user's token. State-changing calls carry the CSRF token.

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string; ownerReferences?: OwnerReference[]; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  status?: any;
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
}

export interface TableRow {
  cells: unknown[];
  object: KubeObject;
}

export interface Table {
  kind: 'Table';
  columnDefinitions: TableColumn[];
  rows: TableRow[];
  metadata: { resourceVersion?: string };
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json';

/** A Status the gateway (or the dashboard) answered with. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

let csrfToken = '';

export interface SessionInfo {
  user: string;
  groups: string[];
  csrfToken: string;
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const s = JSON.parse(text) as { code?: number; reason?: string; message?: string; details?: unknown };
    return new ApiError(s.code ?? res.status, s.reason ?? res.statusText, s.message ?? text, s.details);
  } catch {
    return new ApiError(res.status, res.statusText, text || res.statusText);
  }
}

export async function currentSession(): Promise<SessionInfo | undefined> {
  const res = await fetch('/auth/session', { credentials: 'same-origin' });
  if (res.status === 401) return undefined;
  if (!res.ok) throw await errorOf(res);
  const s = (await res.json()) as SessionInfo;
  csrfToken = s.csrfToken;
  return s;
}

export async function login(token: string): Promise<SessionInfo> {
  const res = await fetch('/auth/login', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  if (!res.ok) throw await errorOf(res);
  const s = (await res.json()) as SessionInfo;
  csrfToken = s.csrfToken;
  return s;
}

export async function logout(): Promise<void> {
  await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': csrfToken } });
  csrfToken = '';
}

export interface RequestOptions {
  method?: string;
  body?: string;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** Raw call through the dashboard; the response as is (streams included). */
export async function call(path: string, opts: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  if (opts.contentType) headers['content-type'] = opts.contentType;
  if (opts.method && opts.method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`/k8s${path}`, { method: opts.method ?? 'GET', headers, body: opts.body, credentials: 'same-origin', signal: opts.signal });
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function request<T = any>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await call(path, opts);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Reads a streamed body line by line (watch events, followed logs) until it ends or is aborted. */
export async function readLines(res: Response, onLine: (line: string) => void): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  if (buffered) onLine(buffered);
}

/** A path on the gateway for a resource: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`... */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
  kind?: string;
}

export function collectionPath(r: ResourceRef, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${base}/${r.resource}`;
}

export function objectPath(r: ResourceRef, name: string, namespace?: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

/** Asks the gateway whether the user may do this (SelfSubjectAccessReview). */
export async function allowed(attrs: { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string }): Promise<boolean> {
  try {
    const review = await request<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      contentType: 'application/json',
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } }),
    });
    return review.status?.allowed === true;
  } catch {
    return false;
  }
}

type MuxMessage = { id: number; data?: string; end?: true; error?: { code: number; reason?: string; message?: string } };

interface OpenWatch {
  onLine: (line: string) => void;
  buffered: string;
  done: (err?: ApiError) => void;
}

/**
 * The page's watches over one WebSocket to the dashboard (`/watch`): a browser gives an origin
 * only six HTTP/1.1 connections, which streamed requests would use up across tabs. The socket
 * opens on first use; when it closes, every open watch fails (the lists relist and watch again).
 */
class WatchSocket {
  private socket?: WebSocket;
  private ready?: Promise<WebSocket>;
  private nextId = 1;
  private readonly open = new Map<number, OpenWatch>();

  private connect(): Promise<WebSocket> {
    this.ready ??= new Promise((resolve, reject) => {
      const ws = new WebSocket(`wss://${location.host}/watch`);
      ws.onopen = () => ((this.socket = ws), resolve(ws));
      ws.onerror = () => reject(new ApiError(0, 'NetworkError', 'the watch connection failed'));
      ws.onmessage = (m) => this.receive(JSON.parse(String(m.data)) as MuxMessage);
      ws.onclose = (e) => {
        this.socket = undefined;
        this.ready = undefined;
        const err = new ApiError(e.code === 4401 ? 401 : 0, 'NetworkError', `the watch connection closed (${e.code}${e.reason ? `: ${e.reason}` : ''})`);
        for (const w of this.open.values()) w.done(err);
        this.open.clear();
        reject(err);
      };
    });
    return this.ready;
  }

  private receive(m: MuxMessage): void {
    const w = this.open.get(m.id);
    if (!w) return;
    if (m.data !== undefined) {
      w.buffered += m.data;
      let nl: number;
      while ((nl = w.buffered.indexOf('\n')) >= 0) {
        w.onLine(w.buffered.slice(0, nl));
        w.buffered = w.buffered.slice(nl + 1);
      }
      return;
    }
    this.open.delete(m.id);
    if (m.error) w.done(new ApiError(m.error.code, m.error.reason ?? 'Error', m.error.message ?? 'watch refused'));
    else {
      if (w.buffered) w.onLine(w.buffered);
      w.done();
    }
  }

  /** Streams the watch at `path` (with watch=1) line by line; resolves when the server ends it. */
  async watch(path: string, accept: string, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const ws = await this.connect();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      const done = (err?: ApiError) => (err ? reject(err) : resolve());
      this.open.set(id, { onLine, buffered: '', done });
      ws.send(JSON.stringify({ op: 'watch', id, path, accept }));
      signal.addEventListener('abort', () => {
        if (!this.open.delete(id)) return;
        if (this.socket === ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ op: 'cancel', id }));
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  }
}

const watchSocket = new WatchSocket();

/** A watch of the gateway through the page's watch socket. */
export function watch(path: string, accept: string, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
  return watchSocket.watch(path, accept, onLine, signal);
}
