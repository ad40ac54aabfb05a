import type { Endpoints, Pod, Service } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { EndpointsController } from './endpoints-controller';

const pod = (name: string, ip: string, labels: Record<string, string>, ready = true): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `u-${name}`, labels },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const svc = (name: string, selector: Record<string, string> | undefined): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'ns', labels: { team: 'a' } },
  spec: { selector, clusterIP: '10.96.0.1', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
});
const eps = (h: Harness, name: string) => storedObject<Endpoints>(h.peer, '/v1/endpoints', name, 'ns');
const ips = (e: Endpoints | undefined) => (e?.subsets ?? []).map((s) => [(s.addresses ?? []).map((a) => a.ip), (s.notReadyAddresses ?? []).map((a) => a.ip)]);

describe('EndpointsController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('tracks the selected pods and deletes the endpoints with the service', async () => {
    h.peer.put('/v1/services', svc('web', { app: 'web' }));
    h.peer.put('/v1/services', svc('manual', undefined));
    h.peer.put('/v1/pods', pod('a', '10.0.0.1', { app: 'web' }));
    h.peer.put('/v1/pods', pod('b', '10.0.0.2', { app: 'web' }, false));
    h.peer.put('/v1/pods', pod('c', '10.0.0.3', { app: 'other' }));
    h.start(new EndpointsController(h.ctx));

    const first = await eventually('endpoints created', () => eps(h, 'web'));
    expect(ips(first)).toEqual([[['10.0.0.1'], ['10.0.0.2']]]);
    expect(first.metadata.labels).toEqual({ team: 'a' });
    expect(first.subsets?.[0].ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);

    h.peer.put('/v1/pods', pod('b', '10.0.0.2', { app: 'web' }, true));
    await eventually('pod became ready', () => (JSON.stringify(ips(eps(h, 'web'))) === JSON.stringify([[['10.0.0.1', '10.0.0.2'], []]]) ? true : undefined));
    h.peer.remove('/v1/pods', 'ns', 'a');
    await eventually('deleted pod removed', () => (JSON.stringify(ips(eps(h, 'web'))) === JSON.stringify([[['10.0.0.2'], []]]) ? true : undefined));

    expect(eps(h, 'manual')).toBeUndefined();
    h.peer.remove('/v1/services', 'ns', 'web');
    await eventually('endpoints deleted with the service', () => (eps(h, 'web') ? undefined : true));
  });
});
