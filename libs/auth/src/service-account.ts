import { createHash, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { BoundedMap, StatusError } from '@orch/apimachinery';
import type { AuthRequest, Authenticator } from './authn';
import { ExpiringCache, tokenCacheKey } from './token-cache';
import type { UserInfo } from './user';

/** `iss` of tokens in service-account token secrets (upstream LegacyIssuer). */
export const LEGACY_ISSUER = 'orch/serviceaccount';
/** Private claim of bound tokens (upstream `kubernetes.io`). */
export const BOUND_CLAIM = 'orch.io';
const LEGACY_CLAIM_PREFIX = 'orch.io/serviceaccount/';
/** Annotation stamped on legacy token secrets when used (at most once a day; SPEC Token secrets). */
export const LEGACY_TOKEN_LAST_USED = 'orch.io/legacy-token-last-used';

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** The user of a service account (SPEC Service account token). */
export function serviceAccountUser(namespace: string, name: string, uid?: string, extra?: Record<string, string[]>): UserInfo {
  return {
    username: `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`,
    ...(uid ? { uid } : {}),
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`],
    ...(extra && Object.keys(extra).length ? { extra } : {}),
  };
}

/** upstream keyIDFromPublicKey: base64url (unpadded) SHA-256 of the PKIX DER public key. */
export function serviceAccountKeyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** JWS algorithm for a key: ES256/ES384/ES512 by curve, RS256 for RSA. */
export function signingAlgorithm(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const alg = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg) return alg;
  }
  throw new Error(`unsupported service account key: ${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim());
}

/**
 * The public keys in a PEM file of `--service-account-key-file`: public keys, certificates,
 * or private keys (their public half), RSA or ECDSA. Throws when the file holds none.
 */
export function publicKeysFromPem(pem: string, source = 'key file'): KeyObject[] {
  const blocks = pem.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/g) ?? [];
  const keys: KeyObject[] = [];
  for (const b of blocks) {
    if (b.includes('PRIVATE KEY')) keys.push(createPublicKey(createPrivateKey(b)));
    else keys.push(createPublicKey(b));
  }
  if (keys.length === 0) throw new Error(`${source}: no PEM public key, certificate or private key`);
  for (const k of keys) signingAlgorithm(k);
  return keys;
}

/** What a bound token is bound to (TokenRequest `boundObjectRef`). */
export interface BoundObject {
  kind: 'Pod' | 'Secret';
  name: string;
  uid: string;
}

export interface BoundTokenRequest {
  namespace: string;
  serviceAccountName: string;
  serviceAccountUid: string;
  audiences: string[];
  expirationSeconds: number;
  boundObject?: BoundObject;
  /** The node a bound pod runs on, recorded in the token (upstream node claims). */
  nodeName?: string;
}

/**
 * Signs bound service-account tokens (TokenRequest) with the private key of
 * `--service-account-signing-key-file`: `iss` the first `--service-account-issuer`, `aud`,
 * `exp`/`iat`/`nbf`, `sub`, a `jti`, and the `orch.io` claim naming the namespace, account
 * and bound object.
 */
export class ServiceAccountTokenIssuer {
  private readonly key: KeyObject;
  private readonly alg: string;
  private readonly kid: string;

  constructor(
    privateKeyPem: string,
    readonly issuer: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createPrivateKey(privateKeyPem);
    this.alg = signingAlgorithm(this.key);
    this.kid = serviceAccountKeyId(createPublicKey(this.key));
  }

  async issue(r: BoundTokenRequest): Promise<{ token: string; expiresAt: Date }> {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + r.expirationSeconds;
    const claim: Record<string, unknown> = { namespace: r.namespace, serviceaccount: { name: r.serviceAccountName, uid: r.serviceAccountUid } };
    if (r.boundObject) claim[r.boundObject.kind === 'Pod' ? 'pod' : 'secret'] = { name: r.boundObject.name, uid: r.boundObject.uid };
    if (r.nodeName) claim.node = { name: r.nodeName };
    const token = await new SignJWT({ [BOUND_CLAIM]: claim })
      .setProtectedHeader({ alg: this.alg, kid: this.kid })
      .setIssuer(this.issuer)
      .setSubject(`${SERVICE_ACCOUNT_USER_PREFIX}${r.namespace}:${r.serviceAccountName}`)
      .setAudience(r.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }
}

/** Objects the authenticator looks up (`--service-account-lookup`); undefined when absent. */
export interface ServiceAccountLookup {
  serviceAccount(namespace: string, name: string): Promise<{ metadata: { uid?: string; deletionTimestamp?: string } } | undefined>;
  secret(namespace: string, name: string): Promise<{ metadata: { uid?: string; deletionTimestamp?: string; annotations?: Record<string, string> }; data?: Record<string, string> } | undefined>;
  pod(namespace: string, name: string): Promise<{ metadata: { uid?: string; deletionTimestamp?: string } } | undefined>;
  /** Stamps `orch.io/legacy-token-last-used` with `date` (YYYY-MM-DD) on a legacy token's secret. */
  markLegacyTokenUsed(namespace: string, secretName: string, date: string): Promise<void>;
}

export interface ServiceAccountAuthenticatorOptions {
  keys: KeyObject[];
  /** `--service-account-issuer` values: bound tokens from any of them are accepted. */
  issuers: string[];
  /** `--api-audiences`: a bound token's `aud` must name one of them. */
  audiences: string[];
  /** With lookup (default on), tokens of deleted accounts, secrets and pods are rejected. */
  lookup?: ServiceAccountLookup;
  now?: () => number;
}

function rejected(reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(`service account token: ${reason}`);
  return e;
}

/** The bearer token of a request, when it looks like a JWT (three base64url parts). */
export function bearerJwt(headers: Record<string, string | string[] | undefined>): string | undefined {
  const h = headers['authorization'];
  const raw = Array.isArray(h) ? h[0] : h;
  const token = raw ? /^Bearer\s+(\S+)\s*$/i.exec(raw)?.[1] : undefined;
  return token && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token) ? token : undefined;
}

/** Upper bound on a bearer token's length (upstream has none; a cheap guard against garbage). */
const MAX_TOKEN_BYTES = 16 * 1024;

/** How long a verified signature is reused (upstream's token success cache TTL) and how many are kept. */
const VERIFIED_TTL_MS = 10_000;
const MAX_VERIFIED = 8192;
/** Seconds of clock skew allowed on `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 60;

/**
 * Service-account JWT authentication (SPEC Service account token, upstream
 * serviceaccount.JWTTokenAuthenticator). A bearer JWT whose `iss` is one of `issuers` (bound
 * tokens) or the legacy issuer (secret tokens) is claimed; anything else is left to the
 * other authenticators (null). A claimed token must verify with one of `keys` (jose), be
 * within `nbf`/`exp`, name one of `audiences` (bound tokens), and — with lookup — name an
 * existing, not deleting account whose uid matches, and an existing bound pod or secret
 * (legacy: the secret must still hold this very token). Otherwise 401.
 */
export function serviceAccountAuthenticator(opts: ServiceAccountAuthenticatorOptions): Authenticator {
  const now = opts.now ?? Date.now;
  const byKid = new Map(opts.keys.map((k) => [serviceAccountKeyId(k), k]));
  const issuers = new Set(opts.issuers);
  // Secrets this authenticator stamped, with the day: concurrent first uses of a legacy token
  // (the informer has not seen the stamp yet) patch once, not once per request.
  const stamped = new BoundedMap<string, string>(10_000);
  // Verified tokens by tokenCacheKey (token and audiences): the signature check (most of a
  // request's authentication) is done once per VERIFIED_TTL_MS, never past `exp`. Only the
  // check of the token itself is reused: the lookups below run for every request, so a token
  // of a deleted account, pod or secret is refused at once.
  const verified = new ExpiringCache<JWTPayload>(MAX_VERIFIED);

  /**
   * The payload of the token, its signature, issuer, audience and times checked; null when it is
   * not a service-account token (not ours); throws a 401 when it is one but invalid.
   */
  async function verify(token: string, req: AuthRequest): Promise<JWTPayload | null> {
    let iss: string | undefined;
    let kid: string | undefined;
    try {
      iss = decodeJwt(token).iss;
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return null; // not a JWT: not ours
    }
    const legacy = iss === LEGACY_ISSUER;
    if (!iss || (!legacy && !issuers.has(iss))) return null;
    const candidates = kid && byKid.has(kid) ? [byKid.get(kid)!] : opts.keys;
    let lastError = 'no key';
    for (const key of candidates) {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: legacy ? LEGACY_ISSUER : [...issuers],
          ...(legacy ? {} : { audience: req.audiences?.length ? req.audiences : opts.audiences, requiredClaims: ['exp'] }),
          algorithms: [signingAlgorithm(key)],
          currentDate: new Date(now()),
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        return payload;
      } catch (err) {
        lastError = (err as Error).message;
      }
    }
    throw rejected(lastError);
  }

  return {
    async authenticate(req) {
      const token = bearerJwt(req.headers);
      if (!token) return null;
      if (token.length > MAX_TOKEN_BYTES) throw rejected('token too large');
      const key = tokenCacheKey(token, req.audiences);
      const t = now();
      let payload = verified.get(key, t);
      if (!payload) {
        const checked = await verify(token, req);
        if (!checked) return null;
        const exp = checked.exp;
        verified.set(key, checked, Math.min(t + VERIFIED_TTL_MS, exp === undefined ? Infinity : (exp + CLOCK_TOLERANCE_S) * 1000));
        payload = checked;
      }
      // verify checked the issuer: the legacy one, or one of `issuers`.
      return payload.iss === LEGACY_ISSUER ? legacyUser(payload, token, opts.lookup, now, stamped) : boundUser(payload, opts.lookup);
    },
  };
}

