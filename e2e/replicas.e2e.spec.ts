import { join } from 'node:path';
import { removeDir, startEtcd, tempDir, type EtcdServer } from '@orch/testing';
import { startGateway, type GatewayProcess } from './support/gateway';

/** Two gateway replicas on one real etcd: writes on one are read and watched on the other. */
describe('two gateways on etcd', () => {
  let etcd: EtcdServer;
  let shared: string;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    etcd = await startEtcd();
    shared = await tempDir('orch-pki-');
    const args = ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--pki-dir=${join(shared, 'pki')}`];
    a = await startGateway({ args });
    b = await startGateway({ args });
  }, 90_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
    await removeDir(shared);
  });

  it('an object created through one replica is read through the other', async () => {
    const created = await a.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { k: 'v' } });
    expect(created.status).toBe(201);
    const got = await b.admin.get('/api/v1/namespaces/default/configmaps/shared');
    expect(got.json.metadata.uid).toBe(created.json.metadata.uid);
    expect(got.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
  });

  it('a watch on one replica sees, in order, the writes made through the other', async () => {
    const rv = (await b.admin.get('/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;
    const N = 50;
    const watching = b.admin.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= N, 20_000);
    for (let i = 0; i < N; i++) {
      expect((await a.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `r-${i}` } })).status).toBe(201);
    }
    const { events } = await watching;
    expect(events.map((e) => e.object.metadata.name)).toEqual(Array.from({ length: N }, (_, i) => `r-${i}`));
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
  });

  it('optimistic concurrency holds across replicas', async () => {
    const cur = (await a.admin.get('/api/v1/namespaces/default/configmaps/shared')).json;
    expect((await b.admin.put('/api/v1/namespaces/default/configmaps/shared', { ...cur, data: { k: 'b' } })).status).toBe(200);
    expect((await a.admin.put('/api/v1/namespaces/default/configmaps/shared', { ...cur, data: { k: 'a' } })).status).toBe(409);
  });
});
