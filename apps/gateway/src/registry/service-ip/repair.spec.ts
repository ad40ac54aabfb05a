import { join } from 'node:path';
import { openSqliteStore, type SqliteStore } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { IP_ADDRESS_PREFIX, NODE_PORT_PREFIX, ServiceAddresses } from './addresses';
import { parseNodePortRange, parseServiceCidr } from './ranges';
import { ServiceAddressRepair } from './repair';
import type { Service } from './service';

// The repair pass against a real SQLite store: services are written straight to the store,
// as a gateway that crashed between its two writes would have left them.

const SERVICES = '/registry/core/services/';
const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, with: () => logger };

function service(name: string, clusterIP: string, nodePort?: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { type: nodePort ? 'NodePort' : 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports: [{ port: 80, protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }] },
  };
}

describe('ServiceAddressRepair (SQLite store)', () => {
  let dir: string;
  let store: SqliteStore;
  let addresses: ServiceAddresses;
  let clock: number;
  const repair = () => new ServiceAddressRepair(store, addresses, logger, { servicesPrefix: SERVICES, leakGraceMs: 60_000, now: () => clock });
  const keys = async (prefix: string) => (await store.list(prefix)).items.map((kv) => kv.key.slice(prefix.length)).sort();
  const storeService = (s: Service) => store.create(`${SERVICES}default/${s.metadata.name}`, JSON.stringify(s));

  beforeEach(async () => {
    dir = await tempDir('svc-repair-');
    store = await openSqliteStore(join(dir, 'db.sqlite'));
    addresses = new ServiceAddresses(store, parseServiceCidr('10.0.0.0/24', true), parseNodePortRange('30000-30099'), logger);
    clock = Date.now();
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  it('re-creates records a stored service uses but the store lost', async () => {
    await storeService(service('lost', '10.0.0.7', 30007));
    const report = await repair().runOnce();
    expect(report.marked).toEqual(['ip 10.0.0.7 (default/lost)', 'port 30007 (default/lost)']);
    expect(await keys(IP_ADDRESS_PREFIX)).toEqual(['10.0.0.7']);
    expect(await keys(NODE_PORT_PREFIX)).toEqual(['30007']);
    expect((await repair().runOnce()).marked).toEqual([]);
  });

  it('frees records no service references once they are older than the grace period', async () => {
    const orphan = service('crashed', '10.0.0.9', 30009);
    await addresses.allocate(orphan, undefined, false); // reserved, then the gateway "crashed" before storing the service
    const kept = service('kept', '10.0.0.10');
    await addresses.allocate(kept, undefined, false);
    await storeService(kept);

    const early = await repair().runOnce();
    expect({ freed: early.freed, pending: early.pending }).toEqual({ freed: [], pending: ['ip 10.0.0.9', 'port 30009'] });

    clock += 61_000;
    const late = await repair().runOnce();
    expect(late.freed).toEqual(['ip 10.0.0.9', 'port 30009']);
    expect(await keys(IP_ADDRESS_PREFIX)).toEqual(['10.0.0.10']);
    expect(await keys(NODE_PORT_PREFIX)).toEqual([]);
  });

  it('reports addresses held by another service and addresses outside the range, and changes neither', async () => {
    await addresses.allocate(service('owner', '10.0.0.20'), undefined, false);
    await storeService(service('owner', '10.0.0.20'));
    await storeService(service('intruder', '10.0.0.20'));
    await storeService(service('elsewhere', '192.168.0.1'));
    const report = await repair().runOnce();
    expect({ conflicts: report.conflicts, outOfRange: report.outOfRange, marked: report.marked }).toEqual({
      conflicts: ['ip 10.0.0.20 (default/intruder)'],
      outOfRange: ['ip 192.168.0.1 (default/elsewhere)'],
      marked: [],
    });
  });

  it('start() runs a pass at once, marks itself synced and stops cleanly', async () => {
    await storeService(service('boot', '10.0.0.30'));
    const r = repair();
    r.start();
    for (let i = 0; i < 100 && !r.synced; i++) await new Promise((res) => setTimeout(res, 10));
    await r.stop();
    expect(r.synced).toBe(true);
    expect(await keys(IP_ADDRESS_PREFIX)).toEqual(['10.0.0.30']);
  });
});
