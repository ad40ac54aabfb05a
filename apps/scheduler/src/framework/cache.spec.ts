import { LABEL_ZONE, type Node, type Pod } from './api';
import { NodeTree, SchedulerCache } from './cache';
import { Snapshot } from './snapshot';
import { makeNode, makePod } from './testing';
import { PodInfo } from './types';

const zoned = (name: string, zone: string): Node => makeNode(name, { labels: { [LABEL_ZONE]: zone } });
const antiPod = (name: string, node: string): Pod =>
  makePod(name, {
    nodeName: node,
    spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { a: 'b' } }, topologyKey: 'k' }] } } },
  });

/** A readable summary of a snapshot. */
function summary(s: Snapshot): Record<string, unknown> {
  return {
    list: s.nodeInfoList.map((n) => `${n.name}:${n.pods.map((p) => p.name).join('+')}:${n.requested.milliCPU}`),
    affinity: s.havePodsWithAffinityList.map((n) => n.name),
    antiAffinity: s.havePodsWithRequiredAntiAffinityList.map((n) => n.name),
  };
}

describe('SchedulerCache', () => {
  type Step = (c: SchedulerCache) => void;
  it.each<{ name: string; steps: Step[]; want: Record<string, unknown> }>([
    {
      name: 'nodes and bound pods',
      steps: [(c) => c.addNode(makeNode('n1')), (c) => c.addNode(makeNode('n2')), (c) => c.addPod(makePod('p', { nodeName: 'n2', requests: { cpu: '1' } }))],
      want: { list: ['n1::0', 'n2:p:1000'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'pods may arrive before their node',
      steps: [(c) => c.addPod(makePod('p', { nodeName: 'n1', requests: { cpu: '1' } })), (c) => c.addNode(makeNode('n1'))],
      want: { list: ['n1:p:1000'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'a node without object is not listed',
      steps: [(c) => c.addNode(makeNode('n1')), (c) => c.addPod(makePod('p', { nodeName: 'ghost' }))],
      want: { list: ['n1::0'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'removing a node keeps it out of the snapshot',
      steps: [(c) => c.addNode(makeNode('n1')), (c) => c.addNode(makeNode('n2')), (c) => c.addPod(makePod('p', { nodeName: 'n1' })), (c) => c.removeNode(makeNode('n1'))],
      want: { list: ['n2::0'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'pod update moves requests',
      steps: [
        (c) => c.addNode(makeNode('n1')),
        (c) => c.addPod(makePod('p', { nodeName: 'n1', requests: { cpu: '1' } })),
        (c) => c.updatePod(makePod('p', { nodeName: 'n1', requests: { cpu: '1' } }), makePod('p', { nodeName: 'n1', requests: { cpu: '2' } })),
      ],
      want: { list: ['n1:p:2000'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'pod removal',
      steps: [(c) => c.addNode(makeNode('n1')), (c) => c.addPod(makePod('p', { nodeName: 'n1', requests: { cpu: '1' } })), (c) => c.removePod(makePod('p', { nodeName: 'n1' }))],
      want: { list: ['n1::0'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'assumed pods count until forgotten',
      steps: [
        (c) => c.addNode(makeNode('n1')),
        (c) => c.assumePod(new PodInfo(makePod('a', { nodeName: 'n1', requests: { cpu: '1' } }))),
        (c) => c.assumePod(new PodInfo(makePod('b', { nodeName: 'n1', requests: { cpu: '2' } }))),
        (c) => c.forgetPod(makePod('a', { nodeName: 'n1' })),
      ],
      want: { list: ['n1:b:2000'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'confirming an assumed pod on another node moves it',
      steps: [
        (c) => c.addNode(makeNode('n1')),
        (c) => c.addNode(makeNode('n2')),
        (c) => c.assumePod(new PodInfo(makePod('a', { nodeName: 'n1', requests: { cpu: '1' } }))),
        (c) => c.addPod(makePod('a', { nodeName: 'n2', requests: { cpu: '1' } })),
        (c) => c.forgetPod(makePod('a')),
      ],
      want: { list: ['n1::0', 'n2:a:1000'], affinity: [], antiAffinity: [] },
    },
    {
      name: 'affinity lists follow pods',
      steps: [(c) => c.addNode(makeNode('n1')), (c) => c.addNode(makeNode('n2')), (c) => c.addPod(antiPod('x', 'n2'))],
      want: { list: ['n1::0', 'n2:x:0'], affinity: ['n2'], antiAffinity: ['n2'] },
    },
    {
      name: 'zones are interleaved',
      steps: [(c) => c.addNode(zoned('a1', 'a')), (c) => c.addNode(zoned('a2', 'a')), (c) => c.addNode(zoned('b1', 'b')), (c) => c.addNode(zoned('b2', 'b'))],
      want: { list: ['a1::0', 'b1::0', 'a2::0', 'b2::0'], affinity: [], antiAffinity: [] },
    },
  ])('$name', ({ steps, want }) => {
    const cache = new SchedulerCache();
    for (const s of steps) s(cache);
    const snap = new Snapshot();
    cache.updateSnapshot(snap);
    expect(summary(snap)).toEqual(want);
  });

  it('updates a snapshot incrementally, copying only changed nodes', () => {
    const cache = new SchedulerCache();
    for (let i = 0; i < 5; i++) cache.addNode(makeNode(`n${i}`));
    const snap = new Snapshot();
    cache.updateSnapshot(snap);
    const before = snap.nodeInfoList.map((n) => n.generation);
    const objects = [...snap.nodeInfoList];
    cache.addPod(antiPod('x', 'n3'));
    cache.updateSnapshot(snap);
    // Same NodeInfo objects (lists stay valid); only n3 changed generation.
    expect(snap.nodeInfoList).toEqual(objects);
    expect(snap.nodeInfoList.map((n, i) => n.generation !== before[i])).toEqual([false, false, false, true, false]);
    expect(snap.havePodsWithRequiredAntiAffinityList.map((n) => n.name)).toEqual(['n3']);
    // The snapshot is isolated from later cache changes until the next update.
    cache.addPod(makePod('y', { nodeName: 'n3' }));
    expect(snap.get('n3')!.pods.map((p) => p.name)).toEqual(['x']);
    cache.updateSnapshot(snap);
    expect(snap.get('n3')!.pods.map((p) => p.name)).toEqual(['x', 'y']);
  });

  it('rejects assuming a pod twice', () => {
    const cache = new SchedulerCache();
    const pi = new PodInfo(makePod('a', { nodeName: 'n1' }));
    cache.assumePod(pi);
    expect(cache.isAssumedPod(pi.pod)).toBe(true);
    expect(() => cache.assumePod(pi)).toThrow("pod default/a is in the cache, so can't be assumed");
    cache.addPod(pi.pod);
    expect(cache.isAssumedPod(pi.pod)).toBe(false);
  });

  it('counts image presence across nodes', () => {
    const cache = new SchedulerCache();
    cache.addNode(makeNode('n1', { images: [{ names: ['nginx'], sizeBytes: 1 }] }));
    cache.addNode(makeNode('n2', { images: [{ names: ['nginx:latest', 'redis:7'], sizeBytes: 1 }] }));
    const snap = new Snapshot();
    cache.updateSnapshot(snap);
    expect(Object.fromEntries(snap.imageNumNodes)).toEqual({ 'nginx:latest': 2, 'redis:7': 1 });
    cache.removeNode(makeNode('n2', { images: [{ names: ['nginx:latest', 'redis:7'], sizeBytes: 1 }] }));
    cache.updateSnapshot(snap);
    expect(Object.fromEntries(snap.imageNumNodes)).toEqual({ 'nginx:latest': 1 });
  });

  it.each([
    { name: 'one zone', zones: [['a', 'n1'], ['a', 'n2']], want: ['n1', 'n2'] },
    { name: 'uneven zones', zones: [['a', 'a1'], ['a', 'a2'], ['a', 'a3'], ['b', 'b1']], want: ['a1', 'b1', 'a2', 'a3'] },
  ])('NodeTree: $name', ({ zones, want }) => {
    const t = new NodeTree();
    for (const [z, n] of zones) t.add(zoned(n, z));
    expect(t.list()).toEqual(want);
  });
});
