import { Quantity } from '@orch/apimachinery';
import type { MachineInfo, MachineUsage } from './machine';
import {
  initialNode,
  nodeAllocatable,
  nodeCapacity,
  nodeConditions,
  parseEvictionThresholds,
  parseKeyValues,
  parseTaints,
  pressuresFor,
  withPressureTaints,
  type Pressures,
} from './node-object';

const GI = 1024 ** 3;
const usage = (o: Partial<MachineUsage> = {}): MachineUsage => ({
  memoryAvailableBytes: 8 * GI,
  memoryTotalBytes: 16 * GI,
  fsCapacityBytes: 100 * GI,
  fsAvailableBytes: 50 * GI,
  fsInodes: 1000,
  fsInodesFree: 500,
  pidsMax: 1000,
  pidsRunning: 100,
  ...o,
});
const info: MachineInfo = { numCores: 4, memoryCapacityBytes: 16 * GI, machineID: 'm', systemUUID: 'u', bootID: 'b', kernelVersion: 'k', osImage: 'o', operatingSystem: 'linux', architecture: 'amd64' };
const DEFAULTS = parseEvictionThresholds(['memory.available<100Mi', 'nodefs.available<10%', 'pid.available<5%']);

describe('pressuresFor', () => {
  it.each<{ name: string; usage: MachineUsage; want: Pressures }>([
    { name: 'healthy machine', usage: usage(), want: { memory: false, disk: false, pid: false } },
    { name: 'memory below 100Mi', usage: usage({ memoryAvailableBytes: 50 * 1024 ** 2 }), want: { memory: true, disk: false, pid: false } },
    { name: 'disk below 10%', usage: usage({ fsAvailableBytes: 9 * GI }), want: { memory: false, disk: true, pid: false } },
    { name: 'pids below 5%', usage: usage({ pidsRunning: 960 }), want: { memory: false, disk: false, pid: true } },
    { name: 'everything', usage: usage({ memoryAvailableBytes: 0, fsAvailableBytes: 0, pidsRunning: 1000 }), want: { memory: true, disk: true, pid: true } },
  ])('$name', ({ usage: u, want }) => {
    expect(pressuresFor(u, DEFAULTS)).toEqual(want);
  });
});

