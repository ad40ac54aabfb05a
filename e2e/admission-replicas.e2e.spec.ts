// Admission across gateway replicas (etcd, NATS, shared PKI): a webhook configuration written
// through one replica applies on the other within a second, and a ResourceQuota holds under
// concurrent creates spread over both replicas (exactly `hard` objects admitted).

import { join } from 'node:path';
import { removeDir, startEtcd, startNats, tempDir, type EtcdServer, type NatsServer, type RunningProcess } from '@orch/testing';
import { startControllerManager } from './support/controller-manager';
import { startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';
import { startWebhookServer, type WebhookServer } from './support/webhook-server';

const NS = 'replicas';
let etcd: EtcdServer;
let nats: NatsServer;
let shared: string;
let gateways: GatewayProcess[] = [];
let cm: RunningProcess;
let hooks: WebhookServer;

beforeAll(async () => {
  [etcd, nats, shared, hooks] = await Promise.all([startEtcd(), startNats(), tempDir('orch-adm-ha-'), startWebhookServer({ '/deny': () => ({ allowed: false, status: { code: 403, message: 'closed for maintenance' } }) })]);
  const args = ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--pki-dir=${join(shared, 'pki')}`];
  gateways.push(await startGateway({ args }));
  gateways.push(await startGateway({ args }));
  cm = await startControllerManager(gateways[0].kubeconfig, ['resourcequota']);
  expect((await gateways[0].admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await cm?.stop();
  for (const gw of gateways) await gw.stop();
  gateways = [];
  await Promise.all([etcd?.stop(), nats?.stop(), hooks?.stop()]);
  if (shared) await removeDir(shared);
});

it('a webhook configuration written through one replica applies on the other within a second', async () => {
  const [a, b] = gateways;
  const config = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'maintenance' },
    webhooks: [
      {
        name: 'maintenance.test.orch.io',
        clientConfig: { url: hooks.url('/deny'), caBundle: hooks.caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
  const written = Date.now();
  expect((await a.admin.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', config)).status).toBe(201);
  let n = 0;
  await eventually('the other replica to apply the webhook', async () => {
    const r = await b.admin.post(`/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `probe-${n++}`, namespace: NS } });
    return r.status === 403 ? r : undefined;
  }, 5_000, 20);
  expect(Date.now() - written).toBeLessThan(1_000);
});

it('a ResourceQuota admits exactly its hard limit under concurrent creates on two replicas', async () => {
  const [a, b] = gateways;
  const HARD = 10;
  expect((await a.admin.post(`/api/v1/namespaces/${NS}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'maps', namespace: NS }, spec: { hard: { 'count/configmaps': String(HARD) } } })).status).toBe(201);
  await eventually('the quota controller to compute usage', async () => {
    const q = await b.admin.get(`/api/v1/namespaces/${NS}/resourcequotas/maps`);
    return q.json.status?.used?.['count/configmaps'] !== undefined ? q : undefined;
  }, 10_000);
  const used0 = Number((await a.admin.get(`/api/v1/namespaces/${NS}/resourcequotas/maps`)).json.status.used['count/configmaps']);
  const attempts = 40;
  const results = await Promise.all(
    Array.from({ length: attempts }, (_, i) => (i % 2 ? a : b).admin.post(`/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i}`, namespace: NS } })),
  );
  const created = results.filter((r) => r.status === 201).length;
  const refused = results.filter((r) => r.status === 403);
  expect(created).toBe(HARD - used0);
  expect(refused.length + created).toBe(attempts);
  for (const r of refused) expect(r.json.message).toMatch(/exceeded quota: maps, requested: count\/configmaps=1, used: count\/configmaps=10, limited: count\/configmaps=10/);
  const listed = await a.admin.get(`/api/v1/namespaces/${NS}/configmaps`);
  expect(listed.json.items.length).toBe(HARD);
});
