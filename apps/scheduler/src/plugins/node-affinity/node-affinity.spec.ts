import { parseLabelSelector } from '@orch/apimachinery';
import type { NodeAffinity as NodeAffinitySpec, NodeSelectorTerm, PodSpec } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { PreFilterResult } from '../../framework/interface';
import { Status } from '../../framework/status';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity, preFilterNodeNames, validateNodeAffinityArgs } from './node-affinity';

const required = (...terms: NodeSelectorTerm[]): PodSpec['affinity'] => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } });

function runFilter(pl: NodeAffinity, pod: PodInfo, nodeLabels: Record<string, string>, nodeName = 'n1'): string {
  const state = new CycleState();
  const pre = pl.preFilter(state, pod);
  if (pre instanceof Status && pre.isSkip()) return 'Success (skipped)';
  if (pre instanceof Status && !pre.isSuccess()) return pre.code;
  if (pre instanceof PreFilterResult && !pre.nodeNames.has(nodeName)) return 'Excluded';
  const s = pl.filter(state, pod, makeNodeInfo(makeNode(nodeName, { labels: nodeLabels })));
  return s.isSuccess() ? 'Success' : `${s.code}: ${s.message()}`;
}

describe('NodeAffinity', () => {
  const reject = `UnschedulableAndUnresolvable: ${ERR_REASON_POD}`;
  describe('filter', () => {
    it.each<{ name: string; spec: Partial<PodSpec>; labels: Record<string, string>; nsSelector?: string; want: string }>([
      { name: 'no constraints', spec: {}, labels: {}, want: 'Success (skipped)' },
      { name: 'nodeSelector matches', spec: { nodeSelector: { disk: 'ssd' } }, labels: { disk: 'ssd' }, want: 'Success' },
      { name: 'nodeSelector mismatch', spec: { nodeSelector: { disk: 'ssd' } }, labels: { disk: 'hdd' }, want: reject },
      { name: 'In', spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }) }, labels: { zone: 'b' }, want: 'Success' },
      { name: 'In mismatch', spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }) }, labels: { zone: 'b' }, want: reject },
      { name: 'NotIn', spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }) }, labels: { zone: 'b' }, want: 'Success' },
      { name: 'NotIn absent label matches', spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }) }, labels: {}, want: 'Success' },
      { name: 'Exists', spec: { affinity: required({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }) }, labels: { gpu: '' }, want: 'Success' },
      { name: 'DoesNotExist', spec: { affinity: required({ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }) }, labels: { gpu: 'x' }, want: reject },
      { name: 'Gt', spec: { affinity: required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }) }, labels: { cores: '8' }, want: 'Success' },
      { name: 'Gt not greater', spec: { affinity: required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['8'] }] }) }, labels: { cores: '8' }, want: reject },
      { name: 'Lt', spec: { affinity: required({ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['8'] }] }) }, labels: { cores: '4' }, want: 'Success' },
      { name: 'Lt non-integer label', spec: { affinity: required({ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['8'] }] }) }, labels: { cores: 'many' }, want: reject },
      { name: 'invalid Gt value never matches', spec: { affinity: required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['x'] }] }) }, labels: { cores: '8' }, want: reject },
      {
        name: 'terms are ORed',
        spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }) },
        labels: { zone: 'b' },
        want: 'Success',
      },
      {
        name: 'expressions within a term are ANDed',
        spec: { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'disk', operator: 'Exists' }] }) },
        labels: { zone: 'a' },
        want: reject,
      },
      { name: 'empty term matches nothing', spec: { affinity: required({}) }, labels: { zone: 'a' }, want: reject },
      { name: 'no terms match nothing', spec: { affinity: required() }, labels: {}, want: reject },
      { name: 'nodeSelector and affinity both needed', spec: { nodeSelector: { disk: 'ssd' }, affinity: required({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }) }, labels: { zone: 'a' }, want: reject },
      { name: 'matchFields metadata.name In', spec: { affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }) }, labels: {}, want: 'Success' },
      { name: 'matchFields excludes other nodes at PreFilter', spec: { affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }) }, labels: {}, want: 'Excluded' },
      { name: 'matchFields NotIn', spec: { affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }) }, labels: {}, want: reject },
      { name: 'namespace node selector matches', spec: {}, labels: { env: 'prod' }, nsSelector: 'env=prod', want: 'Success' },
      { name: 'namespace node selector rejects', spec: {}, labels: { env: 'dev' }, nsSelector: 'env=prod', want: reject },
      { name: 'namespace selector ANDs with nodeSelector', spec: { nodeSelector: { disk: 'ssd' } }, labels: { disk: 'ssd' }, nsSelector: 'env=prod', want: reject },
    ])('$name', ({ spec, labels, nsSelector, want }) => {
      const pod = new PodInfo(makePod('p', { spec }));
      if (nsSelector) pod.namespaceNodeSelector = parseLabelSelector(nsSelector);
      expect(runFilter(new NodeAffinity(), pod, labels)).toBe(want);
    });

    it('enforces addedAffinity from args', () => {
      const pl = new NodeAffinity({ addedAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['batch'] }] }] } } });
      const pod = new PodInfo(makePod('p'));
      expect(runFilter(pl, pod, { pool: 'batch' })).toBe('Success');
      expect(runFilter(pl, pod, { pool: 'web' })).toBe(`UnschedulableAndUnresolvable: ${ERR_REASON_ENFORCED}`);
    });
  });

  describe('preFilterNodeNames', () => {
    it.each<{ name: string; affinity?: NodeAffinitySpec; want?: string[] }>([
      { name: 'no affinity', want: undefined },
      { name: 'one term with names', affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] })!.nodeAffinity, want: ['a', 'b'] },
      {
        name: 'union over terms',
        affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['c'] }] })!.nodeAffinity,
        want: ['a', 'c'],
      },
      {
        name: 'a term without names means all nodes',
        affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }, { matchExpressions: [{ key: 'x', operator: 'Exists' }] })!.nodeAffinity,
        want: undefined,
      },
    ])('$name', ({ affinity, want }) => {
      const got = preFilterNodeNames(affinity);
      expect(got && [...got].sort()).toEqual(want);
    });
  });

  describe('score', () => {
    const preferred = (weight: number, key: string, value: string) => ({ weight, preference: { matchExpressions: [{ key, operator: 'In' as const, values: [value] }] } });
    it.each<{ name: string; terms: ReturnType<typeof preferred>[]; nodes: Record<string, string>[]; want: number[] | 'skip' }>([
      { name: 'no preferred terms skips', terms: [], nodes: [{}], want: 'skip' },
      { name: 'weights add up and normalize', terms: [preferred(2, 'a', '1'), preferred(8, 'b', '1')], nodes: [{ a: '1', b: '1' }, { b: '1' }, { a: '1' }, {}], want: [100, 80, 20, 0] },
      { name: 'no node matches', terms: [preferred(5, 'a', '1')], nodes: [{}, {}], want: [0, 0] },
    ])('$name', ({ terms, nodes, want }) => {
      const pl = new NodeAffinity();
      const state = new CycleState();
      const pod = new PodInfo(makePod('p', { spec: { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: terms } } } }));
      const pre = pl.preScore(state, pod);
      if (want === 'skip') return expect(pre.isSkip()).toBe(true);
      const infos = nodes.map((labels, i) => makeNodeInfo(makeNode(`n${i}`, { labels })));
      const scores = infos.map((n) => pl.score(state, pod, n) as number);
      pl.normalizeScore(state, pod, infos, scores);
      expect(scores).toEqual(want);
    });
  });

  describe('args validation', () => {
    it.each([
      { name: 'empty args', args: {}, want: [] },
      { name: 'not an object', args: 'x', want: ['a: Invalid value: "x": must be an object'] },
      {
        name: 'bad preferred weight',
        args: { addedAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: {} }] } },
        want: ['a.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100'],
      },
    ])('$name', ({ args, want }) => {
      expect(validateNodeAffinityArgs(args, 'a').map((e) => e.toString())).toEqual(want);
    });
  });
});
