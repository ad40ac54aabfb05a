import type { Node, NodeCondition, Taint } from '../../framework/api';
import { observeNode, reconcileTaints, silentNodeConditions, zoneKey, zoneState, type NodeHealth, type NoExecuteMode } from './health';

const NOW = '2026-06-01T00:00:00Z';
const T0 = Date.parse(NOW);

const node = (p: { conditions?: NodeCondition[]; taints?: Taint[]; unschedulable?: boolean; created?: string; labels?: Record<string, string> } = {}): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', creationTimestamp: p.created ?? '2026-05-01T00:00:00Z', labels: p.labels },
  spec: { taints: p.taints, unschedulable: p.unschedulable },
  status: { conditions: p.conditions },
});
const ready = (status: 'True' | 'False' | 'Unknown', heartbeat = '2026-06-01T00:00:00Z'): NodeCondition => ({ type: 'Ready', status, lastHeartbeatTime: heartbeat, reason: 'R', message: 'M' });
const lease = (renewTime: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'n1' }, spec: { renewTime } });

describe('observeNode', () => {
  const prev: NodeHealth = { probeMs: 1, heartbeat: '2026-06-01T00:00:00Z', leaseRenewMs: Date.parse('2026-06-01T00:00:00.000Z') };
  it.each([
    { name: 'first sight with Ready counts as now', prev: undefined, n: node({ conditions: [ready('True')] }), l: undefined, want: T0 + 5 },
    { name: 'first sight without Ready counts from creation', prev: undefined, n: node(), l: undefined, want: Date.parse('2026-05-01T00:00:00Z') },
    { name: 'nothing moved keeps the probe time', prev, n: node({ conditions: [ready('True')] }), l: lease('2026-06-01T00:00:00.000000Z'), want: 1 },
    { name: 'a new heartbeat moves it', prev, n: node({ conditions: [ready('True', '2026-06-01T00:00:05Z')] }), l: undefined, want: T0 + 5 },
    { name: 'a renewed lease moves it', prev, n: node({ conditions: [ready('True')] }), l: lease('2026-06-01T00:00:04.000000Z'), want: T0 + 5 },
    { name: 'an older lease does not', prev, n: node({ conditions: [ready('True')] }), l: lease('2026-05-31T00:00:00.000000Z'), want: 1 },
  ])('$name', ({ prev: p, n, l, want }) => {
    expect(observeNode(p, n, l, T0 + 5).probeMs).toBe(want);
  });
});

