import type { EndpointSlice, Pod, Service } from '../../framework/api';
import { eventually, startHarness, type Harness } from '../../framework/testing/harness';
import { EndpointSliceController } from './endpointslice-controller';

const pod = (i: number, p: { ready?: boolean; node?: string } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, labels: { app: 'web' } },
  spec: { nodeName: p.node, containers: [{ name: 'c' }] },
  status: { phase: 'Running', podIP: `10.0.${Math.floor(i / 250)}.${i % 250}`, conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True' }] },
});
const svc: Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'ns', uid: 'svc-uid' },
  spec: { selector: { app: 'web' }, clusterIP: 'None', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
};
const slices = (h: Harness) => h.peer.stored('discovery.orch.io/v1/endpointslices') as EndpointSlice[];
const total = (h: Harness) => slices(h).reduce((n, s) => n + (s.endpoints ?? []).length, 0);

describe('EndpointSliceController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('writes slices of at most 100 endpoints with the SPEC labels, zones and conditions', async () => {
    h.peer.put('/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.orch.io/zone': 'z1' } } });
    h.peer.put('/v1/services', svc);
    for (let i = 0; i < 150; i++) h.peer.put('/v1/pods', pod(i, { node: 'n1', ready: i !== 0 }));
    h.start(new EndpointSliceController(h.ctx));

    await eventually('all endpoints sliced', () => (total(h) === 150 ? true : undefined));
    const all = slices(h);
    expect(all.map((s) => (s.endpoints ?? []).length).sort()).toEqual([100, 50]);
    for (const s of all) {
      // The kubernetes.io twins are there under the compatibility option (the harness default).
      expect(s.metadata.labels).toEqual({
        'orch.io/service-name': 'web',
        'kubernetes.io/service-name': 'web',
        'endpointslice.orch.io/managed-by': 'endpointslice-controller.orch.io',
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.orch.io',
        'service.orch.io/headless': '',
        'service.kubernetes.io/headless': '',
      });
      expect(s.metadata.name).toMatch(/^web-/);
      expect(s.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Service', name: 'web', uid: 'svc-uid', controller: true });
      expect(s.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    }
    const p0 = all.flatMap((s) => s.endpoints ?? []).find((e) => e.targetRef?.name === 'p0');
    expect(p0).toMatchObject({ nodeName: 'n1', zone: 'z1', conditions: { ready: false, serving: false, terminating: false } });

    // Pods go away: endpoints leave the slices they are in (no repacking, no duplicates).
    for (let i = 100; i < 150; i++) h.peer.remove('/v1/pods', 'ns', `p${i}`);
    await eventually('removed pods left the slices', () => (total(h) === 100 ? true : undefined));
    const names = slices(h).flatMap((s) => (s.endpoints ?? []).map((e) => e.targetRef?.name));
    expect(new Set(names).size).toBe(100);
    expect(slices(h)).toHaveLength(2);

    h.peer.remove('/v1/services', 'ns', 'web');
    await eventually('slices deleted with the service', () => (slices(h).length === 0 ? true : undefined));
  });

  it('keeps one empty placeholder slice for a service without endpoints', async () => {
    h.peer.put('/v1/services', svc);
    h.start(new EndpointSliceController(h.ctx));
    await eventually('placeholder created', () => (slices(h).length === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    expect(slices(h)).toHaveLength(1);
    expect(slices(h)[0].endpoints).toEqual([]);
  });
});
