import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensurePki, issueClientCert, writeKubeconfig } from '@orch/auth';
import { removeDir, tempDir } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';

// Authorization with the default `--authorization-mode=Node,RBAC`, driven by stock kubectl
// (protobuf SelfSubjectAccessReviews at the k8s.io paths, impersonation headers) and raw
// HTTPS clients with their own client certificates.

describe('RBAC, impersonation and access reviews with kubectl', () => {
  let gw: GatewayProcess;
  let dir: string;
  const kubeconfigs: Record<string, string> = {};
  const clients: Record<string, ApiClient> = {};
  /** Every credential the suite handles: none may appear in the gateway's log. */
  const secrets = new Set<string>(['hunter2', 'aHVudGVyMg==']);

  async function identity(name: string, cn: string, orgs: string[] = []): Promise<void> {
    const pki = await ensurePki(join(gw.dataDir, 'pki'));
    const cert = await issueClientCert(pki, { cn, orgs });
    kubeconfigs[name] = join(dir, `${name}.kubeconfig`);
    await writeKubeconfig(kubeconfigs[name], { server: gw.url, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: cn, context: name });
    clients[name] = new ApiClient(gw.url, { ca: pki.ca.certPem, cert: cert.certPem, key: cert.keyPem });
  }

  const kubectl = (who: string, ...args: string[]) => {
    const r = spawnSync('kubectl', ['--kubeconfig', kubeconfigs[who] ?? gw.kubeconfig, '--cache-dir', join(dir, `cache-${who}`), ...args], { encoding: 'utf8', timeout: 30_000 });
    return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
  };
  const admin = (...args: string[]) => kubectl('admin', ...args);

  beforeAll(async () => {
    gw = await startGateway({ args: ['--enable-admission-plugins=NodeRestriction'], controllers: POD_CONTROLLERS });
    dir = await tempDir('rbac-e2e-');
    await identity('viewer', 'vera');
    await identity('editor', 'eddie', ['team-devs']);
    await identity('nobody', 'nadia');
    await identity('node', 'system:node:n1', ['system:nodes']);
    for (const ns of ['team', 'other']) expect(admin('create', 'namespace', ns).code).toBe(0);
    // Pods are admitted once their namespace's default service account exists (ServiceAccount admission).
    for (const ns of ['team', 'other']) await defaultServiceAccount(gw.admin, ns);
    expect(admin('create', 'clusterrolebinding', 'vera-views', '--clusterrole=view', '--user=vera').code).toBe(0);
    expect(admin('create', 'rolebinding', 'devs-admin', '--clusterrole=admin', '--group=team-devs', '-n', 'team').code).toBe(0);
    expect(admin('create', 'secret', 'generic', 'db', '--from-literal=password=hunter2', '-n', 'team').code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    for (const c of Object.values(clients)) c.close();
    await gw?.stop();
    if (dir) await removeDir(dir);
  });

  it.each([
    { who: 'admin', args: ['create', 'pods'], want: 'yes' },
    { who: 'viewer', args: ['list', 'pods', '-n', 'team'], want: 'yes' },
    { who: 'viewer', args: ['create', 'pods', '-n', 'team'], want: 'no' },
    { who: 'viewer', args: ['get', 'secrets', '-n', 'team'], want: 'no' },
    { who: 'editor', args: ['create', 'deployments.apps', '-n', 'team'], want: 'yes' },
    { who: 'editor', args: ['create', 'deployments.apps', '-n', 'other'], want: 'no' },
    { who: 'editor', args: ['get', 'secrets', '-n', 'team'], want: 'yes' },
    { who: 'nobody', args: ['get', 'pods'], want: 'no' },
  ])('auth can-i $args as $who → $want', ({ who, args, want }) => {
    const r = kubectl(who, 'auth', 'can-i', ...args);
    expect(r.out).toBe(want);
    expect(r.code).toBe(want === 'yes' ? 0 : 1);
  });

  it('auth can-i --list shows the rules of the user', () => {
    const r = kubectl('viewer', 'auth', 'can-i', '--list', '-n', 'team');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(r.out).not.toMatch(/^secrets\s/m);
  });

  it('auth whoami names the user and its groups', () => {
    const r = kubectl('editor', 'auth', 'whoami', '-o', 'json');
    expect(r.code).toBe(0);
    const review = JSON.parse(r.out);
    expect(review.status.userInfo.username).toBe('eddie');
    expect(review.status.userInfo.groups).toEqual(expect.arrayContaining(['team-devs', 'system:authenticated']));
  });

  it('a view-only user reads but cannot write or read secrets', () => {
    expect(kubectl('viewer', 'get', 'configmaps', '-n', 'team').code).toBe(0);
    const write = kubectl('viewer', 'create', 'configmap', 'x', '-n', 'team');
    expect(write.code).not.toBe(0);
    expect(write.err).toMatch(/configmaps is forbidden: User "vera" cannot create resource "configmaps" in API group "" in the namespace "team"/);
    const secret = kubectl('viewer', 'get', 'secret', 'db', '-n', 'team', '-o', 'json');
    expect(secret.code).not.toBe(0);
    expect(secret.out).toBe('');
    expect(secret.err).not.toMatch(/hunter2|aHVudGVyMg/);
  });

  it('--as and --as-group: allowed for the admin, refused for others', () => {
    const asBob = admin('auth', 'whoami', '--as=bob', '--as-group=devs', '-o', 'json');
    expect(asBob.code).toBe(0);
    expect(JSON.parse(asBob.out).status.userInfo).toMatchObject({ username: 'bob', groups: ['devs', 'system:authenticated'] });
    expect(admin('auth', 'can-i', 'list', 'pods', '--as=vera', '-n', 'team').out).toBe('yes');
    expect(admin('auth', 'can-i', 'list', 'pods', '--as=bob').out).toBe('no');
    const refused = kubectl('viewer', 'get', 'pods', '--as=system:admin', '--as-group=system:masters');
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/users "system:admin" is forbidden: User "vera" cannot impersonate resource "users" in API group "" at the cluster scope/);
  });

  it('a binding takes effect as soon as it is created', () => {
    expect(kubectl('nobody', 'auth', 'can-i', 'list', 'pods', '-n', 'other').out).toBe('no');
    expect(admin('create', 'rolebinding', 'nadia-views', '--clusterrole=view', '--user=nadia', '-n', 'other').code).toBe(0);
    expect(kubectl('nobody', 'auth', 'can-i', 'list', 'pods', '-n', 'other').out).toBe('yes');
    expect(kubectl('nobody', 'get', 'pods', '-n', 'other').code).toBe(0);
  });

  describe('escalation prevention', () => {
    it.each([
      { name: 'a role with permissions the user holds', args: ['create', 'role', 'reader', '--verb=get', '--resource=pods', '-n', 'team'], ok: true },
      { name: 'a binding to a role the user holds', args: ['create', 'rolebinding', 'share', '--clusterrole=view', '--user=nadia', '-n', 'team'], ok: true },
      { name: 'a role with permissions the user lacks', args: ['create', 'role', 'node-reader', '--verb=get', '--resource=nodes', '-n', 'team'], ok: false },
      { name: 'a binding to cluster-admin', args: ['create', 'rolebinding', 'grab', '--clusterrole=cluster-admin', '--user=eddie', '-n', 'team'], ok: false },
    ])('$name → allowed: $ok', ({ args, ok }) => {
      const r = kubectl('editor', ...args);
      if (ok) {
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
      } else {
        expect(r.code).not.toBe(0);
        expect(r.err).toMatch(/is forbidden: user "eddie" \(groups=\["team-devs","system:authenticated"\]\) is attempting to grant RBAC permissions not currently held/);
      }
    });

    it('the refusal names the permissions not held', () => {
      const r = kubectl('editor', 'create', 'role', 'pv-reader', '--verb=list', '--resource=persistentvolumes', '-n', 'team');
      expect(r.code).not.toBe(0);
      expect(r.err).toMatch(/\{APIGroups:\[""\], Resources:\["persistentvolumes"\], Verbs:\["list"\]\}/);
    });

    it('the escalate and bind verbs lift the check', async () => {
      // kubectl create clusterrole only accepts these verbs for the rbac.authorization.k8s.io group name: post it raw.
      const escalator = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'escalator' }, rules: [{ verbs: ['escalate', 'bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'clusterroles'] }] };
      expect((await gw.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', escalator)).status).toBe(201);
      expect(admin('create', 'rolebinding', 'eddie-escalates', '--clusterrole=escalator', '--user=eddie', '-n', 'team').code).toBe(0);
      const role = kubectl('editor', 'create', 'role', 'node-reader2', '--verb=get', '--resource=nodes', '-n', 'team');
      expect(role.err).toBe('');
      const grab = kubectl('editor', 'create', 'rolebinding', 'grab2', '--clusterrole=cluster-admin', '--user=nadia', '-n', 'team');
      expect(grab.err).toBe('');
    });
  });

  describe('service-account tokens (TokenRequest, kubectl create token)', () => {
    const withToken = (token: string, ...args: string[]) => {
      const r = spawnSync('kubectl', ['--server', gw.url, '--certificate-authority', join(gw.dataDir, 'pki', 'ca.crt'), '--token', token, '--cache-dir', join(dir, 'cache-token'), ...args], { encoding: 'utf8', timeout: 30_000 });
      return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
    };

    it('a token from kubectl create token is the only credential a client needs', () => {
      expect(admin('create', 'serviceaccount', 'builder', '-n', 'team').code).toBe(0);
      const created = admin('create', 'token', 'builder', '-n', 'team', '--duration=15m');
      expect(created.err).toBe('');
      const token = created.out;
      secrets.add(token);
      const who = withToken(token, 'auth', 'whoami', '-o', 'json');
      expect(who.err).toBe('');
      expect(JSON.parse(who.out).status.userInfo).toMatchObject({ username: 'system:serviceaccount:team:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] });
      expect(withToken(token, 'get', 'pods', '-n', 'team').err).toMatch(/forbidden/);
      expect(admin('create', 'rolebinding', 'builder-views', '--clusterrole=view', '--serviceaccount=team:builder', '-n', 'team').code).toBe(0);
      expect(withToken(token, 'get', 'pods', '-n', 'team').code).toBe(0);
      expect(withToken(token, 'get', 'secrets', '-n', 'team').err).toMatch(/forbidden/);
      // Deleting the account revokes its tokens.
      expect(admin('delete', 'serviceaccount', 'builder', '-n', 'team').code).toBe(0);
      expect(withToken(token, 'get', 'pods', '-n', 'team').err).toMatch(/Unauthorized|must be logged in/);
    });

    it.each([
      { name: 'too short a lifetime', spec: { expirationSeconds: 60 }, code: 422 },
      { name: 'a bound object of another kind', spec: { boundObjectRef: { kind: 'ConfigMap', name: 'x' } }, code: 422 },
      { name: 'a bound pod that does not exist', spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'ghost' } }, code: 422 },
    ])('TokenRequest refuses $name', async ({ spec, code }) => {
      expect(admin('create', 'serviceaccount', 'checker', '-n', 'other').code === 0 || true).toBe(true);
      const r = await gw.admin.request('POST', '/api/v1/namespaces/other/serviceaccounts/checker/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });
      expect(r.status).toBe(code);
    });

    it('a token bound to a pod dies with the pod; TokenReview checks audiences', async () => {
      admin('create', 'serviceaccount', 'runner', '-n', 'other');
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound', namespace: 'other' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'x' }] } };
      const created = await gw.admin.request('POST', '/api/v1/namespaces/other/pods', pod);
      expect(created.status).toBe(201);
      const tr = await gw.admin.request('POST', '/api/v1/namespaces/other/serviceaccounts/runner/token', {
        kind: 'TokenRequest',
        spec: { audiences: ['https://orch.default.svc', 'vault'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'bound', uid: created.json.metadata.uid } },
      });
      expect(tr.status).toBe(201);
      const token = tr.json.status.token as string;
      secrets.add(token);
      const review = async (audiences?: string[]) => (await gw.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } })).json.status;
      expect(await review()).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:other:runner', extra: { 'authentication.orch.io/pod-name': ['bound'] } } });
      expect(await review(['vault'])).toMatchObject({ authenticated: true, audiences: ['vault'] });
      expect(await review(['elsewhere'])).toMatchObject({ authenticated: false });
      await gw.admin.request('DELETE', '/api/v1/namespaces/other/pods/bound?gracePeriodSeconds=0');
      expect(await review()).toMatchObject({ authenticated: false });
    });
  });

  it('the gateway log names no token, key or secret value the suite used', () => {
    const log = gw.process.output();
    expect(log.length).toBeGreaterThan(0);
    for (const s of secrets) expect(log.includes(s)).toBe(false);
  });

  describe('raw requests', () => {
    it.each([
      { name: 'anonymous list of pods', who: 'anonymous', path: '/api/v1/namespaces/team/secrets', code: 403 },
      { name: 'anonymous read of /healthz', who: 'anonymous', path: '/healthz', code: 200 },
      { name: 'anonymous read of cluster-info', who: 'anonymous', path: '/api/v1/namespaces/orch-public/configmaps/cluster-info', code: 404 },
      { name: 'anonymous discovery', who: 'anonymous', path: '/api', code: 403 },
      { name: 'a bearer token nobody issued', who: 'garbled', path: '/api/v1/namespaces/team/secrets', code: 401 },
    ])('$name → $code', async ({ who, path, code }) => {
      const client = who === 'garbled' ? new ApiClient(gw.url, { ca: (await ensurePki(join(gw.dataDir, 'pki'))).ca.certPem, token: 'abc.def' }) : gw.anonymous;
      const r = await client.request('GET', path);
      expect(r.status).toBe(code);
      expect(r.text).not.toMatch(/hunter2|aHVudGVyMg/);
      if (who === 'garbled') client.close();
    });

    it('a node reads a secret only once a pod bound to it uses the secret', async () => {
      const node = clients.node;
      const get = () => node.request('GET', '/api/v1/namespaces/team/secrets/db');
      const before = await get();
      expect(before.status).toBe(403);
      expect(before.json.message).toMatch(/User "system:node:n1" cannot get resource "secrets"/);
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'uses-db', namespace: 'team' },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] }] },
      };
      expect((await gw.admin.request('POST', '/api/v1/namespaces/team/pods', pod)).status).toBe(201);
      expect((await get()).status).toBe(200);
      expect((await node.request('GET', '/api/v1/namespaces/other/secrets/db')).status).toBe(403);
    });

    it('NodeRestriction: a node changes only itself and its pods', async () => {
      const node = clients.node;
      const nodeObj = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
      expect((await node.request('POST', '/api/v1/nodes', nodeObj('n1'))).status).toBe(201);
      const other = await node.request('POST', '/api/v1/nodes', nodeObj('n2'));
      expect(other.status).toBe(403);
      expect(other.json.message).toMatch(/node "n1" is not allowed to modify node "n2"/);
      const elsewhere = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'elsewhere', namespace: 'team' }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'x' }] } };
      expect((await gw.admin.request('POST', '/api/v1/namespaces/team/pods', elsewhere)).status).toBe(201);
      const status = { status: { phase: 'Failed' } };
      const patch = (name: string) => node.request('PATCH', `/api/v1/namespaces/team/pods/${name}/status`, status, { headers: { 'content-type': 'application/merge-patch+json' } });
      expect((await patch('uses-db')).status).toBe(200);
      expect((await patch('elsewhere')).status).toBe(403);
      const token = (pod: string) => node.request('POST', '/api/v1/namespaces/team/serviceaccounts/default/token', { kind: 'TokenRequest', spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod } } });
      admin('create', 'serviceaccount', 'default', '-n', 'team');
      expect((await token('uses-db')).status).toBe(201);
      expect((await token('elsewhere')).status).toBe(403);
    });
  });
});
