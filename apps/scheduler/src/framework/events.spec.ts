import { ActionType, assignedPodUpdateEvent, eventMatches, Events, nodeUpdateEvent, type ClusterEvent } from './events';
import { makeNode, makePod } from './testing';

describe('events', () => {
  const base = makeNode('n', { labels: { a: '1' } });
  it.each([
    { name: 'heartbeat only', next: { ...base, status: { ...base.status, conditions: [] } }, want: undefined },
    { name: 'labels', next: makeNode('n', { labels: { a: '2' } }), want: ActionType.UpdateNodeLabel },
    { name: 'taints', next: makeNode('n', { labels: { a: '1' }, taints: [{ key: 'x', effect: 'NoSchedule' as const }] }), want: ActionType.UpdateNodeTaint },
    { name: 'cordon', next: makeNode('n', { labels: { a: '1' }, unschedulable: true }), want: ActionType.UpdateNodeTaint },
    { name: 'allocatable', next: makeNode('n', { labels: { a: '1' }, allocatable: { cpu: '8', memory: '8Gi', pods: '110' } }), want: ActionType.UpdateNodeAllocatable },
    {
      name: 'condition status',
      next: { ...base, status: { ...base.status, conditions: [{ type: 'Ready', status: 'False' }] } },
      want: ActionType.UpdateNodeCondition,
    },
  ])('nodeUpdateEvent: $name', ({ next, want }) => {
    expect(nodeUpdateEvent(base, next)?.action).toBe(want);
  });

  it.each([
    { name: 'labels', a: makePod('p', { labels: { a: '1' } }), b: makePod('p', { labels: { a: '2' } }), want: ActionType.UpdatePodLabel },
    { name: 'scale down', a: makePod('p', { requests: { cpu: '2' } }), b: makePod('p', { requests: { cpu: '1' } }), want: ActionType.UpdatePodScaleDown },
    { name: 'scale up is not an event', a: makePod('p', { requests: { cpu: '1' } }), b: makePod('p', { requests: { cpu: '2' } }), want: undefined },
    { name: 'status only', a: makePod('p'), b: { ...makePod('p'), status: { phase: 'Running' } }, want: undefined },
  ])('assignedPodUpdateEvent: $name', ({ a, b, want }) => {
    expect(assignedPodUpdateEvent(a, b)?.action).toBe(want);
  });

  const nodeLabel: ClusterEvent = { resource: 'Node', action: ActionType.UpdateNodeLabel, label: 'x' };
  it.each([
    { name: 'same resource and action', registered: nodeLabel, event: nodeLabel, want: true },
    { name: 'action subset', registered: { resource: 'Node' as const, action: ActionType.All, label: 'x' }, event: nodeLabel, want: true },
    { name: 'other action', registered: Events.NodeAdd, event: nodeLabel, want: false },
    { name: 'other resource', registered: Events.AssignedPodAdd, event: Events.NodeAdd, want: false },
    { name: 'wildcard registration', registered: { resource: '*' as const, action: ActionType.All, label: 'x' }, event: Events.NodeAdd, want: true },
    { name: 'wildcard event', registered: Events.NodeAdd, event: Events.UnschedulableTimeout, want: true },
  ])('eventMatches: $name', ({ registered, event, want }) => {
    expect(eventMatches(registered, event)).toBe(want);
  });
});
