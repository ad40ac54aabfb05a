import { randomBytes, timingSafeEqual } from 'node:crypto';

/** One logged-in browser: the user's own credential, kept only in this process's memory. */
export interface Session {
  id: string;
  /** The bearer token the user logged in with; sent to the gateway, never to the browser again. */
  token: string;
  /** The value state-changing requests must echo in the `X-CSRF-Token` header. */
  csrfToken: string;
  user: string;
  groups: string[];
  createdAt: number;
  lastUsedAt: number;
}

export interface SessionLimits {
  /** A session unused this long ends. */
  idleTimeoutMs: number;
  /** A session ends this long after login, used or not. */
  maxLifetimeMs: number;
  /** At most this many sessions; the least recently used one ends to make room. */
  maxSessions: number;
}

const randomId = () => randomBytes(32).toString('base64url');

/**
 * Server-side sessions: the cookie holds only a random id (256 bits); the token stays here.
 * Sessions end on logout, after `idleTimeoutMs` without use or `maxLifetimeMs` after login.
 */
export class SessionStore {
  /** Insertion order is use order: `get` moves a session to the end. */
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  create(token: string, user: string, groups: string[]): Session {
    this.sweep();
    while (this.sessions.size >= this.limits.maxSessions) this.sessions.delete(this.sessions.keys().next().value as string);
    const at = this.now();
    const session: Session = { id: randomId(), token, csrfToken: randomId(), user, groups, createdAt: at, lastUsedAt: at };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id (and marks it used), or undefined. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const at = this.now();
    if (this.expired(session, at)) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastUsedAt = at;
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Ends every expired session. */
  sweep(): void {
    const at = this.now();
    for (const [id, s] of this.sessions) if (this.expired(s, at)) this.sessions.delete(id);
  }

  private expired(s: Session, at: number): boolean {
    return at - s.lastUsedAt > this.limits.idleTimeoutMs || at - s.createdAt > this.limits.maxLifetimeMs;
  }
}

/** Constant-time comparison of a request's CSRF header with the session's token. */
export function csrfTokenMatches(session: Session, header: string | undefined): boolean {
  if (!header) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(header);
  return a.length === b.length && timingSafeEqual(a, b);
}
