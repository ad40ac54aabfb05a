import { LABEL_HOSTNAME, LABEL_ZONE, type Node, type Pod, type PodAffinityTerm, type PodSpec } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { Snapshot } from '../../framework/snapshot';
import { makeNode, makePod, snapshotHandle } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY, InterPodAffinity, validateInterPodAffinityArgs } from './inter-pod-affinity';

const nodes: Node[] = [
  makeNode('a1', { labels: { [LABEL_ZONE]: 'a' } }),
  makeNode('a2', { labels: { [LABEL_ZONE]: 'a' } }),
  makeNode('b1', { labels: { [LABEL_ZONE]: 'b' } }),
  makeNode('nozone'),
];
const term = (labels: Record<string, string>, topologyKey = LABEL_ZONE, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm => ({
  labelSelector: { matchLabels: labels },
  topologyKey,
  ...extra,
});
const on = (name: string, node: string, labels: Record<string, string>, spec: Partial<PodSpec> = {}, namespace?: string): Pod =>
  makePod(name, { nodeName: node, labels, spec, namespace });
const namespaces = [
  { name: 'default', labels: { team: 'a' } },
  { name: 'other', labels: { team: 'b' } },
];

function filterAll(pods: Pod[], pod: Pod): Record<string, string> {
  const snap = Snapshot.fromObjects(nodes, pods);
  const pl = new InterPodAffinity(snapshotHandle(snap, { namespaces: { labels: (n) => namespaces.find((x) => x.name === n)?.labels, list: () => namespaces } }));
  const state = new CycleState();
  const pi = new PodInfo(pod);
  const pre = pl.preFilter(state, pi);
  const out: Record<string, string> = {};
  for (const n of snap.nodeInfoList) {
    const s = pre.isSkip() ? pre : pl.filter(state, pi, n);
    out[n.name] = s.isSuccess() || s.isSkip() ? 'ok' : `${s.code}: ${s.message()}`;
  }
  return out;
}

const AFF = `UnschedulableAndUnresolvable: ${ERR_REASON_AFFINITY}`;
const ANTI = `Unschedulable: ${ERR_REASON_ANTI_AFFINITY}`;
const EXISTING = `Unschedulable: ${ERR_REASON_EXISTING_ANTI_AFFINITY}`;

describe('InterPodAffinity filter', () => {
  it.each<{ name: string; pods: Pod[]; pod: Pod; want: Record<string, string> }>([
    { name: 'no affinity anywhere', pods: [on('db', 'a1', { app: 'db' })], pod: makePod('p'), want: { a1: 'ok', a2: 'ok', b1: 'ok', nozone: 'ok' } },
    {
      name: 'required affinity to a zone with a matching pod',
      pods: [on('db', 'a1', { app: 'db' })],
      pod: makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' })] } } } }),
      want: { a1: 'ok', a2: 'ok', b1: AFF, nozone: AFF },
    },
    {
      name: 'first pod of a self-affine group may go anywhere with the key',
      pods: [],
      pod: makePod('p', { labels: { app: 'web' }, spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } } }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok', nozone: AFF },
    },
    {
      name: 'affinity to pods that do not exist',
      pods: [],
      pod: makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' })] } } } }),
      want: { a1: AFF, a2: AFF, b1: AFF, nozone: AFF },
    },
    {
      name: 'affinity terms only see the listed namespaces',
      pods: [on('db', 'a1', { app: 'db' })],
      pod: makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, LABEL_ZONE, { namespaces: ['other'] })] } } } }),
      want: { a1: AFF, a2: AFF, b1: AFF, nozone: AFF },
    },
    {
      name: 'namespaceSelector resolves through the namespace lister',
      pods: [on('db', 'b1', { app: 'db' }, {}, 'other')],
      pod: makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, LABEL_ZONE, { namespaceSelector: { matchLabels: { team: 'b' } } })] } } } }),
      want: { a1: AFF, a2: AFF, b1: 'ok', nozone: AFF },
    },
    {
      name: 'required anti-affinity by hostname',
      pods: [on('web', 'a1', { app: 'web' })],
      pod: makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, LABEL_HOSTNAME)] } } } }),
      want: { a1: ANTI, a2: 'ok', b1: 'ok', nozone: 'ok' },
    },
    {
      name: 'required anti-affinity by zone',
      pods: [on('web', 'a1', { app: 'web' })],
      pod: makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } } }),
      want: { a1: ANTI, a2: ANTI, b1: 'ok', nozone: 'ok' },
    },
    {
      name: "existing pod's anti-affinity keeps matching pods out of its zone",
      pods: [on('lonely', 'b1', { app: 'lonely' }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'x' })] } } })],
      pod: makePod('p', { labels: { app: 'x' } }),
      want: { a1: 'ok', a2: 'ok', b1: EXISTING, nozone: 'ok' },
    },
    {
      name: "existing pod's anti-affinity ignores pods of other namespaces",
      pods: [on('lonely', 'b1', { app: 'lonely' }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'x' })] } } })],
      pod: makePod('p', { labels: { app: 'x' }, namespace: 'other' }),
      want: { a1: 'ok', a2: 'ok', b1: 'ok', nozone: 'ok' },
    },
    {
      name: 'terminating pods still count (upstream)',
      pods: [makePod('web', { nodeName: 'a1', labels: { app: 'web' }, deletionTimestamp: '2024-01-01T00:00:00Z' })],
      pod: makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, LABEL_HOSTNAME)] } } } }),
      want: { a1: ANTI, a2: 'ok', b1: 'ok', nozone: 'ok' },
    },
  ])('$name', ({ pods, pod, want }) => {
    expect(filterAll(pods, pod)).toEqual(want);
  });

  it('addPod/removePod update the counts of a cloned state only', () => {
    const snap = Snapshot.fromObjects(nodes, [on('web', 'a1', { app: 'web' })]);
    const pl = new InterPodAffinity(snapshotHandle(snap));
    const pod = new PodInfo(makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, LABEL_HOSTNAME)] } } } }));
    const state = new CycleState();
    pl.preFilter(state, pod);
    const a1 = snap.get('a1')!;
    const copy = state.clone();
    pl.removePod(copy, pod, a1.pods[0], a1);
    expect(pl.filter(copy, pod, a1).isSuccess()).toBe(true);
    expect(pl.filter(state, pod, a1).isSuccess()).toBe(false);
    pl.addPod(copy, pod, new PodInfo(on('web2', 'b1', { app: 'web' })), snap.get('b1')!);
    expect(pl.filter(copy, pod, snap.get('b1')!).isSuccess()).toBe(false);
  });
});