describe('parsers', () => {
  it.each([
    { input: ['memory.available<1Gi'], ok: true },
    { input: ['nodefs.available<15%'], ok: true },
    { input: ['imagefs.available<15%'], ok: false },
    { input: ['memory.available>1Gi'], ok: false },
    { input: ['nodefs.available<150%'], ok: false },
  ])('eviction-hard $input', ({ input, ok }) => {
    if (ok) expect(() => parseEvictionThresholds(input)).not.toThrow();
    else expect(() => parseEvictionThresholds(input)).toThrow(/--eviction-hard/);
  });

  it.each([
    { input: 'dedicated=gpu:NoSchedule', want: { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' } },
    { input: 'maintenance:NoExecute', want: { key: 'maintenance', effect: 'NoExecute' } },
    { input: 'x=y:Sometimes', want: 'error' },
  ])('taint $input', ({ input, want }) => {
    if (want === 'error') expect(() => parseTaints([input])).toThrow(/--register-with-taints/);
    else expect(parseTaints([input])).toEqual([want]);
  });

  it('key=value lists', () => {
    expect(parseKeyValues(['a=1', 'b = 2'], '--node-labels')).toEqual({ a: '1', b: '2' });
    expect(() => parseKeyValues(['novalue'], '--node-labels')).toThrow(/--node-labels "novalue": want key=value/);
  });
});

describe('nodeConditions', () => {
  const t0 = new Date('2025-01-01T00:00:00Z');
  const t1 = new Date('2025-01-01T00:00:10Z');
  it('reports the four conditions and keeps transition times while a status holds', () => {
    const first = nodeConditions(undefined, { memory: false, disk: false, pid: false }, t0);
    expect(first.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    const second = nodeConditions(first, { memory: true, disk: false, pid: false }, t1);
    expect(second[0]).toMatchObject({ status: 'True', reason: 'KubeletHasInsufficientMemory', lastTransitionTime: '2025-01-01T00:00:10Z', lastHeartbeatTime: '2025-01-01T00:00:10Z' });
    expect(second[1]).toMatchObject({ status: 'False', lastTransitionTime: '2025-01-01T00:00:00Z' });
    // Ready set Unknown by the node lifecycle controller turns True again with a new transition.
    const recovered = nodeConditions([{ ...first[3], status: 'Unknown' }], { memory: false, disk: false, pid: false }, t1);
    expect(recovered[3]).toMatchObject({ status: 'True', lastTransitionTime: '2025-01-01T00:00:10Z' });
  });
});

describe('withPressureTaints', () => {
  const now = new Date('2025-01-01T00:00:00Z');
  const other = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const };
  it.each<{ name: string; taints: { key: string; effect: 'NoSchedule' | 'NoExecute' }[] | undefined; pressures: Pressures; want: string[] | 'unchanged' }>([
    { name: 'no pressure, no taints', taints: undefined, pressures: { memory: false, disk: false, pid: false }, want: 'unchanged' },
    { name: 'memory pressure adds its taint', taints: [other], pressures: { memory: true, disk: false, pid: false }, want: ['dedicated', 'node.orch.io/memory-pressure'] },
    { name: 'pressure gone removes it', taints: [other, { key: 'node.orch.io/disk-pressure', effect: 'NoSchedule' }], pressures: { memory: false, disk: false, pid: false }, want: ['dedicated'] },
    { name: 'taint already there', taints: [{ key: 'node.orch.io/pid-pressure', effect: 'NoSchedule' }], pressures: { memory: false, disk: false, pid: true }, want: 'unchanged' },
    { name: 'other effects are not ours', taints: [{ key: 'node.orch.io/memory-pressure', effect: 'NoExecute' }], pressures: { memory: false, disk: false, pid: false }, want: 'unchanged' },
  ])('$name', ({ taints, pressures, want }) => {
    const got = withPressureTaints(taints, pressures, now);
    if (want === 'unchanged') expect(got).toBeUndefined();
    else expect(got?.map((t) => t.key)).toEqual(want);
  });
});

describe('capacity and allocatable', () => {
  it('takes the machine and subtracts reservations and eviction thresholds', () => {
    const cap = nodeCapacity(info, usage(), 110);
    expect(cap).toEqual({ cpu: '4', memory: `${16 * 1024 * 1024}Ki`, 'ephemeral-storage': `${100 * 1024 * 1024}Ki`, pods: '110' });
    const alloc = nodeAllocatable(cap, { cpu: '500m', memory: '1Gi' }, DEFAULTS);
    expect(alloc.cpu).toBe('3500m');
    expect(Quantity.parse(alloc.memory).value()).toBe(16 * GI - GI - 100 * 1024 ** 2);
    expect(alloc.pods).toBe('110');
    expect(Quantity.parse(alloc['ephemeral-storage']).value()).toBe(90 * GI);
    expect(nodeAllocatable({ cpu: '1' }, { cpu: '2' }, [])).toEqual({ cpu: '0' });
  });

  it('registers the node with the well-known labels and the pod CIDR', () => {
    const n = initialNode({ name: 'n1', hostname: 'h1', nodeIp: '127.0.0.1', port: 10250, podCidr: '127.9.9.0/24', labels: { zone: 'a' }, taints: [] });
    expect(n.metadata.labels).toEqual({ zone: 'a', 'orch.io/arch': expect.any(String), 'orch.io/os': expect.any(String), 'orch.io/hostname': 'h1' });
    expect(n.spec).toEqual({ podCIDR: '127.9.9.0/24', podCIDRs: ['127.9.9.0/24'] });
  });
});
