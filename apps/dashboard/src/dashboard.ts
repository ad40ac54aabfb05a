import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server } from 'node:http';
import { extname, join, normalize } from 'node:path';
import type { Duplex, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@orch/server-common';
import { WebSocketServer, type WebSocket } from 'ws';
import { GatewayProxy } from './gateway-proxy';
import { csrfTokenMatches, SessionStore, type Session, type SessionLimits } from './sessions';
import { serveWatches } from './watch-mux';

export const SESSION_COOKIE = 'orch_dashboard_session';
export const CSRF_HEADER = 'x-csrf-token';
/** Browser calls under this prefix go to the gateway: `/k8s/api/v1/pods` → `/api/v1/pods`. */
export const API_PREFIX = '/k8s/';
/** The WebSocket carrying every watch of a page (see watch-mux.ts). */
export const WATCH_PATH = '/watch';
const MAX_LOGIN_BODY_BYTES = 16 * 1024;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SELF_SUBJECT_REVIEW = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

/** What the browser may load and talk to: this origin only (the UI bundle has no inline script). */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export interface DashboardConfig {
  gateway: { server: string; ca: string };
  /** Directory of the built UI (index.html and assets/). */
  uiDir: string;
  sessions: SessionLimits;
  logger: Logger;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** True when the request comes from a page of this origin (or names none, as non-browser clients do). */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined) return origin === `https://${req.headers.host}`;
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, code, message };
}

