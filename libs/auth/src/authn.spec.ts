import { X509Certificate, webcrypto } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';
import { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { StatusError } from '@orch/apimachinery';
import { Authenticator, AuthRequest, authRequestFromIncoming, PeerCertificate, peerCertificateFromSocket, unionAuthenticator, x509Authenticator } from './authn';
import { CertAndKey, ensurePki, issueClientCert, Pki } from './pki';
import { anonymousUser, UserInfo } from './user';

let dirs: string[] = [];
let pki: Pki;
/** Another cluster's PKI: its certificates must not authenticate here. */
let foreign: Pki;
/** A CA the TLS server also trusts but that is not the client CA (a front-proxy CA). */
let proxyCa: Pki;

beforeAll(async () => {
  dirs = await Promise.all([1, 2, 3].map(() => mkdtemp(join(tmpdir(), 'orch-authn-'))));
  [pki, foreign, proxyCa] = await Promise.all(dirs.map((d) => ensurePki(d)));
});
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

type Outcome = { user: UserInfo } | { anonymous: true } | { status: number };

async function outcome(a: Authenticator, req: AuthRequest): Promise<Outcome> {
  try {
    const user = await a.authenticate(req);
    return user ? { user } : { anonymous: true };
  } catch (e) {
    if (e instanceof StatusError) return { status: e.code };
    throw e;
  }
}

describe('x509 authentication over real TLS', () => {
  let server: https.Server;
  let port: number;
  const authenticators: Record<string, Authenticator> = {};

  beforeAll(async () => {
    authenticators.clientCa = unionAuthenticator([x509Authenticator({ clientCa: pki.ca.certPem })]);
    authenticators.tlsOnly = unionAuthenticator([x509Authenticator()]);
    server = https.createServer(
      { cert: pki.serving.certPem, key: pki.serving.keyPem, ca: [pki.ca.certPem, proxyCa.ca.certPem], requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const which = new URL(req.url ?? '/', 'https://x').searchParams.get('authn') ?? 'clientCa';
        outcome(authenticators[which], authRequestFromIncoming(req)).then(
          (o) => res.writeHead(200, { 'content-type': 'application/json', 'x-client-port': String(req.socket.remotePort) }).end(JSON.stringify(o)),
          (e) => res.writeHead(500).end(String(e)),
        );
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  /** One request on a new connection (`agent` unset) or on `agent`'s connection; with the client port the server saw. */
  function callOn(client: CertAndKey | undefined, authn: string, agent: https.Agent | false): Promise<{ outcome: Outcome; clientPort: string }> {
    return new Promise((resolve, reject) => {
      const req = https.get({ host: '127.0.0.1', port, path: `/?authn=${authn}`, ca: pki.ca.certPem, cert: client?.certPem, key: client?.keyPem, agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve({ outcome: JSON.parse(body), clientPort: String(res.headers['x-client-port']) }) : reject(new Error(body))));
      });
      req.on('error', reject);
    });
  }

  const call = async (client: CertAndKey | undefined, authn = 'clientCa'): Promise<Outcome> => (await callOn(client, authn, false)).outcome;

  it.each<{ name: string; client: () => Promise<CertAndKey | undefined>; authn?: string; want: Outcome }>([
    { name: 'admin certificate', client: async () => pki.admin, want: { user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } } },
    {
      name: 'node certificate',
      client: () => issueClientCert(pki, { cn: 'system:node:n1', orgs: ['system:nodes'] }),
      want: { user: { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] } },
    },
    { name: 'component certificate, no groups', client: () => issueClientCert(pki, { cn: 'system:orch-scheduler' }), want: { user: { username: 'system:orch-scheduler', groups: ['system:authenticated'] } } },
    { name: 'no certificate', client: async () => undefined, want: { anonymous: true } },
    { name: 'admin certificate of another cluster', client: async () => foreign.admin, want: { status: 401 } },
    { name: 'another cluster, TLS-only authenticator', client: async () => foreign.admin, authn: 'tlsOnly', want: { status: 401 } },
    { name: 'server-only certificate used as a client', client: async () => pki.serving, authn: 'tlsOnly', want: { status: 401 } },
    { name: 'front-proxy CA certificate is not a user', client: async () => proxyCa.admin, want: { status: 401 } },
    { name: 'front-proxy CA certificate, TLS-only authenticator', client: async () => proxyCa.admin, authn: 'tlsOnly', want: { user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } } },
  ])('$name', async ({ client, authn, want }) => {
    expect(await call(await client(), authn)).toEqual(want);
  });

  // The certificate is read and verified once per connection: later requests on a keep-alive
  // connection reuse the verdict; a new connection is checked anew, whatever was cached for
  // another certificate with the same name.
  it('every request on one keep-alive connection is its certificate\'s user; a new connection with another certificate is checked anew', async () => {
    const alice = await issueClientCert(pki, { cn: 'alice', orgs: ['dev'] });
    const aliceUser = { user: { username: 'alice', groups: ['dev', 'system:authenticated'] } };
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: pki.ca.certPem, cert: alice.certPem, key: alice.keyPem });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await callOn(alice, 'clientCa', agent));
      expect(answers.map((a) => a.outcome)).toEqual([aliceUser, aliceUser, aliceUser]);
      expect(new Set(answers.map((a) => a.clientPort)).size).toBe(1);
      const others = await Promise.all([
        callOn(await issueClientCert(foreign, { cn: 'alice', orgs: ['dev'] }), 'clientCa', false),
        callOn(await issueClientCert(proxyCa, { cn: 'alice', orgs: ['dev'] }), 'clientCa', false),
        callOn(await issueClientCert(pki, { cn: 'bob' }), 'clientCa', false),
        callOn(undefined, 'clientCa', false),
      ]);
      expect(others.map((o) => o.outcome)).toEqual([{ status: 401 }, { status: 401 }, { user: { username: 'bob', groups: ['system:authenticated'] } }, { anonymous: true }]);
      expect(others.map((o) => o.clientPort)).not.toContain(answers[0].clientPort);
      expect((await callOn(alice, 'clientCa', agent)).outcome).toEqual(aliceUser);
    } finally {
      agent.destroy();
    }
  });
});

