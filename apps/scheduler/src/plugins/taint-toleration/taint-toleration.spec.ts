import type { Taint, Toleration } from '../../framework/api';
import { CycleState } from '../../framework/cycle-state';
import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { TaintToleration } from './taint-toleration';

describe('TaintToleration', () => {
  describe('filter', () => {
    it.each<{ name: string; taints: Taint[]; tolerations?: Toleration[]; want: string; reason?: string }>([
      { name: 'no taints', taints: [], want: 'Success' },
      { name: 'untolerated NoSchedule', taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }], want: 'UnschedulableAndUnresolvable', reason: 'node(s) had untolerated taint {a: b}' },
      { name: 'untolerated NoExecute', taints: [{ key: 'a', effect: 'NoExecute' }], want: 'UnschedulableAndUnresolvable', reason: 'node(s) had untolerated taint {a: }' },
      { name: 'PreferNoSchedule never rejects', taints: [{ key: 'a', effect: 'PreferNoSchedule' }], want: 'Success' },
      { name: 'Equal toleration', taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }], tolerations: [{ key: 'a', operator: 'Equal', value: 'b', effect: 'NoSchedule' }], want: 'Success' },
      { name: 'Equal with other value', taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }], tolerations: [{ key: 'a', value: 'c' }], want: 'UnschedulableAndUnresolvable' },
      { name: 'Exists with empty effect', taints: [{ key: 'a', value: 'b', effect: 'NoExecute' }], tolerations: [{ key: 'a', operator: 'Exists' }], want: 'Success' },
      { name: 'empty key Exists tolerates all', taints: [{ key: 'x', effect: 'NoSchedule' }, { key: 'y', effect: 'NoExecute' }], tolerations: [{ operator: 'Exists' }], want: 'Success' },
      { name: 'one of two tolerated', taints: [{ key: 'x', effect: 'NoSchedule' }, { key: 'y', effect: 'NoSchedule' }], tolerations: [{ key: 'x', operator: 'Exists' }], want: 'UnschedulableAndUnresolvable', reason: 'node(s) had untolerated taint {y: }' },
    ])('$name', ({ taints, tolerations, want, reason }) => {
      const s = new TaintToleration().filter(new CycleState(), new PodInfo(makePod('p', { spec: { tolerations } })), makeNodeInfo(makeNode('n', { taints })));
      expect(s.code).toBe(want);
      if (reason) expect(s.reasons).toEqual([reason]);
    });
  });

  describe('score', () => {
    const prefer = (key: string): Taint => ({ key, value: 'v', effect: 'PreferNoSchedule' });
    it.each<{ name: string; nodes: Taint[][]; tolerations?: Toleration[]; want: number[] }>([
      { name: 'no taints anywhere: all max', nodes: [[], []], want: [100, 100] },
      { name: 'fewer intolerable taints score higher', nodes: [[], [prefer('a')], [prefer('a'), prefer('b')]], want: [100, 50, 0] },
      { name: 'tolerated PreferNoSchedule does not count', nodes: [[prefer('a')], [prefer('b')]], tolerations: [{ key: 'a', operator: 'Exists', effect: 'PreferNoSchedule' }], want: [100, 0] },
      { name: 'NoSchedule tolerations do not help scoring', nodes: [[prefer('a')], []], tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoSchedule' }], want: [0, 100] },
    ])('$name', ({ nodes, tolerations, want }) => {
      const pl = new TaintToleration();
      const state = new CycleState();
      const pod = new PodInfo(makePod('p', { spec: { tolerations } }));
      const infos = nodes.map((taints, i) => makeNodeInfo(makeNode(`n${i}`, { taints })));
      expect(pl.preScore(state, pod).code).toBe('Success');
      const scores = infos.map((n) => pl.score(state, pod, n) as number);
      pl.normalizeScore(state, pod, infos, scores);
      expect(scores).toEqual(want);
    });
  });
});
