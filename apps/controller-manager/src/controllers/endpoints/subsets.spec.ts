import type { EndpointAddress, EndpointSubset, Endpoints, Pod, Service } from '../../framework/api';
import { computeSubsets, desiredEndpoints, repackSubsets, truncateSubsets } from './subsets';

const pod = (name: string, ip: string | undefined, p: { ready?: boolean; node?: string; deleting?: boolean; ports?: { name: string; containerPort: number }[] } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'web' }, ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: p.node, containers: [{ name: 'c', ports: p.ports }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True' }] },
});
const svc = (spec: Service['spec'] = {}, labels?: Record<string, string>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'ns', labels },
  spec: { selector: { app: 'web' }, clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
});
const addr = (name: string, ip: string, node?: string): EndpointAddress => ({ ip, ...(node ? { nodeName: node } : {}), targetRef: { kind: 'Pod', namespace: 'ns', name, uid: `uid-${name}` } });
const HTTP = { name: 'http', port: 8080, protocol: 'TCP' };

describe('computeSubsets', () => {
  it.each([
    { name: 'no pods', service: svc(), pods: [], want: [] },
    {
      name: 'ready and not-ready pods share the port subset',
      service: svc(),
      pods: [pod('b', '10.0.0.2', { ready: false }), pod('a', '10.0.0.1', { node: 'n1' })],
      want: [{ addresses: [addr('a', '10.0.0.1', 'n1')], notReadyAddresses: [addr('b', '10.0.0.2')], ports: [HTTP] }],
    },
    { name: 'pods without an IP are left out', service: svc(), pods: [pod('a', undefined)], want: [] },
    { name: 'terminating pods are left out', service: svc(), pods: [pod('a', '10.0.0.1', { deleting: true })], want: [] },
    {
      name: 'publishNotReadyAddresses makes all ready, terminating included',
      service: svc({ publishNotReadyAddresses: true }),
      pods: [pod('a', '10.0.0.1', { ready: false, deleting: true })],
      want: [{ addresses: [addr('a', '10.0.0.1')], ports: [HTTP] }],
    },
    {
      name: 'named target ports resolve per pod',
      service: svc({ ports: [{ name: 'http', port: 80, targetPort: 'web' }] }),
      pods: [pod('a', '10.0.0.1', { ports: [{ name: 'web', containerPort: 8080 }] }), pod('b', '10.0.0.2', { ports: [{ name: 'web', containerPort: 9090 }] }), pod('c', '10.0.0.3')],
      want: [
        { addresses: [addr('a', '10.0.0.1')], ports: [HTTP] },
        { addresses: [addr('b', '10.0.0.2')], ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] },
      ],
    },
    { name: 'portless headless service', service: svc({ clusterIP: 'None', ports: [] }), pods: [pod('a', '10.0.0.1')], want: [{ addresses: [addr('a', '10.0.0.1')] }] },
    { name: 'portless service with a cluster IP gets nothing', service: svc({ ports: [] }), pods: [pod('a', '10.0.0.1')], want: [] },
  ])('$name', ({ service, pods, want }) => {
    expect(computeSubsets(service, pods)).toEqual(want);
  });
});

describe('repackSubsets', () => {
  const p1 = { name: 'a', port: 1, protocol: 'TCP' };
  const p2 = { name: 'b', port: 2, protocol: 'TCP' };
  it.each([
    {
      name: 'addresses with the same ports merge',
      input: [{ addresses: [addr('x', '10.0.0.2')], ports: [p1] }, { addresses: [addr('y', '10.0.0.1')], ports: [p1] }],
      want: [{ addresses: [addr('y', '10.0.0.1'), addr('x', '10.0.0.2')], ports: [p1] }],
    },
    {
      name: 'ports with the same addresses merge',
      input: [{ addresses: [addr('x', '10.0.0.1')], ports: [p2] }, { addresses: [addr('x', '10.0.0.1')], ports: [p1] }],
      want: [{ addresses: [addr('x', '10.0.0.1')], ports: [p1, p2] }],
    },
    {
      name: 'ready wins over not ready for the same port',
      input: [{ notReadyAddresses: [addr('x', '10.0.0.1')], ports: [p1] }, { addresses: [addr('x', '10.0.0.1')], ports: [p1] }],
      want: [{ addresses: [addr('x', '10.0.0.1')], ports: [p1] }],
    },
  ])('$name', ({ input, want }) => {
    expect(repackSubsets(input)).toEqual(want);
  });
});