describe('InterPodAffinity score', () => {
  const preferred = (weight: number, labels: Record<string, string>) => [{ weight, podAffinityTerm: term(labels) }];
  it.each<{ name: string; pods: Pod[]; pod: Pod; hardWeight?: number; want: Record<string, number> | 'skip' }>([
    { name: 'nothing to score', pods: [on('db', 'a1', { app: 'db' })], pod: makePod('p'), want: 'skip' },
    {
      name: 'preferred affinity pulls toward the zone',
      pods: [on('db', 'a1', { app: 'db' })],
      pod: makePod('p', { spec: { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(5, { app: 'db' }) } } } }),
      want: { a1: 100, a2: 100, b1: 0, nozone: 0 },
    },
    {
      name: 'preferred anti-affinity pushes away',
      pods: [on('db', 'a1', { app: 'db' })],
      pod: makePod('p', { spec: { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(5, { app: 'db' }) } } } }),
      want: { a1: 0, a2: 0, b1: 100, nozone: 100 },
    },
    {
      name: "existing pod's preferred affinity attracts the incoming pod",
      pods: [on('db', 'b1', { app: 'db' }, { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(3, { app: 'web' }) } } })],
      pod: makePod('p', { labels: { app: 'web' } }),
      want: { a1: 0, a2: 0, b1: 100, nozone: 0 },
    },
    {
      name: "existing pod's required affinity counts with hardPodAffinityWeight",
      pods: [on('db', 'b1', { app: 'db' }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } })],
      pod: makePod('p', { labels: { app: 'web' } }),
      want: { a1: 0, a2: 0, b1: 100, nozone: 0 },
    },
    {
      name: 'hardPodAffinityWeight 0 disables that',
      pods: [on('db', 'b1', { app: 'db' }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } })],
      pod: makePod('p', { labels: { app: 'web' } }),
      hardWeight: 0,
      want: 'skip',
    },
  ])('$name', ({ pods, pod, hardWeight, want }) => {
    const snap = Snapshot.fromObjects(nodes, pods);
    const pl = new InterPodAffinity(snapshotHandle(snap), { hardPodAffinityWeight: hardWeight });
    const state = new CycleState();
    const pi = new PodInfo(pod);
    if (pl.preScore(state, pi, snap.nodeInfoList).isSkip()) return expect(want).toBe('skip');
    const scores = snap.nodeInfoList.map((n) => pl.score(state, pi, n) as number);
    pl.normalizeScore(state, pi, snap.nodeInfoList, scores);
    expect(Object.fromEntries(snap.nodeInfoList.map((n, i) => [n.name, scores[i]]))).toEqual(want);
  });

  it.each([
    { name: 'valid', args: { hardPodAffinityWeight: 100 }, want: [] },
    { name: 'out of range', args: { hardPodAffinityWeight: 101 }, want: ['a.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]'] },
  ])('args: $name', ({ args, want }) => {
    expect(validateInterPodAffinityArgs(args, 'a').map((e) => e.toString())).toEqual(want);
  });
});
