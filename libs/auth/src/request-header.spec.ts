import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { StatusError } from '@orch/apimachinery';
import type { AuthRequest } from './authn';
import { requestHeaderAuthenticator } from './request-header';

// The authenticating proxy's checks, table-driven on certificates built by hand: the proxy's
// certificate must chain to --requestheader-client-ca-file, be within validity, be for client
// authentication and (with allowed names) have an allowed common name; only then are the
// X-Remote-* headers the user.

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const day = 86_400_000;
const gen = async () => (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
const caExt = () => [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)];

async function certificates() {
  const [rootKeys, otherKeys, leafKeys] = await Promise.all([gen(), gen(), gen()]);
  const root = await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=front-proxy-ca', keys: rootKeys, signingAlgorithm: alg, extensions: caExt() });
  const other = await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=other-ca', keys: otherKeys, signingAlgorithm: alg, extensions: caExt() });
  const leaf = (cn: string, issuer: x509.X509Certificate, key: webcrypto.CryptoKey, usage = x509.ExtendedKeyUsage.clientAuth) =>
    x509.X509CertificateGenerator.create({
      subject: `CN=${cn}`,
      issuer: issuer.subject,
      publicKey: leafKeys.publicKey,
      signingKey: key,
      signingAlgorithm: alg,
      notBefore: new Date(Date.now() - day),
      notAfter: new Date(Date.now() + day),
      extensions: [new x509.ExtendedKeyUsageExtension([usage])],
    });
  return {
    root,
    proxy: await leaf('front-proxy-client', root, rootKeys.privateKey),
    stranger: await leaf('someone-else', root, rootKeys.privateKey),
    serverOnly: await leaf('front-proxy-client', root, rootKeys.privateKey, x509.ExtendedKeyUsage.serverAuth),
    otherCa: await leaf('front-proxy-client', other, otherKeys.privateKey),
  };
}

type Certs = Awaited<ReturnType<typeof certificates>>;
const der = (c: x509.X509Certificate) => Buffer.from(c.rawData);
const HEADERS = { 'x-remote-user': 'frank', 'x-remote-group': ['eng', 'ops'], 'x-remote-extra-acme.com%2fproject': 'p1', 'x-remote-extra-scopes': ['a', 'b'] };

describe('requestHeaderAuthenticator', () => {
  let certs: Certs;
  beforeAll(async () => {
    certs = await certificates();
  });

  it.each<{ name: string; cert?: (c: Certs) => x509.X509Certificate; headers?: AuthRequest['headers']; now?: number; allowed?: string[]; want: unknown }>([
    {
      name: 'a verified proxy: user, every group value, extra keys percent-decoded',
      cert: (c) => c.proxy,
      want: { user: { username: 'frank', groups: ['eng', 'ops'], extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] } } },
    },
    { name: 'the first non-empty username header wins', cert: (c) => c.proxy, headers: { 'x-remote-user': '', 'x-forwarded-user': 'gina' }, want: { user: { username: 'gina', groups: [] } } },
    { name: 'allowed names: another name of the CA is 401', cert: (c) => c.stranger, allowed: ['front-proxy-client'], want: 401 },
    { name: 'no allowed names: any certificate of the CA', cert: (c) => c.stranger, allowed: [], want: { user: { username: 'frank', groups: ['eng', 'ops'], extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] } } } },
    { name: 'a certificate of another CA is not a proxy (left to x509)', cert: (c) => c.otherCa, want: { user: null } },
    { name: 'expired: not a proxy', cert: (c) => c.proxy, now: Date.now() + 2 * day, want: { user: null } },
    { name: 'not yet valid: not a proxy', cert: (c) => c.proxy, now: Date.now() - 2 * day, want: { user: null } },
    { name: 'a server-only certificate: not a proxy', cert: (c) => c.serverOnly, want: { user: null } },
    { name: 'a proxy without a username header: not claimed', cert: (c) => c.proxy, headers: { 'x-remote-group': 'eng' }, want: { user: null } },
    { name: 'no client certificate: headers ignored', want: { user: null } },
  ])('$name', async ({ cert, headers, now, allowed, want }) => {
    const authn = requestHeaderAuthenticator(
      { clientCa: certs.root.toString('pem'), allowedNames: allowed ?? ['front-proxy-client'], usernameHeaders: ['X-Remote-User', 'X-Forwarded-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] },
      now ? { now: () => new Date(now) } : {},
    );
    const req: AuthRequest = { headers: headers ?? HEADERS, ...(cert ? { peerCertificate: { raw: der(cert(certs)), chain: [], authorized: true } } : {}) };
    const got = await authn.authenticate(req).then(
      (user) => ({ user }),
      (e: StatusError) => e.code,
    );
    expect(got).toEqual(want);
  });

  it.each([
    { name: 'a CA file without certificates', cfg: { clientCa: 'nothing' }, error: '--requestheader-client-ca-file holds no certificate' },
    { name: 'no username header', cfg: { usernameHeaders: [] }, error: '--requestheader-username-headers must name at least one header' },
  ])('refuses $name', ({ cfg, error }) => {
    expect(() => requestHeaderAuthenticator({ clientCa: certs.root.toString('pem'), allowedNames: [], usernameHeaders: ['X-Remote-User'], groupHeaders: [], extraHeaderPrefixes: [], ...cfg })).toThrow(error);
  });
});
