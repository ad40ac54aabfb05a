import { join } from 'node:path';
// The crash-repair test plays a gateway that died between its two writes: it edits the
// store directly while no gateway runs, which only the gateway's own library can do.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { openSqliteStore } from '@orch/storage';
import { removeDir, startEtcd, tempDir, type EtcdServer } from '@orch/testing';
import type { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

// Service cluster IPs and node ports through the real gateway process: allocation from the
// configured ranges, conflicts, release on delete, headless and ExternalName services,
// updates, restart and crash repair (SQLite), and two replicas racing (etcd).

const RANGE = '10.0.0.0/27'; // 30 addresses: lower band .1-.16, upper band .17-.30
const PORTS = '30000-30049';
const SERVICES = '/api/v1/namespaces/default/services';

function service(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } };
}
const lastOctet = (ip: string) => Number(ip.split('.')[3]);

describe('service addresses (gateway on SQLite)', () => {
  let gw: GatewayProcess;
  let api: ApiClient;
  /** The upper-band address requested by service "high" (any but the one "web" got). */
  let high = '';
  beforeAll(async () => {
    gw = await startGateway({ args: [`--service-cluster-ip-range=${RANGE}`, `--service-node-port-range=${PORTS}`] });
    api = gw.admin;
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
  });

  it('gives a new service an address from the upper band, and the same one on reads', async () => {
    const r = await api.post(SERVICES, service('web'));
    expect(r.status).toBe(201);
    expect(r.json.spec).toMatchObject({ type: 'ClusterIP', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', clusterIPs: [r.json.spec.clusterIP] });
    expect(lastOctet(r.json.spec.clusterIP)).toBeGreaterThanOrEqual(17);
    high = r.json.spec.clusterIP === '10.0.0.29' ? '10.0.0.30' : '10.0.0.29';
    expect((await api.get(`${SERVICES}/web`)).json.spec.clusterIP).toBe(r.json.spec.clusterIP);
  });

  it('a requested address (either band) is honoured once; a second request for it is a 422', async () => {
    for (const [name, ip] of [['low', '10.0.0.3'], ['high', high]]) {
      const r = await api.post(SERVICES, service(name, { clusterIP: ip }));
      expect({ status: r.status, ip: r.json.spec?.clusterIP }).toEqual({ status: 201, ip });
    }
    const dup = await api.post(SERVICES, service('dup', { clusterIP: '10.0.0.3' }));
    expect(dup.status).toBe(422);
    expect(dup.json.message).toBe('Service "dup" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.3"]: failed to allocate IP 10.0.0.3: provided IP is already allocated');
    const outside = await api.post(SERVICES, service('outside', { clusterIP: '10.9.9.9' }));
    expect(outside.status).toBe(422);
    expect(outside.json.message).toContain('the provided IP (10.9.9.9) is not in the valid range. The range of valid IPs is 10.0.0.0/27');
  });

  it('deleting a service releases its address for the next one', async () => {
    expect((await api.delete(`${SERVICES}/low`)).status).toBe(200);
    const again = await api.post(SERVICES, service('low-again', { clusterIP: '10.0.0.3' }));
    expect({ status: again.status, ip: again.json.spec?.clusterIP }).toEqual({ status: 201, ip: '10.0.0.3' });
  });

  it('a dry run shows an address without reserving it', async () => {
    const dry = await api.post(`${SERVICES}?dryRun=All`, service('dry', { clusterIP: '10.0.0.4' }));
    expect({ status: dry.status, ip: dry.json.spec?.clusterIP }).toEqual({ status: 201, ip: '10.0.0.4' });
    expect((await api.post(SERVICES, service('wet', { clusterIP: '10.0.0.4' }))).status).toBe(201);
  });

  it('headless services and ExternalName services get no address', async () => {
    const headless = await api.post(SERVICES, service('headless', { clusterIP: 'None' }));
    expect({ status: headless.status, ip: headless.json.spec.clusterIP, ips: headless.json.spec.clusterIPs }).toEqual({ status: 201, ip: 'None', ips: ['None'] });
    const ext = await api.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } });
    expect(ext.status).toBe(201);
    expect(ext.json.spec.clusterIP).toBeUndefined();
    const bad = await api.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext2' }, spec: { type: 'ExternalName' } });
    expect({ status: bad.status, message: bad.json.message }).toEqual({ status: 422, message: 'Service "ext2" is invalid: spec.externalName: Required value' });
  });

  it('NodePort services get node ports from the range; taken or out-of-range requests are 422', async () => {
    const np = await api.post(SERVICES, service('np', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81, nodePort: 30001 }] }));
    expect(np.status).toBe(201);
    const [auto, fixed] = np.json.spec.ports.map((p: { nodePort: number }) => p.nodePort);
    expect({ autoInRange: auto >= 30000 && auto <= 30049, fixed, etp: np.json.spec.externalTrafficPolicy }).toEqual({ autoInRange: true, fixed: 30001, etp: 'Cluster' });
    const taken = await api.post(SERVICES, service('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30001 }] }));
    expect({ status: taken.status, message: taken.json.message }).toEqual({
      status: 422,
      message: 'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated',
    });
    const outside = await api.post(SERVICES, service('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }));
    expect(outside.json.message).toContain('provided port is not in the valid range. The range of valid ports is 30000-30049');
    const onClusterIP = await api.post(SERVICES, service('np4', { ports: [{ port: 80, nodePort: 30002 }] }));
    expect(onClusterIP.json.message).toContain("spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'");
  });

  it('updates keep allocated values, refuse a new address, and free node ports when the type drops them', async () => {
    const cur = (await api.get(`${SERVICES}/np`)).json;
    // A PUT that never names the allocated values keeps them.
    const put = await api.put(`${SERVICES}/np`, { ...service('np', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] }), metadata: { name: 'np', resourceVersion: cur.metadata.resourceVersion } });
    expect(put.status).toBe(200);
    expect({ ip: put.json.spec.clusterIP, ports: put.json.spec.ports.map((p: { nodePort: number }) => p.nodePort) }).toEqual({
      ip: cur.spec.clusterIP,
      ports: cur.spec.ports.map((p: { nodePort: number }) => p.nodePort),
    });
    const moved = await api.patch(`${SERVICES}/np`, { spec: { clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'] } }, 'application/merge-patch+json');
    expect(moved.status).toBe(422);
    expect(moved.json.message).toContain('may not change once set');
    // NodePort → ClusterIP: node port 30001 is free again.
    const toClusterIP = await api.patch(`${SERVICES}/np`, { spec: { type: 'ClusterIP', externalTrafficPolicy: null } }, 'application/merge-patch+json');
    expect(toClusterIP.status).toBe(200);
    expect(toClusterIP.json.spec.ports.map((p: { nodePort?: number }) => p.nodePort)).toEqual([undefined, undefined]);
    expect((await api.post(SERVICES, service('np5', { type: 'NodePort', ports: [{ port: 80, nodePort: 30001 }] }))).status).toBe(201);
  });

  it('a restart keeps allocations; a crash repair frees leaked records and re-marks lost ones', async () => {
    const web = (await api.get(`${SERVICES}/web`)).json.spec.clusterIP;
    await gw.kill9();
    // Simulate the two crash windows directly in the store while the gateway is down:
    // a record reserved for a service that was never written, and a record lost for one that was.
    const store = await openSqliteStore(join(gw.dataDir, 'orch.db'));
    const leaked = {
      apiVersion: 'networking.orch.io/v1',
      kind: 'IPAddress',
      metadata: { name: '10.0.0.6', creationTimestamp: '2020-01-01T00:00:00Z' },
      spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'never-written' } },
    };
    await store.create('/registry/orch.io/ipaddresses/10.0.0.6', JSON.stringify(leaked));
    await store.delete(`/registry/orch.io/ipaddresses/${high}`);
    await store.close();

    gw = await gw.restart();
    api = gw.admin;
    // Held before the restart: still taken.
    expect((await api.post(SERVICES, service('web-dup', { clusterIP: web }))).status).toBe(422);
    // The lost record of service "high" was re-marked by the start-up repair pass.
    expect((await api.post(SERVICES, service('high-dup', { clusterIP: high }))).status).toBe(422);
    // The leaked 10.0.0.6 was freed.
    expect((await api.post(SERVICES, service('reuse', { clusterIP: '10.0.0.6' }))).status).toBe(201);
  }, 60_000);

  it.each([
    { name: 'an IPv6 range', args: ['--service-cluster-ip-range=fd00::/108'], message: /IPv6 ranges are not supported/ },
    { name: 'a range that is too large', args: ['--service-cluster-ip-range=10.0.0.0/8'], message: /the mask must be >= 12/ },
    { name: 'a bad node port range', args: ['--service-node-port-range=40000-30000'], message: /--service-node-port-range=40000-30000/ },
  ])('start-up error: $name', async ({ args, message }) => {
    await expect(startGateway({ args })).rejects.toThrow(message);
  });
});

