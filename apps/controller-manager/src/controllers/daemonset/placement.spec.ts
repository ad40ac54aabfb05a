import type { DaemonSet, Node, Pod, Taint, Toleration } from '../../framework/api';
import { daemonPodFor, daemonTolerations, nodeShouldRunDaemonPod, targetNodeName, tolerates } from './placement';
import { daemonSetCounts, planDaemonPods, planRollingUpdate } from './plan';

const node = (name: string, labels: Record<string, string> = {}, taints: Taint[] = []): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { taints } });
function ds(spec: Partial<DaemonSet['spec']['template']['spec']> = {}, maxUnavailable?: number | string): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: 'ds', generation: 3 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c' }], ...spec } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable } },
    },
  };
}
const ref = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds', controller: true };

describe('tolerations', () => {
  it.each([
    { name: 'Exists with key matches any value', t: { key: 'k', operator: 'Exists' as const }, taint: { key: 'k', value: 'v', effect: 'NoSchedule' as const }, want: true },
    { name: 'Equal needs the value', t: { key: 'k', operator: 'Equal' as const, value: 'x' }, taint: { key: 'k', value: 'v', effect: 'NoSchedule' as const }, want: false },
    { name: 'empty operator is Equal', t: { key: 'k', value: 'v' }, taint: { key: 'k', value: 'v', effect: 'NoSchedule' as const }, want: true },
    { name: 'effect must match when given', t: { key: 'k', operator: 'Exists' as const, effect: 'NoExecute' as const }, taint: { key: 'k', effect: 'NoSchedule' as const }, want: false },
    { name: 'empty key with Exists matches everything', t: { operator: 'Exists' as const }, taint: { key: 'any', effect: 'NoExecute' as const }, want: true },
  ] as { name: string; t: Toleration; taint: Taint; want: boolean }[])('$name', ({ t, taint, want }) => {
    expect(tolerates(t, taint)).toBe(want);
  });

  it('daemon pods tolerate node conditions and unschedulable nodes', () => {
    const keys = daemonTolerations({ containers: [] }).map((t) => `${t.key}:${t.effect}`);
    expect(keys).toEqual([
      'node.orch.io/not-ready:NoExecute',
      'node.orch.io/unreachable:NoExecute',
      'node.orch.io/disk-pressure:NoSchedule',
      'node.orch.io/memory-pressure:NoSchedule',
      'node.orch.io/pid-pressure:NoSchedule',
      'node.orch.io/unschedulable:NoSchedule',
    ]);
  });
});

describe('nodeShouldRunDaemonPod', () => {
  it.each([
    { name: 'plain node', ds: ds(), node: node('n'), want: [true, true] },
    { name: 'node selector matches', ds: ds({ nodeSelector: { disk: 'ssd' } }), node: node('n', { disk: 'ssd' }), want: [true, true] },
    { name: 'node selector does not match', ds: ds({ nodeSelector: { disk: 'ssd' } }), node: node('n'), want: [false, false] },
    {
      name: 'required affinity (In)',
      ds: ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] } } } }),
      node: node('n', { zone: 'b' }),
      want: [true, true],
    },
    { name: 'untolerated NoSchedule taint: no new pod, existing stays', ds: ds(), node: node('n', {}, [{ key: 'dedicated', effect: 'NoSchedule' }]), want: [false, true] },
    { name: 'untolerated NoExecute taint: evicted', ds: ds(), node: node('n', {}, [{ key: 'dedicated', effect: 'NoExecute' }]), want: [false, false] },
    { name: 'tolerated taint', ds: ds({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), node: node('n', {}, [{ key: 'dedicated', effect: 'NoSchedule' }]), want: [true, true] },
    { name: 'PreferNoSchedule is ignored', ds: ds(), node: node('n', {}, [{ key: 'x', effect: 'PreferNoSchedule' }]), want: [true, true] },
    { name: 'unschedulable taint is tolerated', ds: ds(), node: node('n', {}, [{ key: 'node.orch.io/unschedulable', effect: 'NoSchedule' }]), want: [true, true] },
    { name: 'template nodeName elsewhere', ds: ds({ nodeName: 'other' }), node: node('n'), want: [false, false] },
  ])('$name', ({ ds: d, node: n, want }) => {
    const r = nodeShouldRunDaemonPod(d, n);
    expect([r.shouldRun, r.shouldContinueRunning]).toEqual(want);
  });

  it('daemon pods target their node by metadata.name affinity and carry the revision', () => {
    const pod = daemonPodFor(ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] } } } }), 'n7', 'h1', ref);
    expect(targetNodeName(pod)).toBe('n7');
    expect(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n7'] }] }]);
    expect(pod.metadata.labels).toEqual({ app: 'agent', 'controller-revision-hash': 'h1', 'pod-template-generation': '3' });
    expect(pod.metadata.generateName).toBe('agent-');
  });
});

