import { reconcileSlices, type DesiredGroup, type SliceTemplate } from './slices';
import type { EndpointSlice, SliceEndpoint } from '../../framework/api';

const template: SliceTemplate = {
  namespace: 'ns',
  generateName: 'web-',
  labels: { 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': 'c' },
  ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u', controller: true, blockOwnerDeletion: true }],
};
const HTTP = [{ name: 'http', port: 8080, protocol: 'TCP' }];
const ep = (i: number, ready = true): SliceEndpoint => ({ addresses: [`10.0.0.${i}`], conditions: { ready, serving: ready, terminating: false }, targetRef: { kind: 'Pod', name: `p${i}`, uid: `u${i}` } });
const eps = (...ids: number[]) => ids.map((i) => ep(i));
const group = (endpoints: SliceEndpoint[], ports = HTTP): DesiredGroup => ({ addressType: 'IPv4', ports, endpoints });
const slice = (name: string, endpoints: SliceEndpoint[], ports = HTTP, labels = template.labels): EndpointSlice => ({
  apiVersion: 'discovery.orch.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'ns', labels, ownerReferences: template.ownerReferences },
  addressType: 'IPv4',
  endpoints,
  ports,
});
const ids = (s: EndpointSlice) => (s.endpoints ?? []).map((e) => e.targetRef?.name).join(',');
const summary = (p: ReturnType<typeof reconcileSlices>) => ({
  create: p.create.map(ids),
  update: p.update.map((s) => `${s.metadata.name}:${ids(s)}`),
  delete: p.delete.map((s) => s.metadata.name),
});

describe('reconcileSlices', () => {
  it.each([
    { name: 'nothing exists: new slices of max size', existing: [], desired: [group(eps(1, 2, 3))], max: 2, want: { create: ['p1,p2', 'p3'], update: [], delete: [] } },
    { name: 'in sync: no writes', existing: [slice('s1', eps(1, 2))], desired: [group(eps(2, 1))], max: 100, want: { create: [], update: [], delete: [] } },
    { name: 'removed endpoint updates in place', existing: [slice('s1', eps(1, 2))], desired: [group(eps(1))], max: 100, want: { create: [], update: ['s1:p1'], delete: [] } },
    { name: 'condition change updates in place', existing: [slice('s1', eps(1, 2))], desired: [group([ep(1), ep(2, false)])], max: 100, want: { create: [], update: ['s1:p1,p2'], delete: [] } },
    { name: 'new endpoint fills a slice with room', existing: [slice('s1', eps(1))], desired: [group(eps(1, 2))], max: 100, want: { create: [], update: ['s1:p1,p2'], delete: [] } },
    { name: 'full slices overflow into a new one', existing: [slice('s1', eps(1, 2))], desired: [group(eps(1, 2, 3))], max: 2, want: { create: ['p3'], update: [], delete: [] } },
    { name: 'emptied slice is deleted', existing: [slice('s1', eps(1)), slice('s2', eps(2))], desired: [group(eps(2))], max: 100, want: { create: [], update: [], delete: ['s1'] } },
    { name: 'emptied slice is reused for new endpoints', existing: [slice('s1', eps(1))], desired: [group(eps(2))], max: 100, want: { create: [], update: ['s1:p2'], delete: [] } },
    {
      name: 'port change moves endpoints to new slices',
      existing: [slice('s1', eps(1))],
      desired: [group(eps(1), [{ name: 'http', port: 9090, protocol: 'TCP' }])],
      max: 100,
      want: { create: [], update: ['s1:p1'], delete: [] },
    },
    { name: 'label drift is corrected', existing: [slice('s1', eps(1), HTTP, { ...template.labels, stale: 'x' })], desired: [group(eps(1))], max: 100, want: { create: [], update: ['s1:p1'], delete: [] } },
    { name: 'nothing desired: one placeholder', existing: [], desired: [], max: 100, want: { create: [''], update: [], delete: [] } },
    { name: 'nothing desired: placeholder kept, others deleted', existing: [slice('s1', eps(1)), slice('p', [], [])], desired: [], max: 100, want: { create: [], update: [], delete: ['s1'] } },
  ])('$name', ({ existing, desired, max, want }) => {
    expect(summary(reconcileSlices(existing, desired, template, { maxPerSlice: max }))).toEqual(want);
  });

  it('without placeholder deletes everything when nothing is desired', () => {
    expect(summary(reconcileSlices([slice('s1', eps(1))], [], template, { placeholder: false }))).toEqual({ create: [], update: [], delete: ['s1'] });
  });

  it('creates slices from the template and does not modify its input', () => {
    const existing = [slice('s1', eps(1))];
    const before = structuredClone(existing);
    const plan = reconcileSlices(existing, [group(eps(1, 2))], template);
    expect(existing).toEqual(before);
    expect(plan.update[0].endpoints).toEqual(eps(1, 2));
    const fresh = reconcileSlices([], [group(eps(1))], template).create[0];
    expect(fresh.metadata).toEqual({ generateName: 'web-', namespace: 'ns', labels: template.labels, ownerReferences: template.ownerReferences });
    expect(fresh.addressType).toBe('IPv4');
    expect(fresh.ports).toEqual(HTTP);
  });
});