describe('peerCertificateFromSocket', () => {
  // TLS 1.2 (1.3 has no renegotiation): once the certificate of a connection is read it is final,
  // so a client's renegotiation after that is a TLS error on the socket (the gateway's client
  // error handler closes the connection on it, as this server does).
  it('returns the same certificate object for every read on a connection and refuses a renegotiation after the first', async () => {
    const client = await issueClientCert(pki, { cn: 'carol' });
    const seen: (PeerCertificate | undefined)[] = [];
    const serverErrors: string[] = [];
    const server = tls.createServer({ cert: pki.serving.certPem, key: pki.serving.keyPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: false, maxVersion: 'TLSv1.2' }, (socket) => {
      socket.on('error', (err: NodeJS.ErrnoException) => {
        serverErrors.push(String(err.code));
        socket.destroy();
      });
      seen.push(peerCertificateFromSocket(socket), peerCertificateFromSocket(socket));
      socket.write('read');
      socket.on('data', (d: Buffer) => socket.write(d));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    let renegotiated: string;
    try {
      renegotiated = await new Promise<string>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca: pki.ca.certPem, cert: client.certPem, key: client.keyPem, servername: 'localhost', maxVersion: 'TLSv1.2' });
        socket.on('error', () => undefined);
        // Renegotiated, the client asks again and the server answers; refused, the connection closes.
        socket.once('data', () => socket.renegotiate({ rejectUnauthorized: true }, (err) => (err ? resolve('refused') : socket.write('again'))));
        socket.on('data', (d: Buffer) => d.toString() === 'again' && resolve('renegotiated'));
        socket.on('close', () => resolve('closed'));
      });
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(renegotiated).not.toBe('renegotiated');
    expect(serverErrors).toEqual(['ERR_TLS_RENEGOTIATION_DISABLED']);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]?.raw.equals(new X509Certificate(client.certPem).raw)).toBe(true);
  });
});