describe('silentNodeConditions', () => {
  it('turns the node conditions Unknown, adds missing ones, leaves NetworkUnavailable', () => {
    const got = silentNodeConditions(node({ conditions: [ready('True'), { type: 'NetworkUnavailable', status: 'False' }, { type: 'MemoryPressure', status: 'Unknown', reason: 'old' }] }), NOW);
    expect(got?.map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`)).toEqual([
      'Ready=Unknown/NodeStatusUnknown',
      'NetworkUnavailable=False/',
      'MemoryPressure=Unknown/old',
      'DiskPressure=Unknown/NodeStatusNeverUpdated',
      'PIDPressure=Unknown/NodeStatusNeverUpdated',
    ]);
    expect(got?.[0]).toMatchObject({ message: 'Kubelet stopped posting node status.', lastTransitionTime: NOW, lastHeartbeatTime: '2026-06-01T00:00:00Z' });
  });

  it('is undefined when all are Unknown already', () => {
    const unknown = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({ type, status: 'Unknown' as const }));
    expect(silentNodeConditions(node({ conditions: unknown }), NOW)).toBeUndefined();
  });
});

describe('zoneState', () => {
  it.each([
    { name: 'all ready', input: ['True', 'True'], want: 'Normal' },
    { name: 'none ready', input: ['Unknown', 'False'], want: 'FullDisruption' },
    { name: 'two of three down is still normal', input: ['True', 'Unknown', 'Unknown'], want: 'Normal' },
    { name: 'three of four down is partial', input: ['True', 'Unknown', 'Unknown', 'False'], want: 'PartialDisruption' },
    { name: 'three of ten down is normal', input: ['True', 'True', 'True', 'True', 'True', 'True', 'True', 'Unknown', 'Unknown', 'False'], want: 'Normal' },
    { name: 'missing Ready counts as not ready', input: [undefined], want: 'FullDisruption' },
  ] as const)('$name', ({ input, want }) => {
    expect(zoneState(input)).toBe(want);
  });

  it('keys zones by region and zone labels', () => {
    expect(zoneKey(node())).toBe('');
    expect(zoneKey(node({ labels: { 'topology.orch.io/region': 'r', 'topology.orch.io/zone': 'z' } }))).toBe('r:\x00:z');
  });
});

describe('reconcileTaints', () => {
  const t = (key: string, effect: Taint['effect'], timeAdded?: string): Taint => ({ key, effect, ...(timeAdded ? { timeAdded } : {}) });
  const show = (ts: Taint[] | undefined) => ts?.map((x) => `${x.key}:${x.effect}${x.timeAdded ? `@${x.timeAdded}` : ''}`);
  it.each([
    { name: 'ready node has none', n: node({ conditions: [ready('True')] }), mode: 'apply', want: undefined },
    { name: 'Ready False: not-ready both effects', n: node({ conditions: [ready('False')] }), mode: 'apply', want: ['node.orch.io/not-ready:NoSchedule', `node.orch.io/not-ready:NoExecute@${NOW}`] },
    { name: 'Ready Unknown: unreachable both effects', n: node({ conditions: [ready('Unknown')] }), mode: 'apply', want: ['node.orch.io/unreachable:NoSchedule', `node.orch.io/unreachable:NoExecute@${NOW}`] },
    {
      name: 'not-ready swaps to unreachable, user taints kept',
      n: node({ conditions: [ready('Unknown')], taints: [t('user', 'NoExecute'), t('node.orch.io/not-ready', 'NoSchedule'), t('node.orch.io/not-ready', 'NoExecute', 'old')] }),
      mode: 'apply',
      want: ['user:NoExecute', 'node.orch.io/unreachable:NoSchedule', `node.orch.io/unreachable:NoExecute@${NOW}`],
    },
    { name: 'existing taint keeps its timeAdded', n: node({ conditions: [ready('Unknown')], taints: [t('node.orch.io/unreachable', 'NoSchedule'), t('node.orch.io/unreachable', 'NoExecute', 'old')] }), mode: 'apply', want: undefined },
    { name: 'recovered node loses them', n: node({ conditions: [ready('True')], taints: [t('node.orch.io/unreachable', 'NoSchedule'), t('node.orch.io/unreachable', 'NoExecute', 'old')] }), mode: 'apply', want: [] },
    { name: 'pressure conditions and unschedulable', n: node({ conditions: [ready('True'), { type: 'DiskPressure', status: 'True' }], unschedulable: true }), mode: 'apply', want: ['node.orch.io/disk-pressure:NoSchedule', 'node.orch.io/unschedulable:NoSchedule'] },
    { name: 'partial disruption adds no NoExecute', n: node({ conditions: [ready('Unknown')] }), mode: 'hold', want: ['node.orch.io/unreachable:NoSchedule'] },
    { name: 'partial disruption keeps present NoExecute', n: node({ conditions: [ready('Unknown')], taints: [t('node.orch.io/unreachable', 'NoSchedule'), t('node.orch.io/unreachable', 'NoExecute', 'old')] }), mode: 'hold', want: undefined },
    { name: 'master disruption removes NoExecute', n: node({ conditions: [ready('Unknown')], taints: [t('node.orch.io/unreachable', 'NoSchedule'), t('node.orch.io/unreachable', 'NoExecute', 'old')] }), mode: 'remove', want: ['node.orch.io/unreachable:NoSchedule'] },
  ])('$name', ({ n, mode, want }) => {
    expect(show(reconcileTaints(n, mode as NoExecuteMode, NOW))).toEqual(want);
  });
});
