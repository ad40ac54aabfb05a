import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePki, issueClientCert, selfSignedServingCert, writeKubeconfig, type CertAndKey, type Pki } from '@orch/auth';
import { removeDir, startReviewServer, tempDir, type ReviewServer } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

// The gateway's optional authenticators and authorization modes, each against real HTTPS
// peers: an authenticating proxy with its own client CA (--requestheader-*), a token webhook
// and an authorization webhook (a real HTTPS server with its own CA, called with the gateway's
// client certificate from kubeconfig-format files), and ABAC from a policy file, behind
// Node,RBAC as `--authorization-mode=Node,RBAC,ABAC,Webhook`.

let dir: string;
let gw: GatewayProcess;
let hooks: ReviewServer;
let frontProxy: Pki;
let proxyCert: CertAndKey;
let strangerProxyCert: CertAndKey;
let otherCaCert: CertAndKey;
const clients: ApiClient[] = [];

function client(creds: ConstructorParameters<typeof ApiClient>[1]): ApiClient {
  const c = new ApiClient(gw.url, { ca: gw.creds.ca, ...creds });
  clients.push(c);
  return c;
}

/** The user the gateway sees (SelfSubjectReview), or the HTTP status when it refuses. */
async function whoami(c: ApiClient, headers: Record<string, string> = {}): Promise<{ username: string; groups: string[]; extra?: Record<string, string[]> } | number> {
  const r = await c.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { headers });
  if (r.status !== 201) return r.status;
  return (r.json as { status: { userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> } } }).status.userInfo;
}

