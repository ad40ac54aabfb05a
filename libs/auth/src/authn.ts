import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { X509Certificate, createHash } from 'node:crypto';
import { TLSSocket } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { Passport } from 'passport';
import { Strategy } from 'passport-strategy';
import { StatusError } from '@orch/apimachinery';
import { overHttp2 } from '@orch/server-common';
import { ExpiringCache } from './token-cache';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, UserInfo } from './user';

/** The client certificate of the TLS connection a request came on. */
export interface PeerCertificate {
  /** DER of the leaf certificate. */
  raw: Buffer;
  /**
   * DER of the further certificates of the chain Node reported (issuer of the leaf first).
   * Read from the socket on first use only: Node's detailed peer certificate chain costs four
   * times the leaf alone, and only a leaf not issued by a trusted CA directly needs it.
   */
  readonly chain: Buffer[];
  /**
   * Node's TLS verified the chain against the server's `ca` option (`socket.authorized`;
   * the server runs with `requestCert: true, rejectUnauthorized: false`). A certificate that
   * is not authorized never authenticates.
   */
  authorized: boolean;
  /** Node's reason when not authorized (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, ...). */
  authorizationError?: string;
}

/** What authenticators see of a request. Build it with `authRequestFromIncoming`. */
export interface AuthRequest {
  headers: Record<string, string | string[] | undefined>;
  peerCertificate?: PeerCertificate;
  /**
   * Audiences a token must be for (a TokenReview's `spec.audiences`); absent: the API
   * audiences. Authenticators of audience-less credentials ignore it.
   */
  audiences?: string[];
}

/**
 * One authentication method. Resolves to the user, or null when the request carries no
 * credential of this kind ("not mine"); throws a 401 StatusError when it carries one that is
 * invalid.
 */
export interface Authenticator {
  authenticate(req: AuthRequest): Promise<UserInfo | null>;
}

/**
 * The client certificate of a TLS socket, or undefined when the client sent none. Read once per
 * connection and kept on the socket: every request of a keep-alive connection gets the same
 * object (authenticators keep their verdict per object, so a connection is authenticated once).
 * Once read, the certificate cannot change: renegotiation is disabled on the socket (a client's
 * attempt is a TLS error that closes the connection; upstream's Go TLS server never renegotiates
 * either, and TLS 1.3 has no renegotiation).
 */
export function peerCertificateFromSocket(socket: TLSSocket): PeerCertificate | undefined {
  const known = PEER_CERTS.get(socket);
  if (known) return known.peer;
  socket.disableRenegotiation();
  const peer = readPeerCertificate(socket);
  PEER_CERTS.set(socket, { peer });
  return peer;
}

const PEER_CERTS = new WeakMap<TLSSocket, { peer: PeerCertificate | undefined }>();

function readPeerCertificate(socket: TLSSocket): PeerCertificate | undefined {
  // The leaf alone (about 50 µs per connection; Node's detailed chain costs four times that).
  const leaf = socket.getPeerCertificate(false);
  if (!leaf?.raw) return undefined;
  let chain: Buffer[] | undefined;
  const err = socket.authorizationError as Error | string | undefined;
  return {
    raw: leaf.raw,
    get chain() {
      return (chain ??= readChain(socket));
    },
    authorized: socket.authorized,
    ...(err ? { authorizationError: String(err instanceof Error ? err.message : err) } : {}),
  };
}

function readChain(socket: TLSSocket): Buffer[] {
  const chain: Buffer[] = [];
  const leaf = socket.getPeerCertificate(true);
  for (let c = leaf; c?.issuerCertificate && c.issuerCertificate !== c && chain.length < 10; c = c.issuerCertificate) {
    if (!c.issuerCertificate.raw) break;
    chain.push(c.issuerCertificate.raw);
  }
  return chain;
}

/**
 * Builds the AuthRequest of a Node request (Fastify: `request.raw`); the certificate comes from its
 * TLS connection: the request's socket over HTTP/1.1, its session's socket over HTTP/2 (one object
 * per connection, as PEER_CERTS needs: `req.socket` of an HTTP/2 request is a new proxy per stream).
 */
