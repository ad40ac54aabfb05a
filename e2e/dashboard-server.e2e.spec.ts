import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { WebSocket } from 'ws';
import { selfSignedServingCert } from '@orch/auth';
import { removeDir, startOidcIssuer, tempDir, type OidcIssuer } from '@orch/testing';
import { startDashboard, type DashboardProcess } from './support/dashboard';
import { startGateway, type GatewayProcess } from './support/gateway';

// The dashboard server in front of a real gateway (Node,RBAC): login with a bearer token (a
// service-account token, an id_token of a real OIDC issuer over HTTPS, a token-file token) into a
// server-side session (HttpOnly, Secure, SameSite=Strict cookie), the gateway behind /k8s/ with
// the user's own token (RBAC decides), CSRF and origin checks on every state-changing call,
// streamed watches, upgrades, logout, and no token in its output.

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

describe('dashboard server', () => {
  let gw: GatewayProcess;
  let dash: DashboardProcess;
  let idp: OidcIssuer;
  let dir = '';
  const tokens: Record<'admin' | 'viewer' | 'oidc' | 'file', string> = { admin: '', viewer: '', oidc: '', file: 'file-token-of-carol-0123456789' };
  const origin = () => dash.url;

  /** One request to the dashboard, trusting only the cluster CA (its certificate comes from it). */
  const call = (method: string, path: string, opts: { cookie?: string; csrf?: string; origin?: string; body?: unknown; accept?: string } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = opts.body === undefined ? undefined : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
      if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
      if (opts.cookie) headers.cookie = opts.cookie;
      if (opts.csrf) headers['x-csrf-token'] = opts.csrf;
      if (opts.origin) headers.origin = opts.origin;
      const req = https.request(new URL(path, dash.url), { method, headers, ca: gw.creds.ca }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  /** Logs in and returns the cookie and CSRF token of the new session. */
  const login = async (token: string) => {
    const r = await call('POST', '/auth/login', { body: { token }, origin: origin() });
    expect(r.status).toBe(201);
    const cookie = String(r.headers['set-cookie']).split(';')[0];
    return { cookie, csrf: r.json.csrfToken as string, answer: r };
  };

  beforeAll(async () => {
    dir = await tempDir('dash-e2e-');
    const idpTls = await selfSignedServingCert(['127.0.0.1'], 'test-idp');
    idp = await startOidcIssuer(idpTls);
    await writeFile(join(dir, 'idp-ca.crt'), idpTls.caPem);
    await writeFile(join(dir, 'tokens.csv'), `${tokens.file},carol,carol-uid,"ops,auditors"\n`);
    gw = await startGateway({
      args: [
        '--write-component-kubeconfigs',
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        `--oidc-issuer-url=${idp.url}`,
        '--oidc-client-id=orch-dashboard',
        '--oidc-groups-claim=groups',
        '--oidc-groups-prefix=oidc:',
        `--oidc-ca-file=${join(dir, 'idp-ca.crt')}`,
      ],
    });
    tokens.oidc = await idp.sign({ sub: 'alice', aud: 'orch-dashboard', groups: ['devs'] });
    const admin = gw.admin;
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: 'team' } }],
      ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'admin' } }],
      ['/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'viewer' } }],
      ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { metadata: { name: 'dash-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: 'admin', namespace: 'default' }] }],
      ['/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', { metadata: { name: 'viewer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: 'team' }] }],
      // The OIDC group devs and the token-file user carol may view the team namespace.
      ['/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', { metadata: { name: 'outsiders' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'oidc:devs' }, { kind: 'User', name: 'carol' }] }],
    ] as const) {
      const r = await admin.request('POST', path, body);
      expect([path, r.status]).toEqual([path, 201]);
    }
    for (const [who, ns] of [['admin', 'default'], ['viewer', 'team']] as const) {
      const r = await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${who}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
      expect(r.status).toBe(201);
      tokens[who] = r.json.status.token;
    }
    dash = await startDashboard(gw.url, join(gw.dataDir, 'pki'));
  }, 60_000);

  afterAll(async () => {
    await dash?.stop();
    await gw?.stop();
    await idp?.stop();
    if (dir) await removeDir(dir);
  });

  it('serves the UI over HTTPS with a certificate of the cluster CA, with a strict content security policy', async () => {
    for (const path of ['/', '/workloads/deployments']) {
      const r = await call('GET', path, { accept: 'text/html' });
      expect(r.status).toBe(200);
      expect(r.text).toContain('<div id="app">');
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
      expect(r.headers['x-frame-options']).toBe('DENY');
    }
    expect((await call('GET', '/assets/nothing.js')).status).toBe(404);
  });

  it('serves a certificate of its own, issued by the cluster CA (not the gateway\'s)', async () => {
    const peer = await new Promise<X509Certificate>((resolve, reject) => {
      const req = https.get(`${dash.url}/auth/session`, { ca: gw.creds.ca }, (res) => {
        res.resume();
        resolve(new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw));
      });
      req.on('error', reject);
    });
    expect(peer.subject).toContain('CN=orch-dashboard');
    expect(peer.checkIssued(new X509Certificate(gw.creds.ca))).toBe(true);
    expect(peer.checkHost('localhost')).toBe('localhost');
    expect(peer.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const gatewayCert = await new Promise<X509Certificate>((resolve, reject) => {
      const req = https.get(`${gw.url}/readyz`, { ca: gw.creds.ca }, (res) => (res.resume(), resolve(new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw))));
      req.on('error', reject);
    });
    expect(peer.fingerprint256).not.toBe(gatewayCert.fingerprint256);
  });

  it.each([
    ['an id_token of the OIDC issuer', 'oidc', (): string => `${idp.url}#alice`, 'oidc:devs'],
    ['a token of the static token file', 'file', (): string => 'carol', 'ops'],
  ] as const)('logs in with %s: RBAC decides on its user and groups', async (_what, which, user, group) => {
    const s = await login(tokens[which]);
    expect(s.answer.json).toEqual({ user: user(), groups: expect.arrayContaining([group, 'system:authenticated']), csrfToken: expect.any(String) });
    expect((await call('GET', '/k8s/api/v1/namespaces/team/configmaps', { cookie: s.cookie })).status).toBe(200);
    const forbidden = await call('GET', '/k8s/api/v1/namespaces', { cookie: s.cookie });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toContain(user());
  });

  it('refuses an id_token for another client or signed by a key the issuer does not publish (401)', async () => {
    for (const token of [await idp.sign({ sub: 'alice', aud: 'someone-else' }), await idp.sign({ sub: 'alice', aud: 'orch-dashboard' }, { key: 'foreign' })]) {
      const r = await call('POST', '/auth/login', { body: { token }, origin: origin() });
      expect(r.status).toBe(401);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
  });

  it.each([
    ['no body', undefined, undefined, 400],
    ['a body that is not JSON', 'token=abc', undefined, 400],
    ['a token with spaces', { token: 'a b' }, undefined, 400],
    ['a token the gateway does not know', { token: 'not-a-real-token' }, undefined, 401],
    ['a good token from another origin', 'ADMIN', 'https://evil.example', 403],
  ])('refuses a login with %s', async (_what, body, from, code) => {
    const r = await call('POST', '/auth/login', { body: body === 'ADMIN' ? { token: tokens.admin } : body, origin: from ?? origin() });
    expect(r.status).toBe(code);
    expect(r.headers['set-cookie']).toBeUndefined();
    expect(r.json).toMatchObject({ kind: 'Status', code });
  });

  it('logs in with a service-account token into an HttpOnly, Secure, SameSite=Strict session that holds no token', async () => {
    const { answer, cookie } = await login(tokens.admin);
    expect(String(answer.headers['set-cookie'])).toMatch(/^orch_dashboard_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(answer.json).toEqual({ user: 'system:serviceaccount:default:admin', groups: expect.arrayContaining(['system:serviceaccounts']), csrfToken: expect.any(String) });
    expect(answer.text).not.toContain(tokens.admin);
    const session = await call('GET', '/auth/session', { cookie });
    expect(session.json.user).toBe('system:serviceaccount:default:admin');
    expect((await call('GET', '/auth/session')).status).toBe(401);
    expect((await call('GET', '/auth/session', { cookie: 'orch_dashboard_session=forged' })).status).toBe(401);
  });

  it('passes calls to the gateway with the user\'s own token: RBAC decides', async () => {
    const admin = await login(tokens.admin);
    const viewer = await login(tokens.viewer);
    expect((await call('GET', '/k8s/api/v1/namespaces', { cookie: admin.cookie })).json.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toContain('team');
    const forbidden = await call('GET', '/k8s/api/v1/namespaces', { cookie: viewer.cookie });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toContain('system:serviceaccount:team:viewer');
    expect((await call('GET', '/k8s/api/v1/namespaces/team/pods', { cookie: viewer.cookie })).status).toBe(200);
    const del = await call('DELETE', '/k8s/api/v1/namespaces/team', { cookie: viewer.cookie, csrf: viewer.csrf, origin: origin() });
    expect(del.status).toBe(403);
    expect((await call('GET', '/k8s/api/v1/namespaces')).status).toBe(401);
    // The Table representation passes through (kubectl's columns).
    const table = await call('GET', '/k8s/api/v1/namespaces', { cookie: admin.cookie, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(table.json.kind).toBe('Table');
  });

  it.each([
    ['without the CSRF header is refused (403)', () => ({ csrf: undefined as string | undefined, origin: origin() }), 403],
    ['with a wrong CSRF header is refused (403)', () => ({ csrf: 'x'.repeat(43), origin: origin() }), 403],
    ['from another origin is refused (403)', (s: { csrf: string }) => ({ csrf: s.csrf, origin: 'https://evil.example' }), 403],
    ['with the CSRF header from this origin is made (201)', (s: { csrf: string }) => ({ csrf: s.csrf, origin: origin() }), 201],
  ])('a state-changing call %s', async (what, headers, code) => {
    const s = await login(tokens.admin);
    const name = `csrf-${code}-${what.length}`;
    const r = await call('POST', '/k8s/api/v1/namespaces/team/configmaps', { cookie: s.cookie, ...headers(s), body: { metadata: { name }, data: { a: '1' } } });
    expect(r.status).toBe(code);
    expect((await gw.admin.get(`/api/v1/namespaces/team/configmaps/${name}`)).status).toBe(code === 201 ? 200 : 404);
  });

  it('streams a watch to the browser as events happen', async () => {
    const s = await login(tokens.viewer);
    const seen = await new Promise<string>((resolve, reject) => {
      const req = https.request(new URL('/k8s/api/v1/namespaces/team/configmaps?watch=1&resourceVersion=0', dash.url), { headers: { cookie: s.cookie }, ca: gw.creds.ca }, (res) => {
        expect(res.statusCode).toBe(200);
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString();
          if (buf.includes('"watched"')) {
            req.destroy();
            resolve(buf);
          }
        });
        void gw.admin.request('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'watched' } });
      });
      req.on('error', reject);
      req.end();
    });
    expect(seen).toMatch(/"type":"ADDED","object":\{"apiVersion":"v1","kind":"ConfigMap","metadata":\{"name":"watched"/);
  });

  it('carries a page\'s watches over one WebSocket, with the user\'s RBAC, and closes it at logout', async () => {
    const s = await login(tokens.viewer);
    const ws = new WebSocket(`${dash.url.replace('https', 'wss')}/watch`, { ca: gw.creds.ca, headers: { cookie: s.cookie, origin: origin() } });
    const messages: { id: number; data?: string; error?: { code: number; message: string } }[] = [];
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (m) => messages.push(JSON.parse(String(m))));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ op: 'watch', id: 1, path: '/api/v1/namespaces/team/configmaps?watch=1&resourceVersion=0', accept: 'application/json' }));
    ws.send(JSON.stringify({ op: 'watch', id: 2, path: '/api/v1/namespaces?watch=1', accept: 'application/json' }));
    ws.send(JSON.stringify({ op: 'watch', id: 3, path: '/api/v1/namespaces/team/configmaps', accept: 'application/json' }));
    await gw.admin.request('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'muxed' } });
    const deadline = Date.now() + 10_000;
    const answered = () => messages.some((m) => m.id === 1 && m.data?.includes('"muxed"')) && messages.some((m) => m.id === 2) && messages.some((m) => m.id === 3);
    while (!answered() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(messages.filter((m) => m.id === 1).map((m) => m.data).join('')).toContain('"name":"muxed"');
    expect(messages.find((m) => m.id === 2)?.error).toMatchObject({ code: 403, message: expect.stringContaining('system:serviceaccount:team:viewer') });
    expect(messages.find((m) => m.id === 3)?.error).toMatchObject({ code: 400 });
    expect((await call('POST', '/auth/logout', { cookie: s.cookie, csrf: s.csrf, origin: origin() })).status).toBe(204);
    expect(await closed).toBe(4401);
  });

  it.each([
    ['without a session (401)', () => ({}), 401],
    ['from another origin (403)', (c: string) => ({ cookie: c, origin: 'https://evil.example' }), 403],
    ['to a pod that does not exist (the gateway\'s 404)', (c: string) => ({ cookie: c, origin: origin() }), 404],
  ])('an exec upgrade %s is refused', async (_what, headersOf, code) => {
    const s = await login(tokens.admin);
    const h = headersOf(s.cookie) as { cookie?: string; origin?: string };
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(new URL('/k8s/api/v1/namespaces/team/pods/nope/exec?command=true&stdout=true', dash.url), {
        ca: gw.creds.ca,
        headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'v4.channel.k8s.io', ...(h.cookie ? { cookie: h.cookie } : {}), ...(h.origin ? { origin: h.origin } : {}) },
      });
      req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(code);
  });

  it('logs out: the session ends and its cookie no longer works', async () => {
    const s = await login(tokens.admin);
    expect((await call('POST', '/auth/logout', { cookie: s.cookie, origin: origin() })).status).toBe(403);
    const out = await call('POST', '/auth/logout', { cookie: s.cookie, csrf: s.csrf, origin: origin() });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await call('GET', '/auth/session', { cookie: s.cookie })).status).toBe(401);
    expect((await call('GET', '/k8s/api/v1/namespaces', { cookie: s.cookie })).status).toBe(401);
  });

  it('never writes a token into its output', () => {
    const output = dash.process.output();
    expect(output).toContain('logged in');
    for (const token of Object.values(tokens)) expect(output).not.toContain(token);
  });
});
