import type { Node, Pod } from '../../framework/api';
import { FakeClock } from '../../framework/clock';
import { CycleState } from '../../framework/cycle-state';
import { Framework } from '../../framework/framework';
import { Snapshot } from '../../framework/snapshot';
import { NodeToStatus } from '../../framework/status';
import { makeNode, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { defaultPlugins, inTreeRegistry } from '../registry';
import { DefaultPreemption, numCandidates, pickOneNodeForPreemption, validateDefaultPreemptionArgs, type Candidate } from './default-preemption';

const node = (name: string, cpu = '4'): Node => makeNode(name, { allocatable: { cpu, memory: '8Gi', pods: '110' } });
const running = (name: string, nodeName: string, cpu: string, priority: number, startTime = '2024-01-01T00:00:00Z'): Pod =>
  makePod(name, { nodeName, requests: { cpu }, priority, startTime });

/** Runs PreFilter + Filter on every node like the scheduler, then DefaultPreemption's PostFilter. */
function preempt(nodes: Node[], pods: Pod[], pod: Pod): { status: string; node?: string; victims?: string[] } {
  const snap = Snapshot.fromObjects(nodes, pods);
  const fwk = new Framework({ schedulerName: 'test' }, { registry: inTreeRegistry, defaultPlugins, snapshot: () => snap, clock: new FakeClock(), random: () => 0 });
  const state = new CycleState();
  const pi = new PodInfo(pod);
  const statuses = new NodeToStatus();
  const pre = fwk.runPreFilterPlugins(state, pi, snap.nodeInfoList);
  for (const n of snap.nodeInfoList) statuses.set(n.name, pre.status.isSuccess() ? fwk.runFilterPlugins(state, pi, n) : pre.status);
  const r = (fwk.plugins.get('DefaultPreemption') as DefaultPreemption).postFilter(state, pi, statuses);
  return { status: r.status.toString(), node: r.nominatedNodeName || undefined, victims: r.victims?.map((v) => v.name) };
}

describe('DefaultPreemption', () => {
  it.each<{ name: string; nodes: Node[]; pods: Pod[]; pod: Pod; want: ReturnType<typeof preempt> }>([
    {
      name: 'evicts the lower-priority pod',
      nodes: [node('n1', '2')],
      pods: [running('low', 'n1', '2', 1)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10 }),
      want: { status: 'Success', node: 'n1', victims: ['low'] },
    },
    {
      name: 'keeps pods that need not go (reprieve, most important first)',
      nodes: [node('n1', '4')],
      pods: [running('a', 'n1', '1', 1), running('b', 'n1', '1', 2), running('c', 'n1', '2', 3)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10 }),
      want: { status: 'Success', node: 'n1', victims: ['b', 'a'] },
    },
    {
      name: 'never evicts equal or higher priority',
      nodes: [node('n1', '2')],
      pods: [running('peer', 'n1', '2', 10)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10 }),
      want: { status: 'Unschedulable: preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.' },
    },
    {
      name: 'unresolvable nodes are not candidates',
      nodes: [makeNode('n1', { allocatable: { cpu: '2', memory: '8Gi', pods: '110' }, taints: [{ key: 'k', effect: 'NoSchedule' }] })],
      pods: [running('low', 'n1', '2', 1)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10 }),
      want: { status: 'Unschedulable: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.' },
    },
    {
      name: 'evicting everything is still not enough',
      nodes: [node('n1', '2')],
      pods: [running('low', 'n1', '1', 1)],
      pod: makePod('vip', { requests: { cpu: '3' }, priority: 10 }),
      want: { status: 'Unschedulable: preemption: 0/1 nodes are available: 1 Insufficient cpu.' },
    },
    {
      name: 'prefers the node whose highest victim priority is lowest',
      nodes: [node('n1', '2'), node('n2', '2')],
      pods: [running('mid', 'n1', '2', 5), running('low', 'n2', '2', 1)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10 }),
      want: { status: 'Success', node: 'n2', victims: ['low'] },
    },
    {
      name: 'frees anti-affinity conflicts too',
      nodes: [node('n1')],
      pods: [makePod('web', { nodeName: 'n1', labels: { app: 'web' }, priority: 1 })],
      pod: makePod('vip', {
        priority: 10,
        spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'orch.io/hostname' }] } } },
      }),
      want: { status: 'Success', node: 'n1', victims: ['web'] },
    },
    {
      name: 'preemptionPolicy Never',
      nodes: [node('n1', '2')],
      pods: [running('low', 'n1', '2', 1)],
      pod: makePod('vip', { requests: { cpu: '2' }, priority: 10, spec: { preemptionPolicy: 'Never' } }),
      want: { status: 'Unschedulable: preemption: not eligible due to preemptionPolicy=Never.' },
    },
  ])('$name', ({ nodes, pods, pod, want }) => {
    expect(preempt(nodes, pods, pod)).toEqual(want);
  });

  const victim = (name: string, priority: number, startTime = '2024-01-01T00:00:00Z'): PodInfo => new PodInfo(makePod(name, { priority, startTime }));
  const cand = (nodeName: string, ...victims: PodInfo[]): Candidate => ({ nodeName, victims });
  it.each<{ name: string; candidates: Candidate[]; want: string }>([
    { name: 'lowest highest-priority victim', candidates: [cand('a', victim('x', 5)), cand('b', victim('y', 3), victim('z', 1))], want: 'b' },
    { name: 'lowest priority sum', candidates: [cand('a', victim('x', 5), victim('y', 5)), cand('b', victim('z', 5), victim('w', 1))], want: 'b' },
    { name: 'fewest victims', candidates: [cand('a', victim('x', 5), victim('y', 0)), cand('b', victim('z', 5))], want: 'b' },
    {
      name: 'latest start of the top victims',
      candidates: [cand('a', victim('x', 5, '2024-01-01T00:00:00Z')), cand('b', victim('y', 5, '2024-06-01T00:00:00Z'))],
      want: 'b',
    },
    { name: 'first on a full tie', candidates: [cand('a', victim('x', 5)), cand('b', victim('y', 5))], want: 'a' },
  ])('pickOneNodeForPreemption: $name', ({ candidates, want }) => {
    expect(pickOneNodeForPreemption(candidates, Date.parse('2025-01-01T00:00:00Z'))?.nodeName).toBe(want);
  });

  it.each([
    { nodes: 50, want: 50 },
    { nodes: 500, want: 100 },
    { nodes: 5000, want: 500 },
  ])('numCandidates($nodes) = $want', ({ nodes, want }) => {
    expect(numCandidates(nodes, 10, 100)).toBe(want);
  });

  it.each([
    { name: 'defaults', args: {}, want: [] },
    { name: 'both zero', args: { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0 }, want: ['a: Invalid value: {"minCandidateNodesPercentage":0,"minCandidateNodesAbsolute":0}: both minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero'] },
    { name: 'percentage over 100', args: { minCandidateNodesPercentage: 101 }, want: ['a.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]'] },
  ])('args: $name', ({ args, want }) => {
    expect(validateDefaultPreemptionArgs(args, 'a').map((e) => e.toString())).toEqual(want);
  });
});
