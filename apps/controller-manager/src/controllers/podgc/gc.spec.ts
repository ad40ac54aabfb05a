import type { Node, Pod } from '../../framework/api';
import { failedStatus, missingNodes, outOfServicePodsToDelete, terminatedPodsToDelete, unscheduledTerminatingPods } from './gc';

const pod = (name: string, p: { phase?: string; reason?: string; created?: string; node?: string; deleting?: boolean } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', creationTimestamp: p.created ?? '2026-01-01T00:00:00Z', ...(p.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}) },
  spec: { nodeName: p.node, containers: [] },
  status: { phase: p.phase ?? 'Running', reason: p.reason },
});
const names = (ps: Pod[]) => ps.map((p) => p.metadata.name);

describe('terminatedPodsToDelete', () => {
  const pods = [
    pod('running'),
    pod('new-ok', { phase: 'Succeeded', created: '2026-01-03T00:00:00Z' }),
    pod('old-ok', { phase: 'Succeeded', created: '2026-01-01T00:00:00Z' }),
    pod('b-failed', { phase: 'Failed', created: '2026-01-02T00:00:00Z' }),
    pod('a-failed', { phase: 'Failed', created: '2026-01-02T00:00:00Z' }),
    pod('evicted', { phase: 'Failed', reason: 'Evicted', created: '2026-01-04T00:00:00Z' }),
  ];
  it.each([
    { name: 'under the threshold', threshold: 10, want: [] },
    { name: 'evicted first, then oldest, then by name', threshold: 1, want: ['evicted', 'old-ok', 'a-failed', 'b-failed'] },
    { name: 'exactly at the threshold', threshold: 5, want: [] },
    { name: 'threshold 0 disables', threshold: 0, want: [] },
  ])('$name', ({ threshold, want }) => {
    expect(names(terminatedPodsToDelete(pods, threshold))).toEqual(want);
  });
});

describe('outOfServicePodsToDelete', () => {
  const n = (name: string, ready: boolean, outOfService: boolean): Node => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { taints: outOfService ? [{ key: 'node.orch.io/out-of-service', effect: 'NoExecute' }] : [] },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown' }] },
  });
  const nodes: Record<string, Node> = { down: n('down', false, true), downNoTaint: n('downNoTaint', false, false), upTainted: n('upTainted', true, true) };
  it.each([
    { name: 'terminating on a down out-of-service node', input: pod('a', { node: 'down', deleting: true }), want: ['a'] },
    { name: 'not terminating', input: pod('a', { node: 'down' }), want: [] },
    { name: 'down node without the taint', input: pod('a', { node: 'downNoTaint', deleting: true }), want: [] },
    { name: 'ready node with the taint', input: pod('a', { node: 'upTainted', deleting: true }), want: [] },
    { name: 'unknown node', input: pod('a', { node: 'gone', deleting: true }), want: [] },
  ])('$name', ({ input, want }) => {
    expect(names(outOfServicePodsToDelete([input], (name) => nodes[name]))).toEqual(want);
  });
});

describe('unscheduledTerminatingPods / missingNodes', () => {
  it('finds terminating pods without a node', () => {
    expect(names(unscheduledTerminatingPods([pod('a', { deleting: true }), pod('b', { deleting: true, node: 'n' }), pod('c')]))).toEqual(['a']);
  });
  it('finds nodes pods are bound to that do not exist', () => {
    expect([...missingNodes([pod('a', { node: 'n1' }), pod('b', { node: 'n2' }), pod('c')], (n) => n === 'n1')]).toEqual(['n2']);
  });
});

describe('failedStatus', () => {
  const condition = { type: 'DisruptionTarget', status: 'True' as const, reason: 'DeletionByPodGC' };
  it.each([
    { name: 'running pod becomes Failed with the condition', input: pod('a'), want: { phase: 'Failed', conditions: [condition] } },
    { name: 'finished pod is left as is', input: pod('a', { phase: 'Succeeded' }), want: undefined },
  ])('$name', ({ input, want }) => {
    expect(failedStatus(input, condition)).toEqual(want === undefined ? undefined : expect.objectContaining(want));
  });
});