export function authRequestFromIncoming(req: IncomingMessage | Http2ServerRequest): AuthRequest {
  const socket = overHttp2(req) ? req.stream.session?.socket : req.socket;
  const peerCertificate = socket instanceof TLSSocket ? peerCertificateFromSocket(socket) : undefined;
  return peerCertificate ? { headers: req.headers, peerCertificate } : { headers: req.headers };
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

/**
 * X.509 client-certificate authentication (`--client-ca-file`): the subject's common name is
 * the user name and each organization a group. No certificate → null; a certificate Node's
 * TLS did not verify → 401. With `clientCa` (PEM bundle) the chain must also lead to one of
 * those CAs, the certificates must be within validity and the leaf usable for client auth:
 * needed when the TLS server trusts more CAs than the client CA (e.g. a front-proxy CA).
 * A certificate with an empty common name is not claimed (null), as upstream.
 */
export function x509Authenticator(opts: { clientCa?: string; now?: () => Date; cacheSize?: number } = {}): Authenticator {
  const roots = opts.clientCa === undefined ? undefined : parsePemBundle(opts.clientCa);
  if (roots?.length === 0) throw new Error('client CA bundle holds no certificate');
  const now = opts.now ?? (() => new Date());
  // Upstream caches x509 verification too: parsing and verifying cost far more than a request.
  // A verdict lives until the leaf expires or for at most VERIFY_CACHE_TTL_MS, whichever comes first.
  type Verdict = { user: UserInfo | null; until: number };
  const verdictOf = certificateVerdicts<Verdict>(
    (peer) => {
      let leaf: X509Certificate;
      try {
        leaf = new X509Certificate(peer.raw);
      } catch (e) {
        throw unauthorized(`x509: cannot parse client certificate: ${(e as Error).message}`);
      }
      if (roots) {
        const why = verifyChain(leaf, () => peer.chain.map((d) => new X509Certificate(d)), roots, now());
        if (why) throw unauthorized(`x509: ${why}`);
      }
      const subject = new x509.X509Certificate(peer.raw).subjectName;
      const cn = subject.getField('CN').at(-1);
      const user = cn ? { username: cn, groups: subject.getField('O') } : null;
      return { user, until: Math.min(new Date(leaf.validTo).getTime(), now().getTime() + VERIFY_CACHE_TTL_MS) };
    },
    { maxEntries: opts.cacheSize ?? 4096, now: opts.now },
  );
  return {
    async authenticate(req) {
      const peer = req.peerCertificate;
      if (!peer) return null;
      if (!peer.authorized) throw unauthorized(`x509: certificate not verified: ${peer.authorizationError ?? 'unknown reason'}`);
      const { user } = verdictOf(peer);
      return user && { ...user, groups: [...user.groups] };
    },
  };
}

const VERIFY_CACHE_TTL_MS = 5 * 60_000;

/**
 * A verdict on each client certificate, decided once and reused until its `until` (ms): per
 * connection (the socket's PeerCertificate object: later requests on a keep-alive connection
 * cost a lookup) and across connections by a SHA-256 of the leaf, at most `maxEntries` of those.
 * A decision that throws is not kept (the next request decides again). `now` is the clock
 * (Date.now without one: no Date made per request).
 */
export function certificateVerdicts<V extends { until: number }>(
  decide: (peer: PeerCertificate, nowMs: number) => V,
  opts: { maxEntries: number; now?: () => Date },
): (peer: PeerCertificate) => V {
  const perConnection = new WeakMap<PeerCertificate, V>();
  const byLeaf = new ExpiringCache<V>(opts.maxEntries);
  const clock = opts.now;
  const nowMs = clock ? () => clock().getTime() : Date.now;
  return (peer) => {
    const t = nowMs();
    const mine = perConnection.get(peer);
    if (mine && mine.until > t) return mine;
    const key = createHash('sha256').update(peer.raw).digest('base64');
    let v = byLeaf.get(key, t);
    if (!v) {
      v = decide(peer, t);
      byLeaf.set(key, v, v.until);
    }
    perConnection.set(peer, v);
    return v;
  };
}

/**
 * One authenticator as a passport strategy: a user is `success`, null is `fail` (the next
 * strategy tries), a thrown error is `fail` with the error kept as its challenge (upstream's
 * union also goes on after an authenticator's error).
 */
class AuthenticatorStrategy extends Strategy {
  constructor(private readonly authenticator: Authenticator) {
    super();
  }

  override authenticate(req: Parameters<Strategy['authenticate']>[0]): void {
    this.authenticator.authenticate(req as unknown as AuthRequest).then(
      (user) => (user ? this.success(user) : this.fail(null, 401)),
      (err: unknown) => this.fail(err ?? new Error('authentication failed'), 401),
    );
  }
}

/**
 * Tries each authenticator in order, composed as passport strategies in one
 * `passport.authenticate([...])` chain (sessionless); the first that returns a user wins, and
 * `system:authenticated` is added to its groups (unless it is anonymous). When none returns a
 * user: if any threw, the first error is rethrown (a 401 StatusError; other errors are wrapped
 * in one), else null, and the caller decides about anonymous access.
 */
export function unionAuthenticator(list: readonly Authenticator[]): Authenticator {
  const passport = new Passport();
  const names = list.map((a, i) => {
    const name = `authenticator-${i}`;
    passport.use(name, new AuthenticatorStrategy(a));
    return name;
  });
  return {
    authenticate(req) {
      if (names.length === 0) return Promise.resolve(null);
      return new Promise<UserInfo | null>((resolve, reject) => {
        const settle = (err: unknown, user: UserInfo | false, challenges: unknown) => {
          if (err) return reject(asUnauthorized(err));
          if (user) return resolve(withAuthenticatedGroup(user));
          // One strategy reports its challenge alone, several as a list; null challenges are plain declines.
          const first = (Array.isArray(challenges) ? challenges : [challenges]).find((c) => c !== null && c !== undefined);
          if (first === undefined) resolve(null);
          else reject(asUnauthorized(first));
        };
        const middleware = passport.authenticate(names, { session: false }, settle) as (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
        middleware(req, {}, (err) => reject(asUnauthorized(err)));
      });
    },
  };
}

function asUnauthorized(err: unknown): StatusError {
  return err instanceof StatusError ? err : unauthorized(`authentication failed: ${(err as Error)?.message ?? String(err)}`);
}

/** Adds `system:authenticated` unless present or the user is anonymous / unauthenticated. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  const g = user.groups;
  if (user.username === ANONYMOUS_USER || g.includes(AUTHENTICATED_GROUP) || g.includes(UNAUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...g, AUTHENTICATED_GROUP] };
}

/** A 401 whose public message is upstream's `Unauthorized`; the reason rides along as `cause` for logs. */
function unauthorized(reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(reason);
  return e;
}

/** The certificates of a PEM bundle. */
export function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/**
 * Why a client certificate (leaf DER plus the chain the client sent) is not usable for client
 * authentication under `roots` at `now`, or undefined when it is: chains to a root, within
 * validity, client-auth key usage.
 */
export function clientCertificateProblem(peer: Pick<PeerCertificate, 'raw' | 'chain'>, roots: X509Certificate[], now: Date): string | undefined {
  try {
    return verifyChain(new X509Certificate(peer.raw), () => peer.chain.map((d) => new X509Certificate(d)), roots, now);
  } catch (e) {
    return `cannot parse client certificate: ${(e as Error).message}`;
  }
}

/**
 * Returns why `leaf` does not chain to one of `roots` through the certificates `chain` returns
 * (called only when the leaf is not issued by a root directly), or undefined when it does.
 */
function verifyChain(leaf: X509Certificate, chain: () => X509Certificate[], roots: X509Certificate[], now: Date): string | undefined {
  const eku = leaf.keyUsage;
  if (eku && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return 'certificate specifies an incompatible key usage';
  const issued = (child: X509Certificate, parent: X509Certificate) => parent.ca && child.checkIssued(parent) && child.verify(parent.publicKey);
  const valid = (c: X509Certificate) => new Date(c.validFrom) <= now && now <= new Date(c.validTo);
  let cur = leaf;
  let intermediates: X509Certificate[] | undefined;
  for (let depth = 0; depth < 10; depth++) {
    if (!valid(cur)) return `certificate has expired or is not yet valid: current time ${now.toISOString()} is outside ${cur.validFrom} - ${cur.validTo}`;
    const root = roots.find((r) => issued(cur, r));
    if (root) return valid(root) ? undefined : 'client CA certificate has expired or is not yet valid';
    intermediates ??= chain();
    const next = intermediates.find((i) => i !== cur && issued(cur, i));
    if (!next) break;
    cur = next;
  }
  return 'certificate signed by unknown authority';
}
