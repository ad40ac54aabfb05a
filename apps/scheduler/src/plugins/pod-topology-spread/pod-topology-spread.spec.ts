import { parseLabelSelector } from '@orch/apimachinery';
import { LABEL_HOSTNAME, LABEL_ZONE, type Node, type Pod, type TopologySpreadConstraint } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { Snapshot } from '../../framework/snapshot';
import { Status } from '../../framework/status';
import { makeNode, makePod, snapshotHandle } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import {
  ERR_REASON_CONSTRAINTS_NOT_MATCH,
  ERR_REASON_NODE_LABEL_NOT_MATCH,
  PodTopologySpread,
  validatePodTopologySpreadArgs,
  type PodTopologySpreadArgs,
} from './pod-topology-spread';

const zoneNode = (name: string, zone?: string, extra: Parameters<typeof makeNode>[1] = {}): Node =>
  makeNode(name, { ...extra, labels: { ...(zone ? { [LABEL_ZONE]: zone } : {}), ...extra.labels } });
const app = (name: string, node: string, o: Parameters<typeof makePod>[1] = {}): Pod => makePod(name, { nodeName: node, labels: { app: 'x' }, ...o });
const constraint = (o: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: LABEL_ZONE,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { app: 'x' } },
  ...o,
});

/** Filter result per node name: 'ok' or the status code and reason. */
function filterAll(nodes: Node[], pods: Pod[], pod: Pod, args?: PodTopologySpreadArgs): Record<string, string> {
  const snap = Snapshot.fromObjects(nodes, pods);
  const pl = new PodTopologySpread(snapshotHandle(snap), args);
  const state = new CycleState();
  const pi = new PodInfo(pod);
  const pre = pl.preFilter(state, pi);
  const out: Record<string, string> = {};
  for (const n of snap.nodeInfoList) {
    const s = pre.isSkip() ? Status.success() : pl.filter(state, pi, n);
    out[n.name] = s.isSuccess() ? 'ok' : `${s.code}: ${s.message()}`;
  }
  return out;
}

const SKEW = `Unschedulable: ${ERR_REASON_CONSTRAINTS_NOT_MATCH}`;
const NO_LABEL = `UnschedulableAndUnresolvable: ${ERR_REASON_NODE_LABEL_NOT_MATCH}`;