beforeAll(async () => {
  dir = await tempDir('authmodes-e2e-');
  const hookTls = await selfSignedServingCert(['127.0.0.1'], 'review-hooks');
  // The gateway's identity towards the webhooks: a client certificate of a CA the webhook trusts.
  const callerPki = await ensurePki(join(dir, 'caller-pki'));
  const gatewayAtHook = await issueClientCert(callerPki, { cn: 'orch-gateway', orgs: [] });
  hooks = await startReviewServer(
    hookTls,
    (c) => {
      if (c.path === '/authn') {
        const token = (c.body.spec as { token: string }).token;
        return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: token === 'ldap-wendy' ? { authenticated: true, user: { username: 'wendy', groups: ['ldap:staff'] } } : { authenticated: false } };
      }
      const spec = c.body.spec as { user: string; resourceAttributes?: { verb: string; resource: string; namespace: string } };
      const r = spec.resourceAttributes;
      if (r?.resource === 'secrets') return { status: { allowed: false, denied: true, reason: 'the webhook keeps secrets' } };
      if (spec.user === 'wendy' && r?.resource === 'pods' && r.verb === 'list') return { status: { allowed: true } };
      return { status: { allowed: false } };
    },
    { clientCa: callerPki.ca.certPem },
  );
  const hookConfig = async (name: string, path: string) => {
    const file = join(dir, `${name}.kubeconfig`);
    await writeKubeconfig(file, { server: `${hooks.url}${path}`, caPem: hooks.caPem, clientCertPem: gatewayAtHook.certPem, clientKeyPem: gatewayAtHook.keyPem, user: 'gateway', context: name });
    return file;
  };
  frontProxy = await ensurePki(join(dir, 'front-proxy'));
  proxyCert = await issueClientCert(frontProxy, { cn: 'front-proxy-client', orgs: [] });
  strangerProxyCert = await issueClientCert(frontProxy, { cn: 'someone-else', orgs: [] });
  // A certificate of neither the client CA nor the proxies' CA, with the allowed proxy name.
  otherCaCert = await issueClientCert(await ensurePki(join(dir, 'other-pki')), { cn: 'front-proxy-client', orgs: ['system:masters'] });
  await writeFile(join(dir, 'front-proxy-ca.crt'), frontProxy.ca.certPem);
  await writeFile(join(dir, 'tokens.csv'), 'abby-token,abby,u-abby\n');
  await writeFile(
    join(dir, 'abac.jsonl'),
    [
      '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "abby", "namespace": "abac", "resource": "configmaps", "apiGroup": "", "readonly": true}}',
      '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "abby", "namespace": "abac", "resource": "secrets", "apiGroup": ""}}',
    ].join('\n'),
  );
  gw = await startGateway({
    args: [
      '--authorization-mode=Node,RBAC,ABAC,Webhook',
      `--authorization-policy-file=${join(dir, 'abac.jsonl')}`,
      `--authorization-webhook-config-file=${await hookConfig('authz', '/authz')}`,
      '--authorization-webhook-cache-authorized-ttl=1h',
      '--authorization-webhook-cache-unauthorized-ttl=1h',
      `--authentication-token-webhook-config-file=${await hookConfig('authn', '/authn')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--requestheader-client-ca-file=${join(dir, 'front-proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy-client',
    ],
  });
  expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'abac' } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await gw?.stop();
  await hooks?.stop();
  if (dir) await removeDir(dir);
});

describe('authenticating proxy (--requestheader-*)', () => {
  it.each<{ name: string; cert: () => { certPem: string; keyPem: string }; headers: Record<string, string>; want: unknown }>([
    { name: 'the proxy names the user, groups and extra', cert: () => proxyCert, headers: { 'X-Remote-User': 'frank', 'X-Remote-Group': 'eng', 'X-Remote-Extra-Scopes': 'read' }, want: { username: 'frank', groups: ['eng', 'system:authenticated'], extra: { scopes: ['read'] } } },
    { name: 'a proxy certificate with a name not allowed: 401', cert: () => strangerProxyCert, headers: { 'X-Remote-User': 'frank' }, want: 401 },
    { name: 'a certificate of another CA with the proxy name: 401, headers ignored', cert: () => otherCaCert, headers: { 'X-Remote-User': 'frank' }, want: 401 },
    { name: 'the proxy without a user header: 401', cert: () => proxyCert, headers: {}, want: 401 },
    { name: 'a cluster client certificate: the headers are ignored', cert: () => ({ certPem: gw.creds.cert, keyPem: gw.creds.key }), headers: { 'X-Remote-User': 'frank', 'X-Remote-Group': 'system:masters' }, want: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } },
  ])('$name', async ({ cert, headers, want }) => {
    const got = await whoami(client({ cert: cert().certPem, key: cert().keyPem }), headers);
    if (typeof want === 'number') expect(got).toBe(want);
    else expect(got).toEqual(want);
  });

  it('a client with no certificate cannot name itself by header: it stays anonymous', async () => {
    const r = await client({}).request('GET', '/api/v1/namespaces/abac/configmaps', undefined, { headers: { 'X-Remote-User': 'abby' } });
    expect(r.status).toBe(403);
    expect((r.json as { message: string }).message).toContain('User "system:anonymous" cannot list resource "configmaps"');
  });
});

describe('token webhook (--authentication-token-webhook-config-file)', () => {
  it('authenticates what the webhook accepts, called with the gateway client certificate; refuses the rest with 401; caches', async () => {
    hooks.calls.length = 0;
    const wendy = client({ token: 'ldap-wendy' });
    expect(await whoami(wendy)).toEqual({ username: 'wendy', groups: ['ldap:staff', 'system:authenticated'] });
    expect(await whoami(wendy)).toEqual({ username: 'wendy', groups: ['ldap:staff', 'system:authenticated'] });
    expect(await whoami(client({ token: 'ldap-mallory' }))).toBe(401);
    const authn = hooks.calls.filter((c) => c.path === '/authn');
    expect(authn.map((c) => (c.body.spec as { token: string }).token)).toEqual(['ldap-wendy', 'ldap-mallory']);
    expect(authn.every((c) => c.clientName === 'orch-gateway')).toBe(true);
    // token file users never reach the webhook
    expect(await whoami(client({ token: 'abby-token' }))).toMatchObject({ username: 'abby' });
    expect(hooks.calls.filter((c) => c.path === '/authn')).toHaveLength(2);
  });
});

describe('ABAC and Webhook authorization modes', () => {
  it.each([
    { name: 'ABAC allows a readonly policy', token: 'abby-token', method: 'GET', path: '/api/v1/namespaces/abac/configmaps', want: 200 },
    { name: 'ABAC readonly: no write, and the webhook has no opinion', token: 'abby-token', method: 'POST', path: '/api/v1/namespaces/abac/configmaps', want: 403 },
    { name: 'ABAC is before Webhook: its allow of secrets wins over the webhook’s deny', token: 'abby-token', method: 'GET', path: '/api/v1/namespaces/abac/secrets', want: 200 },
    { name: 'ABAC outside the policy namespace', token: 'abby-token', method: 'GET', path: '/api/v1/namespaces/default/configmaps', want: 403 },
    { name: 'Webhook allows', token: 'ldap-wendy', method: 'GET', path: '/api/v1/namespaces/abac/pods', want: 200 },
    { name: 'Webhook denies with its reason', token: 'ldap-wendy', method: 'GET', path: '/api/v1/namespaces/abac/secrets', want: 403, message: 'the webhook keeps secrets' },
  ])('$name', async ({ token, method, path, want, message }) => {
    const r = await client({ token }).request(method, path, method === 'POST' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } : undefined);
    expect(r.status).toBe(want);
    if (message) expect((r.json as { message: string }).message).toContain(message);
  });

  it('the webhook’s answers are cached for the configured TTLs', async () => {
    const wendy = client({ token: 'ldap-wendy' });
    const before = hooks.calls.filter((c) => c.path === '/authz').length;
    for (let i = 0; i < 3; i++) {
      expect((await wendy.request('GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
      expect((await wendy.request('GET', '/api/v1/namespaces/default/secrets')).status).toBe(403);
    }
    // one call per distinct request: the allow and the deny were each asked once
    expect(hooks.calls.filter((c) => c.path === '/authz').length).toBe(before + 2);
  });

  it('kubectl-style rules review reports Webhook as incomplete and lists ABAC rules', async () => {
    const r = await client({ token: 'abby-token' }).post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'abac' } });
    expect(r.status).toBe(201);
    const status = (r.json as { status: { incomplete: boolean; resourceRules: { verbs: string[]; resources: string[] }[] } }).status;
    expect(status.incomplete).toBe(true);
    expect(status.resourceRules).toEqual(expect.arrayContaining([{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'] }]));
  });
});

describe('secrets never leak', () => {
  it('the gateway log names none of the tokens the suite sent (accepted, refused, webhook-checked)', () => {
    const log = gw.process.output();
    expect(log.length).toBeGreaterThan(0);
    for (const token of ['ldap-wendy', 'ldap-mallory', 'abby-token']) expect(log).not.toContain(token);
  });
});
