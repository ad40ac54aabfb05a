import type { EndpointSlice, Endpoints, Service } from '../../framework/api';
import { eventually, startHarness, type Harness } from '../../framework/testing/harness';
import { EndpointSliceMirroringController } from './mirroring-controller';

const svc = (selector?: Record<string, string>): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'ns' }, spec: { selector, ports: [{ port: 80 }] } });
const endpoints = (ips: string[], labels?: Record<string, string>): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ext', namespace: 'ns', uid: 'ep-uid', labels },
  subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
});
const mirrored = (h: Harness) => (h.peer.stored('discovery.orch.io/v1/endpointslices') as EndpointSlice[]).flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0])).sort();

describe('EndpointSliceMirroringController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('mirrors custom Endpoints and stops on skip-mirror or when the service gets a selector', async () => {
    h.peer.put('/v1/services', svc());
    h.peer.put('/v1/endpoints', endpoints(['10.1.0.1', '10.1.0.2']));
    h.start(new EndpointSliceMirroringController(h.ctx));
    await eventually('mirrored', () => (mirrored(h).join() === '10.1.0.1,10.1.0.2' ? true : undefined));
    const [slice] = h.peer.stored('discovery.orch.io/v1/endpointslices') as EndpointSlice[];
    expect(slice.metadata.labels).toEqual({
      'orch.io/service-name': 'ext',
      'kubernetes.io/service-name': 'ext',
      'endpointslice.orch.io/managed-by': 'endpointslicemirroring-controller.orch.io',
      'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.orch.io',
    });
    expect(slice.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Endpoints', name: 'ext', uid: 'ep-uid' });

    h.peer.put('/v1/endpoints', endpoints(['10.1.0.3']));
    await eventually('change mirrored', () => (mirrored(h).join() === '10.1.0.3' ? true : undefined));

    h.peer.put('/v1/endpoints', endpoints(['10.1.0.3'], { 'endpointslice.orch.io/skip-mirror': 'true' }));
    await eventually('skip-mirror removes slices', () => (mirrored(h).length === 0 ? true : undefined));

    h.peer.put('/v1/endpoints', endpoints(['10.1.0.4']));
    await eventually('mirrored again', () => (mirrored(h).join() === '10.1.0.4' ? true : undefined));
    h.peer.put('/v1/services', svc({ app: 'x' }));
    await eventually('selector stops mirroring', () => (mirrored(h).length === 0 ? true : undefined));
  });
});
