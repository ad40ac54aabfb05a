import { CycleState } from '../../framework/cycle-state';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { ERR_REASON_NODE_NAME, NodeName } from './node-name';

describe('NodeName filter', () => {
  it.each([
    { name: 'no node name fits any node', nodeName: undefined, node: 'n1', want: 'Success' },
    { name: 'matching node name fits', nodeName: 'n1', node: 'n1', want: 'Success' },
    { name: 'other node name is unresolvable', nodeName: 'n2', node: 'n1', want: 'UnschedulableAndUnresolvable' },
  ])('$name', ({ nodeName, node, want }) => {
    const s = new NodeName().filter(new CycleState(), new PodInfo(makePod('p', { nodeName })), makeNodeInfo(makeNode(node)));
    expect(s.code).toBe(want);
    if (want !== 'Success') expect(s.reasons).toEqual([ERR_REASON_NODE_NAME]);
  });
});
