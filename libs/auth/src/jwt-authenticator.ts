import { request } from 'node:https';
import { createLocalJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { StatusError } from '@orch/apimachinery';
import type { Authenticator } from './authn';
import { bearerToken, cachedTokenAuthenticator } from './token-cache';
import type { UserInfo } from './user';

/** JWS algorithms an identity provider may sign with (upstream's supported asymmetric algorithms). */
export const JWT_SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

/**
 * One JWT issuer (an AuthenticationConfiguration `jwt` entry, or the `--oidc-*` flags, which
 * make one): where to find its keys, which tokens it may issue for us, how claims map to the user.
 */
export interface JwtIssuerConfig {
  issuer: {
    /** `iss` of its tokens; https. */
    url: string;
    /** Discovery document URL used as given; default `<url>/.well-known/openid-configuration`. */
    discoveryURL?: string;
    /** PEM CA bundle verifying the discovery and JWKS fetches; default the host roots. */
    certificateAuthority?: string;
    /** At least one must be in the token's `aud`. */
    audiences: string[];
    audienceMatchPolicy?: 'MatchAny' | '';
  };
  /** Each claim must be a string equal to the value (`--oidc-required-claim`). */
  claimValidationRules?: { claim: string; requiredValue: string }[];
  claimMappings: {
    username: { claim: string; prefix: string };
    groups?: { claim: string; prefix: string };
    uid?: { claim: string };
  };
  /** Accepted `alg` values (`--oidc-signing-algs`); default every supported asymmetric one. */
  signingAlgorithms?: string[];
}

/** Fetches a JSON document over HTTPS, verifying the server with `ca` (host roots when absent). */
export type JsonFetcher = (url: string, ca: string | undefined) => Promise<unknown>;

const MAX_DOCUMENT_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/** The default fetcher: node https, a timeout, a size bound, 2xx only. */
export const fetchJsonOverHttps: JsonFetcher = (url, ca) =>
  new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'https:') return reject(new Error(`${url}: only https URLs are fetched`));
    const req = request(u, { method: 'GET', ca, headers: { accept: 'application/json' }, timeout: FETCH_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOCUMENT_BYTES) req.destroy(new Error(`${url}: response larger than ${MAX_DOCUMENT_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new Error(`${url}: response is not JSON`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out after ${FETCH_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });

/** Upper bound on a bearer token (a cheap guard; Node's header limit is 16 KiB anyway). */
const MAX_TOKEN_BYTES = 16 * 1024;
/** A failed or unhelpful key fetch is not repeated sooner than this (garbage tokens cannot make us hammer the issuer). */
const REFETCH_INTERVAL_MS = 10_000;

function rejected(issuer: string, reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(`jwt authenticator for ${issuer}: ${reason}`);
  return e;
}

/**
 * The signing keys of one issuer, from its discovery document's `jwks_uri`. Fetched at start
 * and again when a token names a key we do not have, at most every 10 s; until a fetch
 * succeeded, the issuer's tokens are rejected (401), never waited for.
 */
class IssuerKeys {
  private keySet?: ReturnType<typeof createLocalJWKSet>;
  private fetching?: Promise<void>;
  private lastAttempt = -Infinity;
  lastError?: string;

  constructor(
    private readonly cfg: JwtIssuerConfig['issuer'],
    private readonly fetchJson: JsonFetcher,
    private readonly now: () => number,
  ) {}

  /** Fetches discovery and keys (deduplicated; rate-limited unless `force`). */
  refresh(force = false): Promise<void> {
    if (this.fetching) return this.fetching;
    if (!force && this.now() - this.lastAttempt < REFETCH_INTERVAL_MS) return Promise.resolve();
    this.lastAttempt = this.now();
    this.fetching = this.load()
      .then(() => void (this.lastError = undefined))
      .catch((e: Error) => void (this.lastError = e.message))
      .finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async load(): Promise<void> {
    const discoveryUrl = this.cfg.discoveryURL || `${this.cfg.url.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const doc = (await this.fetchJson(discoveryUrl, this.cfg.certificateAuthority)) as { issuer?: unknown; jwks_uri?: unknown };
    if (doc?.issuer !== this.cfg.url) throw new Error(`discovery ${discoveryUrl}: issuer ${JSON.stringify(doc?.issuer)} does not match ${JSON.stringify(this.cfg.url)}`);
    if (typeof doc.jwks_uri !== 'string') throw new Error(`discovery ${discoveryUrl}: no jwks_uri`);
    const jwks = (await this.fetchJson(doc.jwks_uri, this.cfg.certificateAuthority)) as JSONWebKeySet;
    if (!Array.isArray(jwks?.keys)) throw new Error(`${doc.jwks_uri}: not a JSON Web Key Set`);
    this.keySet = createLocalJWKSet(jwks);
  }

  get current(): ReturnType<typeof createLocalJWKSet> | undefined {
    return this.keySet;
  }
}

/**
 * A JWT authenticator for one issuer (upstream oidc.Authenticator): claims a bearer JWT whose
 * unverified `iss` is the issuer URL (anything else is left to the others: null), then checks
 * the signature with the issuer's keys (jose), `exp` (required), `nbf`, the audiences, the
 * algorithm, the claim validation rules, and maps claims to the user. The identity provider is
 * not contacted per request. Throws 401 for a claimed token that fails any check.
 */
export class JwtAuthenticator implements Authenticator {
  private readonly keys: IssuerKeys;
  private readonly algorithms: string[];

  constructor(
    readonly config: JwtIssuerConfig,
    private readonly opts: { fetchJson?: JsonFetcher; now?: () => number } = {},
  ) {
    this.keys = new IssuerKeys(config.issuer, opts.fetchJson ?? fetchJsonOverHttps, opts.now ?? Date.now);
    this.algorithms = config.signingAlgorithms?.length ? config.signingAlgorithms : [...JWT_SIGNING_ALGORITHMS];
  }

  get issuerUrl(): string {
    return this.config.issuer.url;
  }

  /** Fetches discovery and keys now (start-up and reload); resolves even when the issuer is unreachable. */
  start(): Promise<void> {
    return this.keys.refresh(true);
  }

  /** Why the issuer's keys are not usable, when they are not. */
  get keyError(): string | undefined {
    return this.keys.current ? undefined : (this.keys.lastError ?? 'keys not fetched yet');
  }

  async authenticate(req: { headers: Record<string, string | string[] | undefined>; audiences?: string[] }): Promise<UserInfo | null> {
    const token = bearerToken(req.headers);
    if (!token || unverifiedIssuer(token) !== this.config.issuer.url) return null;
    const payload = await this.verify(token);
    return this.user(payload);
  }

  private async verify(token: string): Promise<JWTPayload> {
    const url = this.config.issuer.url;
    if (!this.keys.current) await this.keys.refresh();
    const keySet = this.keys.current;
    if (!keySet) throw rejected(url, `keys unavailable: ${this.keys.lastError ?? 'not fetched yet'}`);
    const check = (set: ReturnType<typeof createLocalJWKSet>) =>
      jwtVerify(token, set, { issuer: url, audience: this.config.issuer.audiences, algorithms: this.algorithms, requiredClaims: ['exp'], currentDate: new Date((this.opts.now ?? Date.now)()) });
    try {
      return (await check(keySet)).payload;
    } catch (err) {
      // A key we do not know may be a rotation at the issuer: fetch once (rate-limited) and retry.
      if (err instanceof joseErrors.JWKSNoMatchingKey) {
        await this.keys.refresh();
        const fresh = this.keys.current;
        if (fresh && fresh !== keySet) {
          try {
            return (await check(fresh)).payload;
          } catch (again) {
            throw rejected(url, (again as Error).message);
          }
        }
      }
      throw rejected(url, (err as Error).message);
    }
  }

  private user(p: JWTPayload): UserInfo {
    const url = this.config.issuer.url;
    for (const rule of this.config.claimValidationRules ?? []) {
      if (p[rule.claim] !== rule.requiredValue) throw rejected(url, `required claim ${rule.claim} does not have the required value`);
    }
    const m = this.config.claimMappings;
    const name = p[m.username.claim];
    if (typeof name !== 'string' || name === '') throw rejected(url, `claim ${m.username.claim} is missing or not a string`);
    if (m.username.claim === 'email' && 'email_verified' in p && p.email_verified !== true) throw rejected(url, 'email not verified');
    const user: UserInfo = { username: `${m.username.prefix}${name}`, groups: [] };
    if (m.groups) {
      const g = p[m.groups.claim];
      if (g !== undefined && g !== null) {
        const list = typeof g === 'string' ? [g] : Array.isArray(g) && g.every((x) => typeof x === 'string') ? (g as string[]) : undefined;
        if (!list) throw rejected(url, `claim ${m.groups.claim} is not a string or an array of strings`);
        user.groups = list.map((x) => `${m.groups!.prefix}${x}`);
      }
    }
    if (m.uid) {
      const uid = p[m.uid.claim];
      if (typeof uid !== 'string') throw rejected(url, `claim ${m.uid.claim} is missing or not a string`);
      user.uid = uid;
    }
    return user;
  }
}

/**
 * Several JWT issuers behind one authenticator (AuthenticationConfiguration `jwt`), with
 * upstream's token cache: a success is remembered for `successTtlMs` (10 s) or until the
 * token expires, whichever is first. Failures are not cached. `replace` swaps the issuers
 * (file reload) and empties the cache.
 */
export class JwtAuthenticatorSet implements Authenticator {
  private byIssuer = new Map<string, JwtAuthenticator>();
  private cached!: Authenticator;

  constructor(
    authenticators: JwtAuthenticator[] = [],
    private readonly opts: { successTtlMs?: number; now?: () => number } = {},
  ) {
    this.replace(authenticators);
  }

  replace(authenticators: JwtAuthenticator[]): void {
    const byIssuer = new Map(authenticators.map((a) => [a.issuerUrl, a]));
    this.byIssuer = byIssuer;
    const route: Authenticator = {
      authenticate: (req) => {
        const iss = unverifiedIssuer(bearerToken(req.headers));
        const a = iss === undefined ? undefined : byIssuer.get(iss);
        return a ? a.authenticate(req) : Promise.resolve(null);
      },
    };
    this.cached = cachedTokenAuthenticator(route, { successTtlMs: this.opts.successTtlMs ?? 10_000, failureTtlMs: 0, expiresAt: expiryOf, ...(this.opts.now ? { now: this.opts.now } : {}) });
  }

  get issuers(): JwtAuthenticator[] {
    return [...this.byIssuer.values()];
  }

  authenticate(req: { headers: Record<string, string | string[] | undefined>; audiences?: string[] }): Promise<UserInfo | null> {
    if (this.byIssuer.size === 0) return Promise.resolve(null);
    const iss = unverifiedIssuer(bearerToken(req.headers));
    // Tokens of no configured issuer skip the cache (garbage must not fill it).
    if (iss === undefined || !this.byIssuer.has(iss)) return Promise.resolve(null);
    return this.cached.authenticate(req);
  }
}

/** The `iss` of a JWT without verifying it; undefined for anything that is not a JWT of sane size. */
function unverifiedIssuer(token: string | undefined): string | undefined {
  if (!token || token.length > MAX_TOKEN_BYTES || token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

function expiryOf(token: string): number | undefined {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
