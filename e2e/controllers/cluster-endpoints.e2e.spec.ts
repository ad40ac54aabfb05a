import { formatTime, type KubeObject } from '@orch/apimachinery';
import { eventually, startClusterControllers, type ClusterControllers } from './cluster-support';

const core = (resource: string) => ({ group: '', version: 'v1', resource });
const SLICES = { group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices' };
const NS = 'default';

interface EndpointsObj extends KubeObject {
  subsets?: { addresses?: { ip: string; nodeName?: string }[]; notReadyAddresses?: { ip: string }[]; ports?: { name?: string; port: number }[] }[];
}
interface SliceObj extends KubeObject {
  endpoints: { addresses: string[]; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean }; nodeName?: string; zone?: string }[] | null;
  ports?: { name?: string; port: number }[];
}

const readyIps = (e: EndpointsObj) => (e.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
const notReadyIps = (e: EndpointsObj) => (e.subsets ?? []).flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip)).sort();

describe('cluster controllers: endpoint, endpointslice, endpointslicemirroring (real gateway + controller-manager)', () => {
  let c: ClusterControllers;
  beforeAll(async () => {
    c = await startClusterControllers(['endpoint', 'endpointslice', 'endpointslicemirroring']);
  });
  afterAll(() => c?.stop());

  /** Creates a pod on node n1 and gives it an address and a Ready condition (as a node agent would). */
  async function runningPod(name: string, ip: string, ready: boolean): Promise<void> {
    const pods = c.client.resource(core('pods'), NS);
    await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: 8080 }] }] } });
    const now = formatTime(Date.now());
    await pods.patch(name, 'merge', { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }] } }, { subresource: 'status' });
  }

  it('publishes the selected pods in Endpoints and EndpointSlices', async () => {
    await c.client.resource(core('nodes')).create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.orch.io/zone': 'zone-a' } } });
    await c.client.resource(core('services'), NS).create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', labels: { tier: 'front' } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    await runningPod('web-1', '10.244.0.11', true);
    await runningPod('web-2', '10.244.0.12', false);

    const ep = await eventually('endpoints with both pods', async () => {
      const e = await c.client.resource<EndpointsObj>(core('endpoints'), NS).get('web');
      return readyIps(e).length + notReadyIps(e).length === 2 ? e : undefined;
    });
    expect(readyIps(ep)).toEqual(['10.244.0.11']);
    expect(notReadyIps(ep)).toEqual(['10.244.0.12']);
    expect(ep.subsets?.[0].ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(ep.metadata.labels?.['tier']).toBe('front');

    const slices = await eventually('slice with both pods', async () => {
      const list = await c.client.resource<SliceObj>(SLICES, NS).list({ labelSelector: 'orch.io/service-name=web' });
      return list.items.flatMap((s) => s.endpoints ?? []).length === 2 ? list.items : undefined;
    });
    expect(slices).toHaveLength(1);
    expect(slices[0].metadata.labels).toMatchObject({ 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': 'endpointslice-controller.orch.io', tier: 'front' });
    expect(slices[0].metadata.name).toMatch(/^web-/);
    expect(slices[0].ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const byIp = Object.fromEntries((slices[0].endpoints ?? []).map((e) => [e.addresses[0], e]));
    expect(byIp['10.244.0.11']).toMatchObject({ nodeName: 'n1', zone: 'zone-a', conditions: { ready: true, serving: true, terminating: false } });
    expect(byIp['10.244.0.12']).toMatchObject({ conditions: { ready: false, serving: false, terminating: false } });

    // The unready pod becomes ready: both views follow.
    await c.client.resource(core('pods'), NS).patch('web-2', 'merge', { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(Date.now()) }] } }, { subresource: 'status' });
    await eventually('both ready in Endpoints', async () => {
      const e = await c.client.resource<EndpointsObj>(core('endpoints'), NS).get('web');
      return readyIps(e).length === 2 ? true : undefined;
    });
    await eventually('both ready in the slice', async () => {
      const list = await c.client.resource<SliceObj>(SLICES, NS).list({ labelSelector: 'orch.io/service-name=web' });
      const eps = list.items.flatMap((s) => s.endpoints ?? []);
      return eps.length === 2 && eps.every((e) => e.conditions?.ready) ? true : undefined;
    });
  });

  it('mirrors custom Endpoints of a selector-less service unless skip-mirror is set', async () => {
    await c.client.resource(core('services'), NS).create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'external' }, spec: { ports: [{ port: 5432 }] } });
    const endpoints = c.client.resource<EndpointsObj>(core('endpoints'), NS);
    await endpoints.create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'external' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'pg', port: 5432 }] }] });
    const mirrored = await eventually('mirrored slice', async () => {
      const list = await c.client.resource<SliceObj>(SLICES, NS).list({ labelSelector: 'endpointslice.orch.io/managed-by=endpointslicemirroring-controller.orch.io' });
      return list.items.length === 1 ? list.items[0] : undefined;
    });
    expect(mirrored.metadata.labels?.['orch.io/service-name']).toBe('external');
    expect(mirrored.endpoints).toEqual([expect.objectContaining({ addresses: ['192.0.2.10'], conditions: { ready: true } })]);
    expect(mirrored.ports).toEqual([{ name: 'pg', port: 5432, protocol: 'TCP' }]);

    const current = await endpoints.get('external');
    await endpoints.update({ ...current, metadata: { ...current.metadata, labels: { 'endpointslice.orch.io/skip-mirror': 'true' } } });
    await eventually('mirrored slice removed', async () => {
      const list = await c.client.resource<SliceObj>(SLICES, NS).list({ labelSelector: 'endpointslice.orch.io/managed-by=endpointslicemirroring-controller.orch.io' });
      return list.items.length === 0 ? true : undefined;
    });
  });
});
