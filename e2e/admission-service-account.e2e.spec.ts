// ServiceAccount admission as upstream 1.32 (plugin/pkg/admission/serviceaccount): a pod's
// account is looked up in the gateway's cache, then in the store; the `default` account, which
// the serviceaccount controller makes in every namespace, is asked for up to 10 times (100-199
// ms apart) before the pod is refused, so a pod created with its namespace is admitted once the
// controller catches up; without the account the pod is refused. A real gateway, and for the
// last case a real controller-manager running the serviceaccount controller.

import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';

const pod = (namespace: string, name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'app', image: 'busybox' }] } });
const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const account = (namespace: string, name = 'default') => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });

describe('without the serviceaccount controller', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
  });

  it('refuses a pod whose namespace has no default account, after looking it up again for about a second', async () => {
    const started = Date.now();
    const r = await gw.admin.post('/api/v1/namespaces/default/pods', pod('default', 'early'));
    const tookMs = Date.now() - started;
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, details: { name: 'early', kind: 'pods' } });
    expect(r.json.message).toBe('pods "early" is forbidden: error looking up service account default/default: serviceaccount "default" not found');
    // Nine pauses of at least 100 ms between the ten lookups.
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect((await gw.admin.get('/api/v1/namespaces/default/pods/early')).status).toBe(404);
  });

  it('refuses a pod naming a missing account at once (one lookup)', async () => {
    const started = Date.now();
    const r = await gw.admin.post('/api/v1/namespaces/default/pods', { ...pod('default', 'named'), spec: { serviceAccountName: 'ghost', containers: [{ name: 'app', image: 'busybox' }] } });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe('pods "named" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('admits a pod whose default account is created while admission looks for it', async () => {
    expect((await gw.admin.post('/api/v1/namespaces', namespace('late'))).status).toBe(201);
    const creating = gw.admin.post('/api/v1/namespaces/late/pods', pod('late', 'waiting'));
    expect((await gw.admin.post('/api/v1/namespaces/late/serviceaccounts', account('late'))).status).toBe(201);
    const r = await creating;
    expect(r.status).toBe(201);
    expect(r.json.spec.serviceAccountName).toBe('default');
    expect(r.json.spec.volumes.map((v: { name: string }) => v.name)).toEqual([expect.stringMatching(/^orch-api-access-[0-9a-z]{5}$/)]);
  });

  it('admits pods once the account exists (then found in the cache)', async () => {
    expect((await gw.admin.post('/api/v1/namespaces/default/serviceaccounts', account('default'))).status).toBe(201);
    expect((await gw.admin.post('/api/v1/namespaces/default/pods', pod('default', 'after'))).status).toBe(201);
  });
});

describe('with the serviceaccount controller (as in a real cluster)', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
  });

  it('admits a pod created right after its namespace: admission waits for the controller’s account', async () => {
    expect((await gw.admin.post('/api/v1/namespaces', namespace('fresh'))).status).toBe(201);
    const r = await gw.admin.post('/api/v1/namespaces/fresh/pods', pod('fresh', 'first'));
    expect(r.status).toBe(201);
    expect(r.json.spec.serviceAccountName).toBe('default');
  });

  it('a deleted default account is made again by the controller, and pods are admitted again', async () => {
    expect((await gw.admin.delete('/api/v1/namespaces/default/serviceaccounts/default')).status).toBe(200);
    await defaultServiceAccount(gw.admin, 'default');
    expect((await gw.admin.post('/api/v1/namespaces/default/pods', pod('default', 'again'))).status).toBe(201);
  });
});
