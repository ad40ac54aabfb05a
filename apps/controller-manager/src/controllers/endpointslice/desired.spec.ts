import type { Pod, Service } from '../../framework/api';
import { ENDPOINTSLICE_CONTROLLER_NAME, desiredGroups, serviceSliceTemplate } from './desired';

const pod = (name: string, p: { ready?: boolean; deleting?: boolean; node?: string; hostname?: string; subdomain?: string; ports?: { name: string; containerPort: number }[] } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `u-${name}`, ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: p.node, hostname: p.hostname, subdomain: p.subdomain, containers: [{ name: 'c', ports: p.ports }] },
  status: { phase: 'Running', podIP: `10.0.0.${name.length}`, conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True' }] },
});
const svc = (spec: Service['spec'] = {}, labels?: Record<string, string>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'ns', uid: 'svc-uid', labels },
  spec: { selector: { app: 'web' }, clusterIP: '10.96.0.1', ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
});
const zones: Record<string, string> = { n1: 'zone-a' };

describe('desiredGroups: endpoint conditions', () => {
  it.each([
    { name: 'ready pod', pod: pod('a'), service: svc(), want: { ready: true, serving: true, terminating: false } },
    { name: 'unready pod', pod: pod('a', { ready: false }), service: svc(), want: { ready: false, serving: false, terminating: false } },
    { name: 'terminating ready pod', pod: pod('a', { deleting: true }), service: svc(), want: { ready: false, serving: true, terminating: true } },
    { name: 'publishNotReadyAddresses', pod: pod('a', { ready: false, deleting: true }), service: svc({ publishNotReadyAddresses: true }), want: { ready: true, serving: false, terminating: true } },
  ])('$name', ({ pod: p, service, want }) => {
    expect(desiredGroups(service, [p], (n) => zones[n])[0].endpoints[0].conditions).toEqual(want);
  });
});

describe('desiredGroups', () => {
  it('publishes node name, zone, hostname and target', () => {
    const [g] = desiredGroups(svc(), [pod('a', { node: 'n1', hostname: 'h', subdomain: 'web' })], (n) => zones[n]);
    expect(g).toEqual({
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'zone-a', hostname: 'h', targetRef: { kind: 'Pod', namespace: 'ns', name: 'a', uid: 'u-a' } }],
    });
  });

  it('groups pods by the ports that resolve on them', () => {
    const service = svc({ ports: [{ name: 'http', port: 80, targetPort: 'web' }] });
    const groups = desiredGroups(service, [pod('a', { ports: [{ name: 'web', containerPort: 1 }] }), pod('bb', { ports: [{ name: 'web', containerPort: 2 }] }), pod('ccc')], () => undefined);
    expect(groups.map((g) => [g.ports.map((p) => p.port), g.endpoints.map((e) => e.targetRef?.name)])).toEqual([
      [[1], ['a']],
      [[2], ['bb']],
      [[], ['ccc']],
    ]);
  });
});

describe('serviceSliceTemplate', () => {
  it.each([
    { name: 'service labels plus reserved ones', service: svc({}, { tier: 'fe', 'orch.io/service-name': 'spoof' }), want: { tier: 'fe', 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME } },
    { name: 'headless label without cluster IP', service: svc({ clusterIP: 'None' }), want: { 'service.orch.io/headless': '', 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME } },
    // Compatibility option: the kubernetes.io twins stock consumers select slices by.
    {
      name: 'upstream twins beside the orch labels; spoofed twins are replaced',
      service: svc({}, { tier: 'fe', 'kubernetes.io/service-name': 'spoof' }),
      twins: true,
      want: {
        tier: 'fe',
        'orch.io/service-name': 'web',
        'kubernetes.io/service-name': 'web',
        'endpointslice.orch.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME,
        'endpointslice.kubernetes.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME,
      },
    },
    {
      name: 'headless twin',
      service: svc({ clusterIP: 'None' }),
      twins: true,
      want: {
        'service.orch.io/headless': '',
        'service.kubernetes.io/headless': '',
        'orch.io/service-name': 'web',
        'kubernetes.io/service-name': 'web',
        'endpointslice.orch.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME,
        'endpointslice.kubernetes.io/managed-by': ENDPOINTSLICE_CONTROLLER_NAME,
      },
    },
  ])('$name', ({ service, want, twins }) => {
    const t = serviceSliceTemplate(service, ENDPOINTSLICE_CONTROLLER_NAME, twins ?? false);
    expect(t.labels).toEqual(want);
    expect(t.generateName).toBe('web-');
    expect(t.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true }]);
  });
});