async function legacyUser(p: JWTPayload, token: string, lookup: ServiceAccountLookup | undefined, now: () => number, stamped: BoundedMap<string, string>): Promise<UserInfo> {
  const claim = (k: string) => (typeof p[`${LEGACY_CLAIM_PREFIX}${k}`] === 'string' ? (p[`${LEGACY_CLAIM_PREFIX}${k}`] as string) : '');
  const ns = claim('namespace');
  const name = claim('service-account.name');
  const uid = claim('service-account.uid');
  const secretName = claim('secret.name');
  if (!ns || !name || !uid || !secretName || p.sub !== `${SERVICE_ACCOUNT_USER_PREFIX}${ns}:${name}`) throw rejected('legacy token lacks its claims');
  if (lookup) {
    const secret = await lookup.secret(ns, secretName);
    if (!secret || secret.metadata.deletionTimestamp) throw rejected(`secret ${ns}/${secretName} is gone`);
    const held = secret.data?.token ? Buffer.from(secret.data.token, 'base64').toString('utf8') : '';
    if (held !== token) throw rejected(`secret ${ns}/${secretName} no longer holds this token`);
    await checkAccount(lookup, ns, name, uid);
    const today = new Date(now()).toISOString().slice(0, 10);
    const key = `${ns}/${secretName}`;
    if (secret.metadata.annotations?.[LEGACY_TOKEN_LAST_USED] !== today && stamped.get(key) !== today) {
      stamped.set(key, today);
      await lookup.markLegacyTokenUsed(ns, secretName, today).catch(() => stamped.delete(key));
    }
  }
  return serviceAccountUser(ns, name, uid, { 'authentication.orch.io/credential-id': [`JTI=legacy:${secretName}`] });
}

