import { join } from 'node:path';
import { StatusError } from '@orch/apimachinery';
import { openEtcdStore, openSqliteStore, type Store } from '@orch/storage';
import { removeDir, startEtcd, tempDir, type EtcdServer } from '@orch/testing';
import { IP_ADDRESS_PREFIX, NODE_PORT_PREFIX, ServiceAddresses } from './addresses';
import { parseNodePortRange, parseServiceCidr } from './ranges';
import type { Service } from './service';

// Two allocators (two gateway replicas) on one store race for a small range: every address
// and node port goes to exactly one service, the losers get "range is full" / 422.

interface Backend {
  name: string;
  /** Two stores on the same data: one per replica. */
  open(): Promise<{ a: Store; b: Store; close(): Promise<void> }>;
}

const silent = { warn: () => undefined, error: () => undefined };

const backends: Backend[] = [
  {
    name: 'sqlite (one store shared by both allocators)',
    async open() {
      const dir = await tempDir('svc-race-');
      const store = await openSqliteStore(join(dir, 'db.sqlite'));
      return { a: store, b: store, close: async () => (await store.close(), await removeDir(dir)) };
    },
  },
  {
    name: 'etcd (one client per allocator)',
    async open() {
      const etcd: EtcdServer = await startEtcd();
      const a = await openEtcdStore({ endpoints: [etcd.endpoint], prefix: '/race' });
      const b = await openEtcdStore({ endpoints: [etcd.endpoint], prefix: '/race' });
      return { a, b, close: async () => (await a.close(), await b.close(), await etcd.stop()) };
    },
  },
];

function nodePortService(name: string, extra: Partial<NonNullable<Service['spec']>> = {}): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'race' }, spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }], ...extra } };
}

describe.each(backends)('racing allocators: $name', (backend) => {
  let stores: Awaited<ReturnType<Backend['open']>>;
  beforeAll(async () => {
    stores = await backend.open();
  }, 30_000);
  afterAll(async () => {
    await stores?.close();
  });

  it('40 concurrent services, 30 addresses and 30 node ports: 30 win with unique values, 10 find the range full', async () => {
    const cidr = parseServiceCidr('10.1.0.0/27', true); // 30 usable addresses
    const ports = parseNodePortRange('31000-31029'); // 30 node ports
    const a = new ServiceAddresses(stores.a, cidr, ports, silent);
    const b = new ServiceAddresses(stores.b, cidr, ports, silent);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, async (_, i) => {
        const s = nodePortService(`s${i}`);
        await (i % 2 ? a : b).allocate(s, undefined, false);
        return s;
      }),
    );
    const won = results.filter((r): r is PromiseFulfilledResult<Service> => r.status === 'fulfilled').map((r) => r.value);
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as StatusError).message);
    const ips = won.map((s) => s.spec!.clusterIP);
    const nodePorts = won.map((s) => s.spec!.ports![0].nodePort);
    expect({ won: won.length, uniqueIPs: new Set(ips).size, uniquePorts: new Set(nodePorts).size }).toEqual({ won: 30, uniqueIPs: 30, uniquePorts: 30 });
    expect(new Set(lost)).toEqual(new Set(['Internal error occurred: failed to allocate a serviceIP: range is full']));
    // The store holds exactly the winners' values, each once, and the losers left nothing behind.
    expect((await stores.a.list(IP_ADDRESS_PREFIX)).items.map((kv) => kv.key.slice(IP_ADDRESS_PREFIX.length)).sort()).toEqual([...ips].sort());
    expect((await stores.a.count(NODE_PORT_PREFIX))).toBe(30);
    await Promise.all(won.map((s, i) => (i % 2 ? a : b).release(s)));
    expect(await stores.a.count(IP_ADDRESS_PREFIX)).toBe(0);
  }, 30_000);

  it('the same requested address from both replicas at once: exactly one wins', async () => {
    const cidr = parseServiceCidr('10.2.0.0/24', true);
    const ports = parseNodePortRange('30000-32767');
    const a = new ServiceAddresses(stores.a, cidr, ports, silent);
    const b = new ServiceAddresses(stores.b, cidr, ports, silent);
    for (let round = 0; round < 10; round++) {
      const ip = `10.2.0.${10 + round}`;
      const results = await Promise.allSettled(
        [a, b, a, b].map((alloc, i) => alloc.allocate(nodePortService(`r${round}-${i}`, { clusterIP: ip, clusterIPs: [ip] }), undefined, false)),
      );
      const fails = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as StatusError).code);
      expect({ round, winners: results.length - fails.length, failures: fails }).toEqual({ round, winners: 1, failures: [422, 422, 422] });
    }
  }, 30_000);
});
