import { parseLabelSelector } from '@orch/apimachinery';
import type { Pod } from './api';
import { SchedulerCache } from './cache';
import { Snapshot } from './snapshot';
import { makeNode, makePod } from './testing';
import { selectorAnchors } from './affinity-index';

const anti = (name: string, node: string, app: string): Pod =>
  makePod(name, {
    nodeName: node,
    labels: { app: name },
    spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app } }, topologyKey: 'k' }] } } },
  });

describe('AffinityIndex', () => {
  it.each([
    { sel: 'a=1', want: ['a=1'] },
    { sel: 'a in (1,2),b=3', want: ['a=1', 'a=2'] },
    { sel: 'a!=1,b=2', want: ['b=2'] },
    { sel: 'a notin (1),!b', want: undefined },
    { sel: '', want: undefined },
  ])('anchors of "$sel"', ({ sel, want }) => {
    expect(selectorAnchors(parseLabelSelector(sel))).toEqual(want);
  });

  it('follows the cache through snapshot updates', () => {
    const cache = new SchedulerCache();
    cache.addNode(makeNode('n1'));
    cache.addNode(makeNode('n2'));
    cache.addPod(makePod('web1', { nodeName: 'n1', labels: { app: 'web' } }));
    cache.addPod(anti('guard', 'n2', 'web'));
    const snap = new Snapshot();
    cache.updateSnapshot(snap);
    const idx = snap.affinityIndex;
    const names = (it: Iterable<{ name: string }>): string[] => [...it].map((p) => p.name).sort();
    expect(names(idx.podsWithAnchors(['app=web']))).toEqual(['web1']);
    expect([...idx.requiredAnti.candidates({ app: 'web' })].map((r) => r.pod.name)).toEqual(['guard']);
    expect([...idx.requiredAnti.candidates({ app: 'db' })]).toEqual([]);

    cache.addPod(makePod('web2', { nodeName: 'n2', labels: { app: 'web' } }));
    cache.removePod(makePod('web1', { nodeName: 'n1' }));
    cache.removeNode(makeNode('n2'));
    cache.updateSnapshot(snap);
    // n2 is gone from the snapshot, and with it web2 and guard.
    expect(names(idx.podsWithAnchors(['app=web']))).toEqual([]);
    expect([...idx.requiredAnti.candidates({ app: 'web' })]).toEqual([]);
  });
});
