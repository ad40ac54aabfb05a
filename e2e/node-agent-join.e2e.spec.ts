import { X509Certificate, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import { loadKubeconfig } from '@orch/auth';
import { RestClient, type ClientConfig } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import { freePort, startProcess, tcpProbe, type RunningProcess } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, startControllerManager, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/**
 * A second machine joins with a bootstrap token: `node-agent join --server --token` checks the
 * signed cluster-info, gets its client certificate through a CertificateSigningRequest
 * (approved and signed by the controller-manager), and runs as system:node:<name> next to a
 * first agent (own root dir, own ports). Its HTTPS API only serves authenticated callers.
 */
jest.setTimeout(90_000);

interface Node extends KubeObject {
  status?: { conditions?: { type: string; status: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port: number } } };
}
interface Csr extends KubeObject {
  spec: { signerName: string; username?: string; groups?: string[] };
  status?: { certificate?: string; conditions?: { type: string; status: string; reason?: string }[] };
}
interface Pod extends KubeObject {
  status?: { phase?: string; containerStatuses?: { ready: boolean }[] };
}

const TOKEN_ID = 'abcdef';
const TOKEN = `${TOKEN_ID}.0123456789abcdef`;
const NODES = { group: '', version: 'v1', resource: 'nodes' };

function agentGet(port: number, path: string, creds: { cert?: string; key?: string; token?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false, cert: creds.cert, key: creds.key, headers: creds.token ? { authorization: `Bearer ${creds.token}` } : {} },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('joining a second machine with a bootstrap token', () => {
  let gw: GatewayProcess;
  let cm: RunningProcess;
  let first: NodeAgentProcess;
  let joined: NodeAgentProcess;
  let client: RestClient;
  let admin: ClientConfig;
  const ready = (name: string) =>
    eventually(`node ${name} Ready`, async () => ((n) => (n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined))(await client.resource<Node>(NODES).get(name)), 45_000, 200);

  beforeAll(async () => {
    gw = await startGateway({ args: ['--enable-bootstrap-token-auth'], controllers: POD_CONTROLLERS });
    const pki = join(gw.dataDir, 'pki');
    admin = { server: gw.url, caPem: await readFile(join(pki, 'ca.crt'), 'utf8'), certPem: await readFile(join(pki, 'admin.crt'), 'utf8'), keyPem: await readFile(join(pki, 'admin.key'), 'utf8') };
    client = new RestClient(admin, { component: 'e2e' });
    cm = await startControllerManager(gw.kubeconfig, ['bootstrapsigner', 'csrapproving', 'csrsigning'], [`--cluster-signing-cert-file=${join(pki, 'ca.crt')}`, `--cluster-signing-key-file=${join(pki, 'ca.key')}`]);
    await client.resource({ group: '', version: 'v1', resource: 'secrets' }, 'orch-system').create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${TOKEN_ID}`, namespace: 'orch-system' },
      type: 'bootstrap.orch.io/token',
      data: Object.fromEntries(
        Object.entries({
          'token-id': TOKEN_ID,
          'token-secret': '0123456789abcdef',
          expiration: new Date(Date.now() + 3600_000).toISOString(),
          'usage-bootstrap-authentication': 'true',
          'usage-bootstrap-signing': 'true',
          'auth-extra-groups': 'system:bootstrappers:orch:default-node-token',
        }).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      ),
    });
    first = await startNodeAgent({ name: 'machine-1', kubeconfig: gw.kubeconfig, args: [`--client-ca-file=${join(pki, 'ca.crt')}`] });
  });
  afterAll(async () => {
    client?.close();
    await joined?.stop();
    await first?.stop();
    await cm?.stop();
    await gw?.stop();
  });

  it('joins through cluster-info and a CSR, and runs as system:node:<name>', async () => {
    const spki = new X509Certificate(admin.caPem!).publicKey.export({ type: 'spki', format: 'der' });
    const pin = `sha256:${createHash('sha256').update(spki).digest('hex')}`;
    joined = await startNodeAgent({
      name: 'machine-2',
      command: 'join',
      args: [`--server=${gw.url}`, `--token=${TOKEN}`, `--discovery-token-ca-cert-hash=${pin}`, '--anonymous-auth=false', '--authentication-token-webhook', '--authorization-mode=Webhook', '--authorization-webhook-cache-unauthorized-ttl=1s'],
      timeoutMs: 60_000,
    });
    await ready('machine-1');
    const node = await ready('machine-2');
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(joined.port);
    expect(joined.port).not.toBe(first.port);

    const csrs = await client.resource<Csr>({ group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests' }).list();
    expect(csrs.items).toHaveLength(1);
    const csr = csrs.items[0];
    expect(csr.spec).toMatchObject({ signerName: 'orch.io/kube-apiserver-client-kubelet', username: `system:bootstrap:${TOKEN_ID}` });
    expect(csr.spec.groups).toEqual(expect.arrayContaining(['system:bootstrappers', 'system:bootstrappers:orch:default-node-token']));
    expect(csr.status?.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Approved', status: 'True' })]));
    expect(csr.status?.certificate).toBeTruthy();

    const creds = await loadKubeconfig(join(joined.rootDir, 'node-agent.kubeconfig'));
    const cert = new X509Certificate(creds.certPem!);
    expect(cert.subject.split('\n').sort()).toEqual(['CN=system:node:machine-2', 'O=system:nodes']);
    expect(cert.checkIssued(new X509Certificate(admin.caPem!))).toBe(true);
    expect(Buffer.from(csr.status!.certificate!, 'base64').toString()).toBe(creds.certPem);
  });

  it('runs pods on the joined machine and serves their logs through the gateway', async () => {
    const pods = client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, 'default');
    await pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'on-machine-2', namespace: 'default' },
      spec: { nodeName: 'machine-2', containers: [{ name: 'c', image: 'none', command: [process.execPath, '-e', "console.log('hello from ' + process.env.NODE_NAME); setInterval(() => {}, 1000)"] }] },
    });
    await eventually('pod running', async () => ((p) => (p.status?.phase === 'Running' ? p : undefined))(await pods.get('on-machine-2')));
    const log = await eventually('log line', async () => ((r) => (r.text === 'hello from machine-2\n' ? r : undefined))(await gw.admin.get('/api/v1/namespaces/default/pods/on-machine-2/log')));
    expect(log.status).toBe(200);
  });

  it('refuses anonymous callers and authenticates certificates and tokens through the gateway', async () => {
    const anon = await agentGet(joined.port, '/pods');
    expect([anon.status, anon.body]).toEqual([401, 'Unauthorized']);
    const bad = await agentGet(joined.port, '/pods', { token: 'not-a-valid-token' });
    expect(bad.status).toBe(401);
    const byCert = await agentGet(joined.port, '/healthz', { cert: admin.certPem, key: admin.keyPem });
    expect([byCert.status, byCert.body]).toEqual([200, 'ok']);
    // The bootstrap token authenticates (TokenReview) but its user may not read node stats
    // (SubjectAccessReview through RBAC) until a binding grants it.
    expect((await agentGet(joined.port, '/stats/summary', { token: TOKEN })).status).toBe(403);
    const statsReader = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'node-stats-reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes/stats'] }] };
    expect((await gw.admin.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterroles', statsReader)).status).toBe(201);
    const binding = {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bootstrappers-read-stats' },
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'node-stats-reader' },
      subjects: [{ kind: 'Group', name: 'system:bootstrappers' }],
    };
    expect((await gw.admin.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterrolebindings', binding)).status).toBe(201);
    const byToken = await eventually('stats allowed', async () => ((r) => (r.status === 200 ? r : undefined))(await agentGet(joined.port, '/stats/summary', { token: TOKEN })), 10_000);
    expect(byToken.status).toBe(200);
    expect(JSON.parse(byToken.body).node.nodeName).toBe('machine-2');
    // The first agent allows anonymous requests (the default): its API answers without credentials.
    expect((await agentGet(first.port, '/healthz')).status).toBe(200);
  });
  it('schedules pods over both machines, and each machine runs its share', async () => {
    const port = await freePort();
    const scheduler = await startProcess({
      cmd: process.execPath,
      args: [join(__dirname, '..', 'dist', 'apps', 'scheduler', 'src', 'main.js'), `--kubeconfig=${gw.kubeconfig}`, `--secure-port=${port}`, '--leader-elect=false'],
      readyProbe: tcpProbe(port),
      timeoutMs: 20_000,
    });
    try {
      const pods = client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, 'default');
      for (let i = 0; i < 4; i++) {
        await pods.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `spread-${i}`, labels: { app: 'spread' } },
          spec: {
            topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'orch.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } }],
            containers: [{ name: 'c', image: 'none', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] }],
          },
        } as Pod);
      }
      const running = await eventually(
        'spread pods Running',
        async () => {
          const items = (await pods.list({ labelSelector: 'app=spread' })).items as (Pod & { spec: { nodeName?: string } })[];
          return items.length === 4 && items.every((p) => p.status?.phase === 'Running') ? items : undefined;
        },
        45_000,
        200,
      );
      const perNode = new Map<string, number>();
      for (const p of running) perNode.set(p.spec.nodeName!, (perNode.get(p.spec.nodeName!) ?? 0) + 1);
      expect(Object.fromEntries(perNode)).toEqual({ 'machine-1': 2, 'machine-2': 2 });
    } finally {
      await scheduler.stop();
    }
  });
});