describe('PodTopologySpread filter', () => {
  const twoZones = [zoneNode('a1', 'a'), zoneNode('a2', 'a'), zoneNode('b1', 'b')];
  it.each<{ name: string; nodes: Node[]; pods: Pod[]; pod: Pod; want: Record<string, string> }>([
    {
      name: 'no constraints: skipped',
      nodes: twoZones,
      pods: [app('e1', 'a1')],
      pod: makePod('p'),
      want: { a1: 'ok', a2: 'ok', b1: 'ok' },
    },
    {
      name: 'skew would exceed maxSkew in the fuller zone',
      nodes: twoZones,
      pods: [app('e1', 'a1'), app('e2', 'a2')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: SKEW, a2: SKEW, b1: 'ok' },
    },
    {
      name: 'balanced zones accept anywhere',
      nodes: twoZones,
      pods: [app('e1', 'a1'), app('e2', 'b1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok' },
    },
    {
      name: 'node without the topology key is unresolvable',
      nodes: [...twoZones, zoneNode('nozone')],
      pods: [],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok', nozone: NO_LABEL },
    },
    {
      name: 'minDomains above the domain count makes the minimum 0',
      nodes: twoZones,
      pods: [app('e1', 'a1'), app('e2', 'b1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint({ minDomains: 3 })] } }),
      want: { a1: SKEW, a2: SKEW, b1: SKEW },
    },
    {
      name: 'pod not matching its own selector does not count itself',
      nodes: twoZones,
      pods: [app('e1', 'a1')],
      pod: makePod('p', { labels: { app: 'other' }, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok' },
    },
    {
      name: 'other namespaces and terminating pods are not counted',
      nodes: twoZones,
      pods: [app('e1', 'a1', { namespace: 'other' }), app('e2', 'a2', { deletionTimestamp: '2024-01-01T00:00:00Z' })],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok' },
    },
    {
      name: 'nodeAffinityPolicy Honor: zones outside the node selector do not count',
      nodes: [zoneNode('a1', 'a', { labels: { pool: 'p' } }), zoneNode('b1', 'b')],
      pods: [app('e1', 'a1')],
      pod: app('p', '', { nodeName: undefined, spec: { nodeSelector: { pool: 'p' }, topologySpreadConstraints: [constraint()] } }),
      want: { a1: 'ok', b1: 'ok' },
    },
    {
      name: 'nodeAffinityPolicy Ignore: every zone counts',
      nodes: [zoneNode('a1', 'a', { labels: { pool: 'p' } }), zoneNode('b1', 'b')],
      pods: [app('e1', 'a1')],
      pod: app('p', '', { nodeName: undefined, spec: { nodeSelector: { pool: 'p' }, topologySpreadConstraints: [constraint({ nodeAffinityPolicy: 'Ignore' })] } }),
      want: { a1: SKEW, b1: 'ok' },
    },
    {
      name: 'nodeTaintsPolicy Honor: tainted nodes do not form domains',
      nodes: [zoneNode('a1', 'a'), zoneNode('b1', 'b', { taints: [{ key: 'k', effect: 'NoSchedule' }] })],
      pods: [app('e1', 'a1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint({ nodeTaintsPolicy: 'Honor' })] } }),
      want: { a1: 'ok', b1: 'ok' },
    },
    {
      name: 'nodeTaintsPolicy Ignore (default): tainted nodes form domains',
      nodes: [zoneNode('a1', 'a'), zoneNode('b1', 'b', { taints: [{ key: 'k', effect: 'NoSchedule' }] })],
      pods: [app('e1', 'a1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }),
      want: { a1: SKEW, b1: 'ok' },
    },
    {
      name: 'hostname spreading with maxSkew 2',
      nodes: [makeNode('n1'), makeNode('n2')],
      pods: [app('e1', 'n1'), app('e2', 'n1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint({ topologyKey: LABEL_HOSTNAME, maxSkew: 2 })] } }),
      want: { n1: SKEW, n2: 'ok' },
    },
    {
      name: 'matchLabelKeys restricts counting to the same revision',
      nodes: twoZones,
      pods: [app('e1', 'a1', { labels: { app: 'x', rev: '1' } }), app('e2', 'a2', { labels: { app: 'x', rev: '1' } })],
      pod: makePod('p', { labels: { app: 'x', rev: '2' }, spec: { topologySpreadConstraints: [constraint({ matchLabelKeys: ['rev'] })] } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok' },
    },
  ])('$name', ({ nodes, pods, pod, want }) => {
    expect(filterAll(nodes, pods, pod)).toEqual(want);
  });

  it('addPod/removePod keep counts in step with hypothetical changes', () => {
    const nodes = [zoneNode('a1', 'a'), zoneNode('b1', 'b')];
    const snap = Snapshot.fromObjects(nodes, [app('e1', 'a1')]);
    const pl = new PodTopologySpread(snapshotHandle(snap));
    const state = new CycleState();
    const pod = new PodInfo(app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [constraint()] } }));
    pl.preFilter(state, pod);
    const [a1, b1] = [snap.get('a1')!, snap.get('b1')!];
    expect(pl.filter(state, pod, a1).isSuccess()).toBe(false);
    const copy = state.clone();
    pl.removePod(copy, pod, a1.pods[0], a1);
    expect(pl.filter(copy, pod, a1).isSuccess()).toBe(true);
    pl.addPod(copy, pod, new PodInfo(app('x', 'b1')), b1);
    pl.addPod(copy, pod, new PodInfo(app('y', 'b1')), b1);
    expect(pl.filter(copy, pod, b1).isSuccess()).toBe(false);
    expect(pl.filter(state, pod, a1).isSuccess()).toBe(false);
  });
});

describe('PodTopologySpread score', () => {
  function scoreAll(nodes: Node[], pods: Pod[], pod: Pod, extra?: Parameters<typeof snapshotHandle>[1]): Record<string, number> | 'skip' {
    const snap = Snapshot.fromObjects(nodes, pods);
    const pl = new PodTopologySpread(snapshotHandle(snap, extra));
    const state = new CycleState();
    const pi = new PodInfo(pod);
    if (pl.preScore(state, pi, snap.nodeInfoList).isSkip()) return 'skip';
    const scores = snap.nodeInfoList.map((n) => pl.score(state, pi, n) as number);
    pl.normalizeScore(state, pi, snap.nodeInfoList, scores);
    return Object.fromEntries(snap.nodeInfoList.map((n, i) => [n.name, scores[i]]));
  }
  const soft = (o: Partial<TopologySpreadConstraint> = {}) => constraint({ whenUnsatisfiable: 'ScheduleAnyway', ...o });

  it.each<{ name: string; nodes: Node[]; pods: Pod[]; pod: Pod; selector?: string; want: Record<string, number> | 'skip' }>([
    { name: 'no soft constraints and no owner selector: skip', nodes: [zoneNode('a1', 'a')], pods: [], pod: makePod('p'), want: 'skip' },
    {
      name: 'emptier zone scores higher',
      nodes: [zoneNode('a1', 'a'), zoneNode('b1', 'b')],
      pods: [app('e1', 'a1'), app('e2', 'a1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [soft()] } }),
      want: { a1: 0, b1: 100 },
    },
    {
      name: 'nodes without the key are ignored and score 0',
      nodes: [zoneNode('a1', 'a'), zoneNode('b1', 'b'), zoneNode('x')],
      pods: [app('e1', 'b1')],
      pod: app('p', '', { nodeName: undefined, spec: { topologySpreadConstraints: [soft()] } }),
      want: { a1: 100, b1: 0, x: 0 },
    },
    {
      name: 'system default spreading uses the owner selector',
      nodes: [makeNode('n1'), makeNode('n2')],
      pods: [app('e1', 'n1'), app('e2', 'n1'), app('e3', 'n1')],
      pod: app('p', '', { nodeName: undefined }),
      selector: 'app=x',
      // hostname: round(3·ln 4 + 2) = 6 vs 2; nodes without a zone label still score by hostname.
      want: { n1: 33, n2: 100 },
    },
  ])('$name', ({ nodes, pods, pod, selector, want }) => {
    const extra = selector ? { defaultSpreadSelector: () => parseLabelSelector(selector) } : {};
    expect(scoreAll(nodes, pods, pod, extra)).toEqual(want);
  });
});

describe('PodTopologySpread args', () => {
  it.each([
    { name: 'defaults', args: {}, want: [] },
    { name: 'List with constraints', args: { defaultingType: 'List', defaultConstraints: [{ maxSkew: 1, topologyKey: 'k', whenUnsatisfiable: 'ScheduleAnyway' }] }, want: [] },
    {
      name: 'constraints need List',
      args: { defaultConstraints: [{ maxSkew: 1, topologyKey: 'k', whenUnsatisfiable: 'ScheduleAnyway' }] },
      want: ['a.defaultingType: Invalid value: "System": when .defaultConstraints are not empty, defaultingType must be List'],
    },
    {
      name: 'bad constraint',
      args: { defaultingType: 'List', defaultConstraints: [{ maxSkew: 0, topologyKey: '', whenUnsatisfiable: 'Maybe' }] },
      want: [
        'a.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)',
        'a.defaultConstraints[0].topologyKey: Required value: can not be empty',
        'a.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
      ],
    },
  ])('$name', ({ args, want }) => {
    expect(validatePodTopologySpreadArgs(args, 'a').map((e) => e.toString())).toEqual(want);
  });
});
