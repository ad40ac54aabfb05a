import { join } from 'node:path';
import { StatusError } from '@orch/apimachinery';
import { openSqliteStore, type SqliteStore } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { IP_ADDRESS_PREFIX, NODE_PORT_PREFIX, ServiceAddresses } from './addresses';
import { parseNodePortRange, parseServiceCidr } from './ranges';
import type { coreV1 } from '@orch/api';
import type { Service } from './service';

type ServiceSpec = coreV1.ServiceSpec;

// Allocation against a real SQLite store: band preference, exhaustion, static requests,
// the shared pool with ServiceIPStaticSubrange off, node ports, updates and dry runs.

const silent = { warn: () => undefined, error: () => undefined };

function svc(name: string, spec: ServiceSpec): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { type: 'ClusterIP', ...spec } };
}

async function thrown(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

describe('ServiceAddresses (SQLite store)', () => {
  let dir: string;
  let store: SqliteStore;
  const addresses = (cidr: string, opts: { gate?: boolean; ports?: string; random?: () => number } = {}) =>
    new ServiceAddresses(store, parseServiceCidr(cidr, opts.gate ?? true), parseNodePortRange(opts.ports ?? '30000-30099'), silent, opts.random);
  const records = async (prefix: string) => (await store.list(prefix)).items.map((kv) => kv.key.slice(prefix.length)).sort();

  beforeEach(async () => {
    dir = await tempDir('svc-ip-');
    store = await openSqliteStore(join(dir, 'db.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  describe('dynamic cluster IPs', () => {
    it.each([
      { name: 'gate on: the first pick is in the upper band', gate: true, random: () => 0, want: '10.0.0.17' },
      { name: 'gate off: one shared pool starting at the first address', gate: false, random: () => 0, want: '10.0.0.1' },
      { name: 'gate on, random start in the upper band', gate: true, random: () => 0.5, want: '10.0.0.24' },
    ])('$name', async ({ gate, random, want }) => {
      const a = addresses('10.0.0.0/27', { gate, random });
      const s = svc('a', { ports: [{ port: 80, protocol: 'TCP' }] });
      await a.allocate(s, undefined, false);
      expect(s.spec).toMatchObject({ clusterIP: want, clusterIPs: [want], ipFamilies: ['IPv4'] });
      expect(await records(IP_ADDRESS_PREFIX)).toEqual([want]);
    });

    it('fills the upper band before the lower band, then reports the range full', async () => {
      const a = addresses('10.0.0.0/27'); // 30 addresses: lower band 16 (.1-.16), upper band 14 (.17-.30)
      const got: number[] = [];
      for (let i = 0; i < 30; i++) {
        const s = svc(`s${i}`, { ports: [{ port: 80, protocol: 'TCP' }] });
        await a.allocate(s, undefined, false);
        got.push(Number(s.spec!.clusterIP!.split('.')[3]));
      }
      expect(got.slice(0, 14).every((n) => n >= 17)).toBe(true);
      expect(got.slice(14).every((n) => n <= 16)).toBe(true);
      expect(new Set(got).size).toBe(30);
      const err = await thrown(a.allocate(svc('full', { ports: [{ port: 80, protocol: 'TCP' }] }), undefined, false));
      expect({ code: err.code, message: err.message }).toEqual({ code: 500, message: 'Internal error occurred: failed to allocate a serviceIP: range is full' });
    });

    it('finds addresses another allocator freed after its local view went stale', async () => {
      const a = addresses('10.0.0.0/30'); // 2 addresses
      const b = addresses('10.0.0.0/30');
      const s1 = svc('one', { ports: [{ port: 80, protocol: 'TCP' }] });
      const s2 = svc('two', { ports: [{ port: 80, protocol: 'TCP' }] });
      await a.allocate(s1, undefined, false);
      await a.allocate(s2, undefined, false);
      await b.release(s1);
      const s3 = svc('three', { ports: [{ port: 80, protocol: 'TCP' }] });
      await a.allocate(s3, undefined, false);
      expect(s3.spec!.clusterIP).toBe(s1.spec!.clusterIP);
    });
  });

  describe('requested cluster IPs', () => {
    it.each([
      { name: 'lower band', ip: '10.0.0.3', want: { ok: true } },
      { name: 'upper band', ip: '10.0.0.29', want: { ok: true } },
      { name: 'network address', ip: '10.0.0.0', want: { code: 422, detail: 'failed to allocate IP 10.0.0.0: the provided IP (10.0.0.0) is not in the valid range. The range of valid IPs is 10.0.0.0/27' } },
      { name: 'broadcast address', ip: '10.0.0.31', want: { code: 422, detail: 'failed to allocate IP 10.0.0.31: the provided IP (10.0.0.31) is not in the valid range. The range of valid IPs is 10.0.0.0/27' } },
      { name: 'outside', ip: '192.168.0.1', want: { code: 422, detail: 'failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. The range of valid IPs is 10.0.0.0/27' } },
    ])('$name', async ({ ip, want }) => {
      const a = addresses('10.0.0.0/27');
      const s = svc('a', { clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, protocol: 'TCP' }] });
      try {
        await a.allocate(s, undefined, false);
        expect({ ok: true }).toEqual(want);
        expect(await records(IP_ADDRESS_PREFIX)).toEqual([ip]);
      } catch (err) {
        const se = err as StatusError;
        expect({ code: se.code, detail: se.message.slice(se.message.indexOf('failed to allocate')) }).toEqual(want);
        expect(await records(IP_ADDRESS_PREFIX)).toEqual([]);
      }
    });

    it('a taken address is a 422 "provided IP is already allocated" and reserves nothing', async () => {
      const a = addresses('10.0.0.0/27');
      await a.allocate(svc('a', { clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ports: [{ port: 80, protocol: 'TCP' }] }), undefined, false);
      const b = svc('b', { type: 'NodePort', clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ports: [{ port: 80, protocol: 'TCP' }] });
      const err = await thrown(a.allocate(b, undefined, false));
      expect(err.code).toBe(422);
      expect(err.message).toBe('Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: provided IP is already allocated');
      expect(await records(NODE_PORT_PREFIX)).toEqual([]);
    });
  });

  describe('headless and ExternalName', () => {
    it.each([
      { name: 'headless', spec: { clusterIP: 'None', clusterIPs: ['None'] }, want: { clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4'] } },
      { name: 'ExternalName', spec: { type: 'ExternalName', externalName: 'example.com' }, want: { type: 'ExternalName', externalName: 'example.com' } },
    ])('$name get no address', async ({ spec, want }) => {
      const s = svc('x', spec);
      await addresses('10.0.0.0/27').allocate(s, undefined, false);
      expect(s.spec).toEqual({ type: 'ClusterIP', ...want });
      expect(await records(IP_ADDRESS_PREFIX)).toEqual([]);
    });
  });

  describe('node ports', () => {
    it('gives each port number one node port, shared by TCP and UDP, from the upper band', async () => {
      const a = addresses('10.0.0.0/27', { random: () => 0 });
      const s = svc('np', {
        type: 'NodePort',
        ports: [
          { name: 'dns-tcp', port: 53, protocol: 'TCP' },
          { name: 'dns-udp', port: 53, protocol: 'UDP' },
          { name: 'http', port: 80, protocol: 'TCP', nodePort: 30001 },
        ],
      });
      await a.allocate(s, undefined, false);
      expect(s.spec!.ports!.map((p) => p.nodePort)).toEqual([30016, 30016, 30001]);
      expect(await records(NODE_PORT_PREFIX)).toEqual(['30001', '30016']);
    });

    it.each([
      { name: 'taken', nodePort: 30005, want: 'spec.ports[0].nodePort: Invalid value: 30005: provided port is already allocated' },
      { name: 'outside the range', nodePort: 31000, want: 'spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30099' },
    ])('a requested node port that is $name is a 422', async ({ nodePort, want }) => {
      const a = addresses('10.0.0.0/27');
      await a.allocate(svc('first', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30005 }] }), undefined, false);
      const err = await thrown(a.allocate(svc('second', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort }] }), undefined, false));
      expect(err.code).toBe(422);
      expect(err.message).toContain(want);
      // The cluster IP reserved before the node port failed was freed again.
      expect(await records(IP_ADDRESS_PREFIX)).toHaveLength(1);
    });

    it('LoadBalancer with externalTrafficPolicy Local gets a health-check node port', async () => {
      const s = svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }] });
      await addresses('10.0.0.0/27').allocate(s, undefined, false);
      expect(s.spec!.healthCheckNodePort).toBeGreaterThanOrEqual(30000);
      expect(await records(NODE_PORT_PREFIX)).toHaveLength(2);
    });
  });

  describe('updates', () => {
    it('commit frees what the old object held and the new one does not; revert frees what was reserved', async () => {
      const a = addresses('10.0.0.0/27');
      const old = svc('u', { type: 'NodePort', ports: [{ name: 'a', port: 80, protocol: 'TCP', nodePort: 30010 }] });
      await a.allocate(old, undefined, false);
      const ip = old.spec!.clusterIP!;

      // NodePort → ClusterIP: the node port goes once the write is committed.
      const toClusterIP = svc('u', { type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'a', port: 80, protocol: 'TCP' }] });
      const c = await a.allocate(toClusterIP, old, false);
      expect(await records(NODE_PORT_PREFIX)).toEqual(['30010']);
      await c.commit();
      expect(await records(NODE_PORT_PREFIX)).toEqual([]);
      expect(await records(IP_ADDRESS_PREFIX)).toEqual([ip]);

      // ClusterIP → ExternalName, abandoned: nothing changes.
      const toExternal = svc('u', { type: 'ExternalName', externalName: 'example.com', ports: [{ name: 'a', port: 80, protocol: 'TCP' }] });
      await (await a.allocate(toExternal, toClusterIP, false)).revert();
      expect(await records(IP_ADDRESS_PREFIX)).toEqual([ip]);

      // Adding a port to a NodePort service reserves one more; revert frees only that one.
      const np = svc('u', { type: 'NodePort', clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'a', port: 80, protocol: 'TCP', nodePort: 30020 }] });
      await (await a.allocate(np, toClusterIP, false)).commit();
      const more = svc('u', { type: 'NodePort', clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'a', port: 80, protocol: 'TCP', nodePort: 30020 }, { name: 'b', port: 81, protocol: 'TCP' }] });
      const r = await a.allocate(more, np, false);
      expect(await records(NODE_PORT_PREFIX)).toHaveLength(2);
      await r.revert();
      expect(await records(NODE_PORT_PREFIX)).toEqual(['30020']);
    });

    it('release frees everything the service holds, and only what it owns', async () => {
      const a = addresses('10.0.0.0/27');
      const s = svc('r', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }] });
      await a.allocate(s, undefined, false);
      const impostor = svc('other', { type: 'NodePort', clusterIP: s.spec!.clusterIP, ports: [{ port: 80, protocol: 'TCP', nodePort: s.spec!.ports![0].nodePort }] });
      await a.release(impostor);
      expect(await records(IP_ADDRESS_PREFIX)).toHaveLength(1);
      await a.release(s);
      expect([...(await records(IP_ADDRESS_PREFIX)), ...(await records(NODE_PORT_PREFIX))]).toEqual([]);
    });
  });

  it('a dry run fills in values and reserves nothing', async () => {
    const s = svc('dry', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }] });
    await addresses('10.0.0.0/27').allocate(s, undefined, true);
    expect(s.spec!.clusterIP).toMatch(/^10\.0\.0\./);
    expect(s.spec!.ports![0].nodePort).toBeGreaterThanOrEqual(30000);
    expect([...(await records(IP_ADDRESS_PREFIX)), ...(await records(NODE_PORT_PREFIX))]).toEqual([]);
  });
});
