import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** One signing key of the test issuer. */
interface IssuerKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export interface OidcIssuer {
  /** `https://127.0.0.1:<port>` plus the path prefix: the `iss` of its tokens. */
  url: string;
  /** The discovery document's URL. */
  discoveryUrl: string;
  /** PEM of the CA that signed the issuer's TLS certificate (`--oidc-ca-file`). */
  caPem: string;
  /** Requests served per path. */
  hits: Map<string, number>;
  /**
   * Signs a token with the current key: `iss` the issuer, `iat` now, `exp` in an hour unless
   * `claims` say otherwise. `opts.key: 'foreign'` signs with a key the JWKS does not publish
   * under the current kid (a wrong signature).
   */
  sign(claims: JWTPayload, opts?: { key?: 'current' | 'foreign'; alg?: string; kid?: string }): Promise<string>;
  /** Adds a new key (kid `key-<n>`) that signs from now on; the JWKS publishes every key. */
  rotate(alg?: string): Promise<void>;
  /** The discovery document says this `issuer` from now on (a mismatch test). */
  claimIssuer(issuer: string): void;
  stop(): Promise<void>;
}

async function newKey(kid: string, alg: string): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/**
 * A real OpenID Connect issuer over HTTPS on a free loopback port: discovery at
 * `<url>/.well-known/openid-configuration`, keys at `<url>/jwks` (jose-made, RS256 by default),
 * with the TLS certificate and key the caller gives (from its own test CA).
 */
export async function startOidcIssuer(tls: { certPem: string; keyPem: string; caPem: string }, opts: { alg?: string; pathPrefix?: string } = {}): Promise<OidcIssuer> {
  const keys: IssuerKey[] = [await newKey('key-1', opts.alg ?? 'RS256')];
  const foreign = await newKey('key-1', opts.alg ?? 'RS256');
  const hits = new Map<string, number>();
  const prefix = opts.pathPrefix ?? '';
  let url = '';
  let advertisedIssuer: string | undefined;
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === `${prefix}/.well-known/openid-configuration`) return json({ issuer: advertisedIssuer ?? url, jwks_uri: `${url}/jwks`, id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))] });
    if (path === `${prefix}/jwks`) return json({ keys: keys.map((k) => k.jwk) });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  return {
    url,
    discoveryUrl: `${url}/.well-known/openid-configuration`,
    caPem: tls.caPem,
    hits,
    async sign(claims, o = {}) {
      const key = o.key === 'foreign' ? foreign : keys[keys.length - 1];
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iat: now, exp: now + 3600, iss: url, ...claims })
        .setProtectedHeader({ alg: o.alg ?? key.alg, kid: o.kid ?? key.kid })
        .sign(key.privateKey);
    },
    async rotate(alg) {
      keys.push(await newKey(`key-${keys.length + 1}`, alg ?? keys[0].alg));
    },
    claimIssuer(issuer) {
      advertisedIssuer = issuer;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
