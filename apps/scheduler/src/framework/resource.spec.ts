import { Resource } from './resource';

describe('Resource', () => {
  it.each([
    ['cpu', 'milliCPU'],
    ['memory', 'memory'],
    ['ephemeral-storage', 'ephemeralStorage'],
    ['pods', 'allowedPodNumber'],
  ] as const)('addQuantity and get of %s use the %s field', (name, field) => {
    const r = new Resource();
    r.addQuantity(name, 7);
    r.addQuantity(name, 3);
    expect(r[field]).toBe(10);
    expect(r.get(name)).toBe(10);
    expect(r.scalar).toBeUndefined();
  });

  it.each(['example.com/gpu', 'hugepages-2Mi', 'attachable-volumes-csi-x', 'orch.io/batteries'])('%s is a scalar resource: added to and read from the scalar map', (name) => {
    const r = new Resource();
    r.addQuantity(name, 2);
    r.addQuantity(name, 1);
    expect(r.scalar?.get(name)).toBe(3);
    expect(r.get(name)).toBe(3);
    expect([r.milliCPU, r.memory, r.ephemeralStorage, r.allowedPodNumber]).toEqual([0, 0, 0, 0]);
  });

  it('storage is neither native nor scalar: adding it changes nothing and it reads 0', () => {
    const r = new Resource();
    r.addQuantity('storage', 5);
    expect(r.scalar).toBeUndefined();
    expect(r.get('storage')).toBe(0);
    expect(r.isZero()).toBe(true);
  });

  it('fromList reads every entry of a ResourceList into its field', () => {
    const r = Resource.fromList({ cpu: '500m', memory: '1Ki', 'ephemeral-storage': '2', pods: '3', 'example.com/gpu': '4' });
    expect([r.get('cpu'), r.get('memory'), r.get('ephemeral-storage'), r.get('pods'), r.get('example.com/gpu')]).toEqual([500, 1024, 2, 3, 4]);
  });
});