async function readBody(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`the body is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

/**
 * The dashboard's HTTP surface: `/auth/*` (login with a bearer token, session, logout), the
 * gateway behind `/k8s/*` with the session's token, WebSocket upgrades for exec, one WebSocket
 * per page carrying its watches (`/watch`), and the UI.
 * Every state-changing call needs the session's CSRF token in `X-CSRF-Token` and a same-origin
 * Origin; the session cookie is HttpOnly, Secure and SameSite=Strict.
 */
export class Dashboard {
  readonly sessions: SessionStore;
  readonly gateway: GatewayProxy;
  private readonly sweeper: NodeJS.Timeout;
  private readonly watchSockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  /** The watch sockets of each session: logout closes them. */
  private readonly socketsOf = new Map<string, Set<WebSocket>>();

  constructor(private readonly config: DashboardConfig) {
    this.sessions = new SessionStore(config.sessions);
    this.gateway = new GatewayProxy(config.gateway);
    this.sweeper = setInterval(() => this.sessions.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Registers the routes on the app's Fastify instance and the upgrade handler on its server. */
  install(app: FastifyInstance, server: Server): void {
    // Bodies stay unread streams: the proxy passes them on as they arrive.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));
    app.addHook('onSend', async (_req, reply) => {
      reply.headers(SECURITY_HEADERS);
    });
    app.post('/auth/login', (req, reply) => this.login(req, reply));
    app.get('/auth/session', (req, reply) => this.session(req, reply));
    app.post('/auth/logout', (req, reply) => this.logout(req, reply));
    app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: `${API_PREFIX}*`, handler: (req, reply) => this.proxy(req, reply) });
    app.get('/*', (req, reply) => this.asset(req, reply));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  close(): void {
    for (const ws of this.watchSockets.clients) ws.terminate();
    clearInterval(this.sweeper);
    this.gateway.close();
  }

  private sessionOf(req: IncomingMessage): Session | undefined {
    return this.sessions.get(cookieValue(req.headers.cookie, SESSION_COOKIE));
  }

  private async login(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!sameOrigin(req.raw)) return void reply.code(403).send(status(403, 'Forbidden', 'login from another origin'));
    let token: unknown;
    try {
      token = (JSON.parse((await readBody(req.raw, MAX_LOGIN_BODY_BYTES)).toString('utf8')) as { token?: unknown }).token;
    } catch (err) {
      return void reply.code(400).send(status(400, 'BadRequest', `the body must be JSON {"token": "..."}: ${(err as Error).message}`));
    }
    if (typeof token !== 'string' || !/^[\x21-\x7e]{1,8192}$/.test(token.trim())) {
      return void reply.code(400).send(status(400, 'BadRequest', 'token: a bearer token (printable characters, no spaces) is required'));
    }
    const review = await this.gateway.json<SelfSubjectReview>({ method: 'POST', path: SELF_SUBJECT_REVIEW, token: token.trim(), body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    const user = review.body.status?.userInfo;
    if (review.status === 401 || (review.status < 300 && !user?.username)) {
      this.config.logger.info('login refused', { remote: req.ip });
      return void reply.code(401).send(status(401, 'Unauthorized', 'the gateway did not accept this token'));
    }
    if (review.status >= 300) return void reply.code(502).send(status(502, 'BadGateway', `the gateway answered ${review.status} to the login check`));
    const session = this.sessions.create(token.trim(), user!.username!, user!.groups ?? []);
    this.config.logger.info('logged in', { user: session.user, remote: req.ip });
    reply.header('set-cookie', `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; Secure; SameSite=Strict`);
    reply.code(201).send({ user: session.user, groups: session.groups, csrfToken: session.csrfToken });
  }

  private session(req: FastifyRequest, reply: FastifyReply): void {
    const session = this.sessionOf(req.raw);
    if (!session) return void reply.code(401).send(status(401, 'Unauthorized', 'not logged in'));
    reply.header('cache-control', 'no-store').send({ user: session.user, groups: session.groups, csrfToken: session.csrfToken });
  }

  private logout(req: FastifyRequest, reply: FastifyReply): void {
    const session = this.sessionOf(req.raw);
    if (session && !this.csrfOk(req, session)) return void reply.code(403).send(status(403, 'Forbidden', 'missing or wrong X-CSRF-Token'));
    if (session) {
      this.sessions.delete(session.id);
      for (const ws of this.socketsOf.get(session.id) ?? []) ws.close(4401, 'logged out');
      this.config.logger.info('logged out', { user: session.user });
    }
    reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0`).code(204).send();
  }

  private csrfOk(req: FastifyRequest, session: Session): boolean {
    const header = req.headers[CSRF_HEADER];
    return sameOrigin(req.raw) && csrfTokenMatches(session, typeof header === 'string' ? header : undefined);
  }

  private proxy(req: FastifyRequest, reply: FastifyReply): void {
    const session = this.sessionOf(req.raw);
    if (!session) return void reply.code(401).send(status(401, 'Unauthorized', 'not logged in'));
    if (!SAFE_METHODS.has(req.method) && !this.csrfOk(req, session)) return void reply.code(403).send(status(403, 'Forbidden', 'missing or wrong X-CSRF-Token'));
    reply.hijack();
    this.gateway.forward({ method: req.method, path: req.raw.url!.slice(API_PREFIX.length - 1), token: session.token, headers: req.headers, body: SAFE_METHODS.has(req.method) ? undefined : req.raw }, reply.raw);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const session = this.sessionOf(req);
    const refuse = (code: number, message: string) => socket.end(`HTTP/1.1 ${code} ${code === 401 ? 'Unauthorized' : 'Forbidden'}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(message)}\r\nconnection: close\r\n\r\n${message}`);
    // A WebSocket carries no CSRF header: the cookie (SameSite=Strict) and the Origin check stand in for it.
    const watches = req.url === WATCH_PATH;
    if (!watches && !req.url?.startsWith(API_PREFIX)) return void refuse(403, `upgrades go to ${WATCH_PATH} and ${API_PREFIX} only`);
    if (!session) return void refuse(401, 'not logged in');
    if (!req.headers.origin || req.headers.origin !== `https://${req.headers.host}`) return void refuse(403, 'WebSocket from another origin');
    if (watches) {
      const id = session.id;
      this.watchSockets.handleUpgrade(req, socket, head, (ws) => {
        const open = this.socketsOf.get(id) ?? new Set();
        this.socketsOf.set(id, open.add(ws));
        ws.on('close', () => {
          open.delete(ws);
          if (open.size === 0) this.socketsOf.delete(id);
        });
        serveWatches(ws, this.gateway, () => this.sessions.get(id)?.token);
      });
      return;
    }
    this.gateway.upgrade({ method: 'GET', path: req.url!.slice(API_PREFIX.length - 1), token: session.token }, req, socket, head);
  }

  private async asset(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const path = decodeURIComponent(req.url.split('?')[0]);
    const relative = normalize(path).replace(/^(\.\.[/\\])+/, '').replace(/^\/+/, '');
    // Files with an extension are assets; anything else is a view of the single-page app.
    const file = extname(relative) ? join(this.config.uiDir, relative) : join(this.config.uiDir, 'index.html');
    if (!file.startsWith(this.config.uiDir)) return void reply.code(404).send(status(404, 'NotFound', 'not found'));
    try {
      const body = await readFile(file);
      const cache = file.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      reply.header('content-type', CONTENT_TYPES[extname(file)] ?? 'application/octet-stream').header('cache-control', cache).send(body);
    } catch {
      reply.code(404).send(status(404, 'NotFound', extname(relative) ? `${path} not found` : 'the UI is not built (node scripts/build.mjs)'));
    }
  }
}
