import type { Container, Pod, ResourceList } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { fitsRequest, NodeResourcesFit, validateNodeResourcesFitArgs, type NodeResourcesFitArgs } from './fit';

const container = (name: string, requests: ResourceList, restartPolicy?: string): Container => ({ name, resources: { requests }, restartPolicy });

describe('NodeResourcesFit', () => {
  describe('filter', () => {
    const node = (allocatable: ResourceList = { cpu: '4', memory: '8Gi', pods: '3', 'example.com/gpu': '2', 'ephemeral-storage': '10Gi' }) => makeNode('n', { allocatable });
    const existing = (name: string, requests: ResourceList): Pod => makePod(name, { nodeName: 'n', requests });
    it.each<{ name: string; pod: Pod; existing?: Pod[]; args?: NodeResourcesFitArgs; want: string[] }>([
      { name: 'empty pod fits', pod: makePod('p'), want: [] },
      { name: 'fits exactly', pod: makePod('p', { requests: { cpu: '3', memory: '6Gi' } }), existing: [existing('e', { cpu: '1', memory: '2Gi' })], want: [] },
      { name: 'insufficient cpu', pod: makePod('p', { requests: { cpu: '3500m' } }), existing: [existing('e', { cpu: '1' })], want: ['Insufficient cpu'] },
      { name: 'insufficient cpu and memory', pod: makePod('p', { requests: { cpu: '5', memory: '9Gi' } }), want: ['Insufficient cpu', 'Insufficient memory'] },
      { name: 'too many pods even for an empty pod', pod: makePod('p'), existing: [existing('a', {}), existing('b', {}), existing('c', {})], want: ['Too many pods'] },
      { name: 'insufficient ephemeral storage', pod: makePod('p', { requests: { 'ephemeral-storage': '11Gi' } }), want: ['Insufficient ephemeral-storage'] },
      { name: 'extended resource fits', pod: makePod('p', { requests: { 'example.com/gpu': '2' } }), want: [] },
      { name: 'extended resource exhausted', pod: makePod('p', { requests: { 'example.com/gpu': '1' } }), existing: [existing('e', { 'example.com/gpu': '2' })], want: ['Insufficient example.com/gpu'] },
      { name: 'unknown extended resource', pod: makePod('p', { requests: { 'example.com/fpga': '1' } }), want: ['Insufficient example.com/fpga'] },
      { name: 'ignored resource', pod: makePod('p', { requests: { 'example.com/fpga': '1' } }), args: { ignoredResources: ['example.com/fpga'] }, want: [] },
      { name: 'ignored resource group', pod: makePod('p', { requests: { 'example.com/fpga': '1' } }), args: { ignoredResourceGroups: ['example.com'] }, want: [] },
      {
        name: 'init container max rule: largest init container counts',
        pod: makePod('p', { spec: { containers: [container('c', { cpu: '1' })], initContainers: [container('i', { cpu: '4500m' })] } }),
        want: ['Insufficient cpu'],
      },
      {
        name: 'init container smaller than containers',
        pod: makePod('p', { spec: { containers: [container('c', { cpu: '3' })], initContainers: [container('i', { cpu: '2' })] } }),
        want: [],
      },
      {
        name: 'sidecar adds to the running total',
        pod: makePod('p', { spec: { containers: [container('c', { cpu: '3' })], initContainers: [container('s', { cpu: '1500m' }, 'Always')] } }),
        want: ['Insufficient cpu'],
      },
      {
        name: 'init after sidecar counts with the sidecar',
        pod: makePod('p', { spec: { containers: [container('c', { cpu: '1' })], initContainers: [container('s', { cpu: '1' }, 'Always'), container('i', { cpu: '3500m' })] } }),
        want: ['Insufficient cpu'],
      },
      { name: 'overhead counts', pod: makePod('p', { requests: { cpu: '3' }, spec: { overhead: { cpu: '1500m' } } }), want: ['Insufficient cpu'] },
    ])('$name', ({ pod, existing: pods = [], args, want }) => {
      const pl = new NodeResourcesFit(args);
      const state = new CycleState();
      const pi = new PodInfo(pod);
      pl.preFilter(state, pi);
      const s = pl.filter(state, pi, makeNodeInfo(node(), pods));
      expect(s.reasons).toEqual(want);
      expect(s.code).toBe(want.length ? 'Unschedulable' : 'Success');
    });

    it('reports amounts', () => {
      const got = fitsRequest(new PodInfo(makePod('p', { requests: { cpu: '2' } })).requests, makeNodeInfo(node(), [existing('e', { cpu: '3' })]));
      expect(got).toEqual([{ resourceName: 'cpu', reason: 'Insufficient cpu', requested: 2000, used: 3000, capacity: 4000 }]);
    });
  });

  describe('score', () => {
    const nodes = () => [makeNodeInfo(makeNode('empty')), makeNodeInfo(makeNode('half'), [makePod('e', { nodeName: 'half', requests: { cpu: '2', memory: '4Gi' } })])];
    it.each<{ name: string; args?: NodeResourcesFitArgs; requests?: ResourceList; want: number[] }>([
      { name: 'LeastAllocated prefers the emptier node', requests: { cpu: '1', memory: '2Gi' }, want: [75, 25] },
      { name: 'MostAllocated prefers the fuller node', args: { scoringStrategy: { type: 'MostAllocated' } }, requests: { cpu: '1', memory: '2Gi' }, want: [25, 75] },
      { name: 'a pod without requests counts as 100m/200Mi', want: [97, 47] },
      {
        name: 'weights per resource',
        args: { scoringStrategy: { type: 'LeastAllocated', resources: [{ name: 'cpu', weight: 3 }, { name: 'memory', weight: 1 }] } },
        requests: { cpu: '4', memory: '0' },
        want: [Math.floor((0 * 3 + 100) / 4), Math.floor((0 * 3 + 50) / 4)],
      },
      {
        name: 'cpu only',
        args: { scoringStrategy: { resources: [{ name: 'cpu', weight: 1 }] } },
        requests: { cpu: '1' },
        want: [75, 25],
      },
    ])('$name', ({ args, requests, want }) => {
      const pl = new NodeResourcesFit(args);
      const state = new CycleState();
      const pod = new PodInfo(makePod('p', { requests }));
      pl.preScore(state, pod);
      expect(nodes().map((n) => pl.score(state, pod, n))).toEqual(want);
    });
  });

  describe('args validation', () => {
    it.each([
      { name: 'defaults', args: {}, want: [] },
      { name: 'unknown strategy', args: { scoringStrategy: { type: 'Random' } }, want: ['x.scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", "MostAllocated"'] },
      { name: 'weight out of range', args: { scoringStrategy: { resources: [{ name: 'cpu', weight: 101 }] } }, want: ['x.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu should be in range [1, 100]'] },
      { name: 'group with slash', args: { ignoredResourceGroups: ['a/b'] }, want: ['x.ignoredResourceGroups[0]: Invalid value: "a/b": resource group name can\'t contain "/"'] },
    ])('$name', ({ args, want }) => {
      expect(validateNodeResourcesFitArgs(args, 'x').map((e) => e.toString())).toEqual(want);
    });
  });
});