async function boundUser(p: JWTPayload, lookup: ServiceAccountLookup | undefined): Promise<UserInfo> {
  const c = p[BOUND_CLAIM] as { namespace?: string; serviceaccount?: { name?: string; uid?: string }; pod?: { name?: string; uid?: string }; secret?: { name?: string; uid?: string }; node?: { name?: string } } | undefined;
  const ns = c?.namespace ?? '';
  const name = c?.serviceaccount?.name ?? '';
  const uid = c?.serviceaccount?.uid ?? '';
  if (!ns || !name || p.sub !== `${SERVICE_ACCOUNT_USER_PREFIX}${ns}:${name}`) throw rejected('bound token lacks its claims');
  if (lookup) {
    await checkAccount(lookup, ns, name, uid);
    if (c?.pod?.name) {
      const pod = await lookup.pod(ns, c.pod.name);
      if (!pod || pod.metadata.deletionTimestamp || (c.pod.uid && pod.metadata.uid !== c.pod.uid)) throw rejected(`bound pod ${ns}/${c.pod.name} is gone`);
    }
    if (c?.secret?.name) {
      const secret = await lookup.secret(ns, c.secret.name);
      if (!secret || secret.metadata.deletionTimestamp || (c.secret.uid && secret.metadata.uid !== c.secret.uid)) throw rejected(`bound secret ${ns}/${c.secret.name} is gone`);
    }
  }
  const extra: Record<string, string[]> = {};
  if (c?.pod?.name) extra['authentication.orch.io/pod-name'] = [c.pod.name];
  if (c?.pod?.uid) extra['authentication.orch.io/pod-uid'] = [c.pod.uid];
  if (c?.node?.name) extra['authentication.orch.io/node-name'] = [c.node.name];
  if (p.jti) extra['authentication.orch.io/credential-id'] = [`JTI=${p.jti}`];
  return serviceAccountUser(ns, name, uid, extra);
}

async function checkAccount(lookup: ServiceAccountLookup, ns: string, name: string, uid: string): Promise<void> {
  const sa = await lookup.serviceAccount(ns, name);
  if (!sa || sa.metadata.deletionTimestamp) throw rejected(`service account ${ns}/${name} is gone`);
  if (uid && sa.metadata.uid !== uid) throw rejected(`service account ${ns}/${name} was recreated (uid ${sa.metadata.uid}, token for ${uid})`);
}