describe('service addresses across two gateway replicas (etcd)', () => {
  let etcd: EtcdServer;
  let shared: string;
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    etcd = await startEtcd();
    shared = await tempDir('orch-pki-');
    const args = ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--pki-dir=${join(shared, 'pki')}`, '--service-cluster-ip-range=10.5.0.0/28', '--service-node-port-range=30000-30013'];
    a = await startGateway({ args });
    b = await startGateway({ args });
  }, 90_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
    await removeDir(shared);
  });

  // The /28 has 14 addresses; default/orch and default/kubernetes (the API's Services) hold the first two.
  it('20 concurrent NodePort creates through both replicas: 12 succeed with distinct addresses and ports, 8 find the range full', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admin.post(SERVICES, service(`race-${i}`, { type: 'NodePort' }))),
    );
    const ok = results.filter((r) => r.status === 201).map((r) => r.json.spec);
    const failed = results.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.json.message}`);
    expect({
      ok: ok.length,
      ips: new Set(ok.map((s) => s.clusterIP)).size,
      ports: new Set(ok.map((s) => s.ports[0].nodePort)).size,
    }).toEqual({ ok: 12, ips: 12, ports: 12 });
    expect(new Set(failed)).toEqual(new Set(['500 Internal error occurred: failed to allocate a serviceIP: range is full']));
  });
});
