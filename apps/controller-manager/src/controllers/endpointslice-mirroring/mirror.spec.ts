import type { Endpoints, Service } from '../../framework/api';
import { MIRRORING_CONTROLLER_NAME, mirroredGroups, mirroredSliceTemplate } from './mirror';
import { shouldMirror } from './mirroring-controller';

const endpoints = (subsets: Endpoints['subsets'], labels?: Record<string, string>, annotations?: Record<string, string>): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ext', namespace: 'ns', uid: 'ep-uid', labels, annotations },
  subsets,
});
const svc = (selector?: Record<string, string>): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'ns' }, spec: { selector } });

describe('shouldMirror', () => {
  it.each([
    { name: 'selector-less service', service: svc(), ep: endpoints([]), want: true },
    { name: 'service with selector', service: svc({ a: 'b' }), ep: endpoints([]), want: false },
    { name: 'skip-mirror label', service: svc(), ep: endpoints([], { 'endpointslice.orch.io/skip-mirror': 'true' }), want: false },
    { name: 'skip-mirror false still mirrors', service: svc(), ep: endpoints([], { 'endpointslice.orch.io/skip-mirror': 'false' }), want: true },
    { name: 'no service', service: undefined, ep: endpoints([]), want: false },
    { name: 'no endpoints', service: svc(), ep: undefined, want: false },
  ])('$name', ({ service, ep, want }) => {
    expect(shouldMirror(service, ep)).toBe(want);
  });
});

describe('mirroredGroups', () => {
  it('mirrors addresses with readiness, grouped by family and ports', () => {
    const { groups, dropped } = mirroredGroups(
      endpoints([
        { addresses: [{ ip: '10.0.0.1', nodeName: 'n1', hostname: 'h' }], notReadyAddresses: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }], ports: [{ name: 'http', port: 80 }] },
      ]),
    );
    expect(dropped).toBe(0);
    expect(groups).toEqual([
      {
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'n1', hostname: 'h' },
          { addresses: ['10.0.0.2'], conditions: { ready: false } },
        ],
      },
      { addressType: 'IPv6', ports: [{ name: 'http', port: 80, protocol: 'TCP' }], endpoints: [{ addresses: ['fd00::2'], conditions: { ready: false } }] },
    ]);
  });

  it('mirrors at most 1000 addresses per subset', () => {
    const addresses = Array.from({ length: 1003 }, (_, i) => ({ ip: `10.1.${Math.floor(i / 250)}.${i % 250}` }));
    const { groups, dropped } = mirroredGroups(endpoints([{ addresses, ports: [{ port: 80 }] }]));
    expect(groups[0].endpoints).toHaveLength(1000);
    expect(dropped).toBe(3);
  });
});

describe('mirroredSliceTemplate', () => {
  it('copies labels and annotations except the skipped ones, owned by the Endpoints', () => {
    const t = mirroredSliceTemplate(endpoints([], { team: 'x' }, { note: 'n', 'endpoints.orch.io/last-change-trigger-time': 't', 'kubectl.orch.io/last-applied-configuration': '{}' }), false);
    expect(t.labels).toEqual({ team: 'x', 'orch.io/service-name': 'ext', 'endpointslice.orch.io/managed-by': MIRRORING_CONTROLLER_NAME });
    expect(t.annotations).toEqual({ note: 'n' });
    expect(t.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: 'ep-uid', controller: true, blockOwnerDeletion: true }]);
  });

  it('adds the kubernetes.io twins under the compatibility option', () => {
    const t = mirroredSliceTemplate(endpoints([], {}, {}), true);
    expect(t.labels).toEqual({
      'orch.io/service-name': 'ext',
      'kubernetes.io/service-name': 'ext',
      'endpointslice.orch.io/managed-by': MIRRORING_CONTROLLER_NAME,
      'endpointslice.kubernetes.io/managed-by': MIRRORING_CONTROLLER_NAME,
    });
  });
});
