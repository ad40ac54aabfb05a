import { CycleState } from '../../framework/cycle-state';
import type { Toleration } from '../../framework/api';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { NodeInfo, PodInfo } from '../../framework/types';
import { ERR_REASON_UNSCHEDULABLE, NodeUnschedulable } from './node-unschedulable';

describe('NodeUnschedulable filter', () => {
  const tolerate: Toleration = { key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };
  it.each([
    { name: 'schedulable node', unschedulable: false, tolerations: undefined, want: 'Success' },
    { name: 'cordoned node rejects', unschedulable: true, tolerations: undefined, want: 'UnschedulableAndUnresolvable' },
    { name: 'cordoned node accepts a tolerating pod', unschedulable: true, tolerations: [tolerate], want: 'Success' },
    { name: 'wildcard Exists toleration', unschedulable: true, tolerations: [{ operator: 'Exists' as const }], want: 'Success' },
    {
      name: 'toleration for another effect does not help',
      unschedulable: true,
      tolerations: [{ ...tolerate, effect: 'NoExecute' as const }],
      want: 'UnschedulableAndUnresolvable',
    },
  ])('$name', ({ unschedulable, tolerations, want }) => {
    const pod = new PodInfo(makePod('p', { spec: { tolerations } }));
    const s = new NodeUnschedulable().filter(new CycleState(), pod, makeNodeInfo(makeNode('n', { unschedulable })));
    expect(s.code).toBe(want);
    if (want !== 'Success') expect(s.reasons).toEqual([ERR_REASON_UNSCHEDULABLE]);
  });

  it('rejects a NodeInfo without a node object', () => {
    expect(new NodeUnschedulable().filter(new CycleState(), new PodInfo(makePod('p')), new NodeInfo()).code).toBe('UnschedulableAndUnresolvable');
  });
});