describe('truncateSubsets', () => {
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => addr(`${prefix}${i}`, `10.${prefix === 'r' ? 1 : 2}.${Math.floor(i / 250)}.${i % 250}`));
  const count = (ss: EndpointSubset[]) => ss.map((s) => [(s.addresses ?? []).length, (s.notReadyAddresses ?? []).length]);
  it.each([
    { name: 'under capacity is untouched', input: [{ addresses: many(3, 'r') }], max: 5, want: [[3, 0]], truncated: false },
    { name: 'not-ready addresses go first', input: [{ addresses: many(3, 'r'), notReadyAddresses: many(4, 'n') }], max: 5, want: [[3, 2]], truncated: true },
    { name: 'too many ready: not-ready dropped, ready proportional', input: [{ addresses: many(6, 'r') }, { addresses: many(2, 'r'), notReadyAddresses: many(2, 'n') }], max: 4, want: [[3, 0], [1, 0]], truncated: true },
    { name: 'upstream 1000 cap', input: [{ addresses: many(1001, 'r') }], max: undefined, want: [[1000, 0]], truncated: true },
  ])('$name', ({ input, max, want, truncated }) => {
    const got = truncateSubsets(input, max);
    expect(count(got.subsets)).toEqual(want);
    expect(got.truncated).toBe(truncated);
  });
});

describe('desiredEndpoints', () => {
  const current = (over: Partial<Endpoints['metadata']> = {}, subsets?: EndpointSubset[]): Endpoints => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: 'ns', resourceVersion: '5', labels: { tier: 'fe' }, ...over },
    subsets: subsets ?? [{ addresses: [addr('a', '10.0.0.1')], ports: [HTTP] }],
  });
  it.each([
    { name: 'creates with service labels', service: svc({}, { tier: 'fe' }), existing: undefined, want: { labels: { tier: 'fe' }, annotations: undefined, rv: undefined } },
    { name: 'unchanged is a no-op', service: svc({}, { tier: 'fe' }), existing: current(), want: undefined },
    { name: 'label change updates', service: svc({}, { tier: 'be' }), existing: current(), want: { labels: { tier: 'be' }, annotations: undefined, rv: '5' } },
    { name: 'headless gets the label', service: svc({ clusterIP: 'None' }, { tier: 'fe' }), existing: current(), want: { labels: { tier: 'fe', 'service.orch.io/headless': '' }, annotations: undefined, rv: '5' } },
    {
      name: 'stale over-capacity annotation is removed',
      service: svc({}, { tier: 'fe' }),
      existing: current({ annotations: { 'endpoints.orch.io/over-capacity': 'truncated', keep: 'x' } }),
      want: { labels: { tier: 'fe' }, annotations: { keep: 'x' }, rv: '5' },
    },
  ])('$name', ({ service, existing, want }) => {
    const got = desiredEndpoints(service, [pod('a', '10.0.0.1')], existing);
    if (!want) {
      expect(got).toBeUndefined();
      return;
    }
    expect(got?.metadata.labels).toEqual(want.labels);
    expect(got?.metadata.annotations).toEqual(want.annotations);
    expect(got?.metadata.resourceVersion).toBe(want.rv);
    expect(got?.subsets).toEqual([{ addresses: [addr('a', '10.0.0.1')], ports: [HTTP] }]);
  });

  it('marks over-capacity when more than 1000 addresses', () => {
    const pods = Array.from({ length: 1001 }, (_, i) => pod(`p${i}`, `10.0.${Math.floor(i / 250)}.${i % 250}`));
    const got = desiredEndpoints(svc(), pods, undefined);
    expect(got?.metadata.annotations).toEqual({ 'endpoints.orch.io/over-capacity': 'truncated' });
    expect(got?.subsets?.[0].addresses).toHaveLength(1000);
  });
});