/** `n1:h1:ready`, `n2:h0:pending`, `n3:h1:failed`. */
function dpod(spec: string, i = 0): Pod {
  const [n, hash, state] = spec.split(':');
  const p = daemonPodFor(ds(), n, hash, ref);
  p.metadata.name = `agent-${n}-${i}`;
  p.metadata.creationTimestamp = `2024-01-01T00:00:0${i}Z`;
  p.status = state === 'ready' ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } : { phase: state === 'failed' ? 'Failed' : 'Pending' };
  return p;
}
function byNode(specs: string[]): Map<string, Pod[]> {
  const m = new Map<string, Pod[]>();
  specs.forEach((s, i) => {
    const p = dpod(s, i);
    m.set(s.split(':')[0], [...(m.get(s.split(':')[0]) ?? []), p]);
  });
  return m;
}

describe('daemon set plans', () => {
  const nodes = [node('n1'), node('n2'), node('n3', {}, [{ key: 'x', effect: 'NoSchedule' }])];
  it.each([
    { name: 'creates where missing', pods: ['n1:h1:ready'], create: ['n2'], del: [] as string[] },
    { name: 'replaces failed pods', pods: ['n1:h1:failed', 'n2:h1:ready'], create: [], del: ['agent-n1-0'] },
    { name: 'keeps the oldest of duplicates', pods: ['n1:h1:ready', 'n1:h1:ready', 'n2:h1:ready'], create: [], del: ['agent-n1-1'] },
    { name: 'removes pods of deleted nodes', pods: ['n1:h1:ready', 'n2:h1:ready', 'gone:h1:ready'], create: [], del: ['agent-gone-2'] },
  ])('planDaemonPods: $name', ({ pods, create, del }) => {
    const plan = planDaemonPods(ds(), nodes, byNode(pods));
    expect({ create: plan.create, del: plan.delete.map((p) => p.metadata.name) }).toEqual({ create, del });
  });

  it.each([
    { name: 'one old available pod at a time (maxUnavailable 1)', max: 1, pods: ['n1:h0:ready', 'n2:h0:ready'], want: 1 },
    { name: 'an unavailable new pod uses the budget', max: 1, pods: ['n1:h1:pending', 'n2:h0:ready'], want: 0 },
    { name: 'unavailable old pods are replaced at once', max: 1, pods: ['n1:h0:pending', 'n2:h0:pending'], want: 2 },
    { name: 'maxUnavailable 100%', max: '100%', pods: ['n1:h0:ready', 'n2:h0:ready'], want: 2 },
    { name: 'all updated: nothing', max: 1, pods: ['n1:h1:ready', 'n2:h1:ready'], want: 0 },
  ])('planRollingUpdate: $name', ({ max, pods, want }) => {
    expect(planRollingUpdate(ds({}, max), nodes, byNode(pods), 'h1', Date.now())).toHaveLength(want);
  });

  it('counts status', () => {
    expect(daemonSetCounts(ds(), nodes, byNode(['n1:h1:ready', 'n3:h0:ready']), 'h1', Date.now())).toEqual({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 1,
      numberMisscheduled: 1,
      numberReady: 1,
      numberAvailable: 1,
      numberUnavailable: 1,
      updatedNumberScheduled: 1,
    });
  });
});
