import { createHash } from 'node:crypto';
import { anonymousUser, unionAuthenticator, x509Authenticator, type AuthRequest, type Authenticator, type UserInfo } from '@orch/auth';
import { StatusError } from '@orch/apimachinery';
import type { RestClient } from '@orch/client';

/** What the authorizer is asked about a request to the agent (SPEC "Node agent HTTPS endpoints"). */
export interface NodeRequestAttributes {
  verb: string;
  resource: 'nodes';
  subresource: string;
  name: string;
}

/** True when `path` is `prefix` or below it (upstream isSubpath). */
function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * SPEC path → node subresource mapping: /stats/* → stats, /metrics/* → metrics, /logs/* →
 * log, /spec/* → spec, everything else → proxy; the verb is the HTTP method's API verb.
 */
export function nodeRequestAttributes(method: string, path: string, nodeName: string): NodeRequestAttributes {
  const verbs: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const subresource = isSubpath(path, '/stats') ? 'stats' : isSubpath(path, '/metrics') ? 'metrics' : isSubpath(path, '/logs') ? 'log' : isSubpath(path, '/spec') ? 'spec' : 'proxy';
  return { verb: verbs[method.toUpperCase()] ?? method.toLowerCase(), resource: 'nodes', subresource, name: nodeName };
}

/** A small time-bounded cache (webhook answers). */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly maxEntries = 4096) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until: Date.now() + ttlMs });
  }
}

const FAILED_TOKEN_TTL_MS = 10_000;

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}

/**
 * Bearer tokens checked with the gateway's TokenReview API (`--authentication-token-webhook`).
 * No bearer header → null; a token the gateway does not authenticate → 401. Answers are
 * cached (`ttlMs` for accepted tokens, 10 s for rejected ones) by token hash.
 */
export function tokenReviewAuthenticator(client: RestClient, ttlMs: number): Authenticator {
  const cache = new TtlCache<UserInfo | null>();
  return {
    async authenticate(req: AuthRequest) {
      const header = req.headers['authorization'];
      const value = Array.isArray(header) ? header[0] : header;
      const m = value ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
      if (!m) return null;
      const token = m[1];
      const key = createHash('sha256').update(token).digest('base64');
      let user = cache.get(key);
      if (user === undefined) {
        const review = await client.request<TokenReview>({
          method: 'POST',
          path: '/apis/authentication.orch.io/v1/tokenreviews',
          body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token } },
        });
        const u = review.status?.user;
        user = review.status?.authenticated && u?.username ? { username: u.username, uid: u.uid, groups: u.groups ?? [], extra: u.extra } : null;
        cache.set(key, user, user ? ttlMs : FAILED_TOKEN_TTL_MS);
      }
      if (!user) throw StatusError.unauthorized();
      return user;
    },
  };
}

export interface NodeAuthOptions {
  /** PEM CA bundle for client certificates (`--client-ca-file`); x509 auth is off without it. */
  clientCaPem?: string;
  anonymous: boolean;
  /** TokenReview client and cache TTL (`--authentication-token-webhook`). */
  tokenWebhook?: { client: RestClient; ttlMs: number };
  /** `AlwaysAllow`, or `Webhook` with its client and cache TTLs. */
  authorization: { mode: 'AlwaysAllow' } | { mode: 'Webhook'; client: RestClient; allowTtlMs: number; denyTtlMs: number };
}

/** The outcome of authenticating and authorizing one request. */
export type AuthDecision = { ok: true; user: UserInfo } | { ok: false; code: 401 | 403; message: string };

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/**
 * Authentication and authorization of the agent's HTTPS API (SPEC "Node agent HTTPS
 * endpoint"), in one place: client certificate, then bearer token; nobody claimed → anonymous
 * when allowed, else 401; then AlwaysAllow or a SubjectAccessReview for the node subresource
 * of the path (403 when denied).
 */
export class NodeAuth {
  private readonly authenticator: Authenticator;
  private readonly decisions = new TtlCache<boolean>();

  constructor(private readonly opts: NodeAuthOptions) {
    const list: Authenticator[] = [];
    if (opts.clientCaPem) list.push(x509Authenticator({ clientCa: opts.clientCaPem }));
    if (opts.tokenWebhook) list.push(tokenReviewAuthenticator(opts.tokenWebhook.client, opts.tokenWebhook.ttlMs));
    this.authenticator = unionAuthenticator(list);
  }

  async check(req: AuthRequest, method: string, path: string, nodeName: string): Promise<AuthDecision> {
    let user: UserInfo | null;
    try {
      user = await this.authenticator.authenticate(req);
    } catch (err) {
      if (err instanceof StatusError && err.code === 401) return { ok: false, code: 401, message: 'Unauthorized' };
      throw err;
    }
    if (!user) {
      if (!this.opts.anonymous) return { ok: false, code: 401, message: 'Unauthorized' };
      user = anonymousUser();
    }
    const attrs = nodeRequestAttributes(method, path, nodeName);
    if (await this.authorize(user, attrs)) return { ok: true, user };
    return { ok: false, code: 403, message: `Forbidden (user=${user.username}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})` };
  }

  private async authorize(user: UserInfo, attrs: NodeRequestAttributes): Promise<boolean> {
    const az = this.opts.authorization;
    if (az.mode === 'AlwaysAllow') return true;
    const spec = {
      user: user.username,
      uid: user.uid,
      groups: user.groups,
      extra: user.extra,
      resourceAttributes: { namespace: '', verb: attrs.verb, group: '', version: 'v1', resource: attrs.resource, subresource: attrs.subresource, name: attrs.name },
    };
    const key = JSON.stringify(spec);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    const review = await az.client.request<SubjectAccessReview>({
      method: 'POST',
      path: '/apis/authorization.orch.io/v1/subjectaccessreviews',
      body: { apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec },
    });
    const allowed = !!review.status?.allowed && !review.status?.denied;
    this.decisions.set(key, allowed, allowed ? az.allowTtlMs : az.denyTtlMs);
    return allowed;
  }
}