describe('x509Authenticator chain checks', () => {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const gen = async () => (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const day = 86_400_000;

  /** root → intermediate → leaf (CN=jane, O=dev), built by hand to test chains and validity. */
  async function chain() {
    const [rootKeys, midKeys, leafKeys] = await Promise.all([gen(), gen(), gen()]);
    const caExt = [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)];
    const root = await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=root', keys: rootKeys, signingAlgorithm: alg, extensions: caExt });
    const mid = await x509.X509CertificateGenerator.create({ subject: 'CN=mid', issuer: root.subject, publicKey: midKeys.publicKey, signingKey: rootKeys.privateKey, signingAlgorithm: alg, extensions: caExt });
    const leaf = await x509.X509CertificateGenerator.create({
      subject: 'O=dev, CN=jane',
      issuer: mid.subject,
      publicKey: leafKeys.publicKey,
      signingKey: midKeys.privateKey,
      signingAlgorithm: alg,
      notBefore: new Date(Date.now() - day),
      notAfter: new Date(Date.now() + day),
      extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
    });
    const noCn = await x509.X509CertificateGenerator.create({ subject: 'O=dev', issuer: mid.subject, publicKey: leafKeys.publicKey, signingKey: midKeys.privateKey, signingAlgorithm: alg });
    return { root, mid, leaf, noCn };
  }

  const der = (c: x509.X509Certificate) => Buffer.from(c.rawData);

  it.each<{ name: string; build: (c: Awaited<ReturnType<typeof chain>>) => { req: AuthRequest; ca: string; now?: Date }; want: Outcome }>([
    {
      name: 'leaf through an intermediate',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.leaf), chain: [der(c.mid), der(c.root)], authorized: true } }, ca: c.root.toString('pem') }),
      want: { user: { username: 'jane', groups: ['dev'] } },
    },
    {
      name: 'intermediate missing',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.leaf), chain: [], authorized: true } }, ca: c.root.toString('pem') }),
      want: { status: 401 },
    },
    {
      name: 'intermediate as client CA',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.leaf), chain: [], authorized: true } }, ca: c.mid.toString('pem') }),
      want: { user: { username: 'jane', groups: ['dev'] } },
    },
    {
      name: 'expired leaf',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.leaf), chain: [der(c.mid)], authorized: true } }, ca: c.root.toString('pem'), now: new Date(Date.now() + 2 * day) }),
      want: { status: 401 },
    },
    {
      name: 'not authorized by TLS',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.leaf), chain: [der(c.mid)], authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' } }, ca: c.root.toString('pem') }),
      want: { status: 401 },
    },
    {
      name: 'empty common name is not claimed',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: der(c.noCn), chain: [der(c.mid)], authorized: true } }, ca: c.root.toString('pem') }),
      want: { anonymous: true },
    },
    {
      name: 'garbage certificate',
      build: (c) => ({ req: { headers: {}, peerCertificate: { raw: Buffer.from('nope'), chain: [], authorized: true } }, ca: c.root.toString('pem') }),
      want: { status: 401 },
    },
    { name: 'no certificate', build: (c) => ({ req: { headers: {} }, ca: c.root.toString('pem') }), want: { anonymous: true } },
  ])('$name', async ({ build, want }) => {
    const { req, ca, now } = build(await chain());
    expect(await outcome(x509Authenticator({ clientCa: ca, now: now ? () => now : undefined }), req)).toEqual(want);
  });

  it('rejects an empty client CA bundle', () => {
    expect(() => x509Authenticator({ clientCa: 'no pem here' })).toThrow('client CA bundle holds no certificate');
  });

  it('keeps the reason for logs but answers Unauthorized', async () => {
    const err = await x509Authenticator()
      .authenticate({ headers: {}, peerCertificate: { raw: Buffer.alloc(0), chain: [], authorized: false, authorizationError: 'CERT_HAS_EXPIRED' } })
      .catch((e: StatusError) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).toStatus()).toMatchObject({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    expect(((err as StatusError).cause as Error).message).toBe('x509: certificate not verified: CERT_HAS_EXPIRED');
  });
});

describe('unionAuthenticator', () => {
  const user = (username: string, groups: string[] = []): Authenticator => ({ authenticate: async () => ({ username, groups }) });
  const none: Authenticator = { authenticate: async () => null };
  const bad: Authenticator = {
    authenticate: async () => {
      throw StatusError.unauthorized();
    },
  };
  const broken: Authenticator = {
    authenticate: async () => {
      throw new Error('webhook unreachable');
    },
  };
  const anonymous: Authenticator = { authenticate: async () => anonymousUser() };

  it.each<{ name: string; list: Authenticator[]; want: Outcome }>([
    { name: 'first success wins', list: [none, user('a'), user('b')], want: { user: { username: 'a', groups: ['system:authenticated'] } } },
    { name: 'errors are skipped when a later one succeeds', list: [bad, user('b', ['g'])], want: { user: { username: 'b', groups: ['g', 'system:authenticated'] } } },
    { name: 'system:authenticated not duplicated', list: [user('c', ['system:authenticated'])], want: { user: { username: 'c', groups: ['system:authenticated'] } } },
    { name: 'anonymous gets no system:authenticated', list: [anonymous], want: { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } } },
    { name: 'nobody claims it', list: [none, none], want: { anonymous: true } },
    { name: 'empty list', list: [], want: { anonymous: true } },
    { name: 'invalid credential and no success is 401', list: [none, bad], want: { status: 401 } },
    { name: 'other errors become 401', list: [broken, none], want: { status: 401 } },
    { name: 'one authenticator, invalid credential: 401', list: [bad], want: { status: 401 } },
    { name: 'one authenticator, not claimed', list: [none], want: { anonymous: true } },
  ])('$name', async ({ list, want }) => {
    expect(await outcome(unionAuthenticator(list), { headers: {} })).toEqual(want);
  });

  it('reports the first error (its reason as the 401 cause, for the log)', async () => {
    const err = await unionAuthenticator([none, broken, bad]).authenticate({ headers: {} }).catch((e: StatusError) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(((err as StatusError).cause as Error).message).toBe('authentication failed: webhook unreachable');
  });
});
