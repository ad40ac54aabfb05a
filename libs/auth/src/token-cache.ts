import { createHash } from 'node:crypto';
import { BoundedMap } from '@orch/apimachinery';
import type { AuthRequest, Authenticator } from './authn';
import type { UserInfo } from './user';

export interface TokenCacheOptions {
  /** How long a user found for a token is reused (upstream: 10 s for the token union, the webhook's --authentication-token-webhook-cache-ttl). */
  successTtlMs: number;
  /** How long "not a user" (null) is reused; 0: not cached. Errors (a webhook that cannot be reached) are never cached. */
  failureTtlMs: number;
  /** When the token itself stops being valid (ms), if it says: a success is not reused past it. */
  expiresAt?: (token: string) => number | undefined;
  maxEntries?: number;
  now?: () => number;
}

/** The bearer token of a request, when it has one. */
export function bearerToken(headers: AuthRequest['headers']): string | undefined {
  const h = headers['authorization'];
  const raw = Array.isArray(h) ? h[0] : h;
  return raw ? /^Bearer\s+(\S+)\s*$/i.exec(raw)?.[1] : undefined;
}

/** A cache key for a token and the audiences it is checked for: a SHA-256 of both, never the token itself. */
export function tokenCacheKey(token: string, audiences: readonly string[] | undefined): string {
  return createHash('sha256').update(token).update('\u0000').update((audiences ?? []).join(',')).digest('base64');
}

/**
 * Values kept by key until a time (ms), at most `max` of them: when full, all are dropped (a
 * flood of distinct tokens cannot grow it, and a real client's next request fills it again).
 */
export class ExpiringCache<V> {
  private readonly entries: BoundedMap<string, { value: V; until: number }>;

  constructor(max: number) {
    this.entries = new BoundedMap(max);
  }

  /** The value of `key` if it is still valid at `now`; undefined otherwise. */
  get(key: string, now: number): V | undefined {
    const e = this.entries.get(key);
    return e && e.until > now ? e.value : undefined;
  }

  set(key: string, value: V, until: number): void {
    this.entries.set(key, { value, until });
  }
}

/**
 * Upstream's token cache (tokencache.New) around a bearer-token authenticator: answers are
 * kept by a SHA-256 of the token and the requested audiences (never the token itself), a user
 * for `successTtlMs` (not past `expiresAt`), "not a user" for `failureTtlMs`. Concurrent
 * requests with one token share one call. Requests without a bearer token pass through.
 */
export function cachedTokenAuthenticator(inner: Authenticator, opts: TokenCacheOptions): Authenticator {
  const now = opts.now ?? Date.now;
  const cache = new ExpiringCache<UserInfo | null>(opts.maxEntries ?? 8192);
  const inflight = new Map<string, Promise<UserInfo | null>>();
  return {
    async authenticate(req) {
      const token = bearerToken(req.headers);
      if (!token) return inner.authenticate(req);
      const key = tokenCacheKey(token, req.audiences);
      const t = now();
      const hit = cache.get(key, t);
      if (hit !== undefined) return hit && cloneUser(hit);
      let pending = inflight.get(key);
      if (!pending) {
        pending = inner.authenticate(req).then((user) => {
          const ttl = user ? opts.successTtlMs : opts.failureTtlMs;
          if (ttl > 0) {
            const exp = user ? opts.expiresAt?.(token) : undefined;
            cache.set(key, user && cloneUser(user), Math.min(now() + ttl, exp ?? Infinity));
          }
          return user;
        });
        inflight.set(key, pending);
        void pending.catch(() => undefined).finally(() => inflight.delete(key));
      }
      const user = await pending;
      return user && cloneUser(user);
    },
  };
}

function cloneUser(u: UserInfo): UserInfo {
  return { ...u, groups: [...u.groups], ...(u.extra ? { extra: structuredClone(u.extra) } : {}) };
}
