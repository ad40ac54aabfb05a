import { CycleState } from '../../framework/cycle-state';
import type { BindFunction, Handle } from '../../framework/interface';
import { makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { DefaultBinder } from './default-binder';

describe('DefaultBinder', () => {
  it.each<{ name: string; fails?: boolean; noFunction?: boolean; want: string; reason?: string; wantCalls: string[] }>([
    { name: 'binds through the function', want: 'Success', wantCalls: ['p→n1'] },
    { name: 'a failed bind is an error', fails: true, want: 'Error', reason: 'conflict: pod already bound', wantCalls: ['p→n1'] },
    { name: 'no bind function is an error', noFunction: true, want: 'Error', reason: 'no bind function configured', wantCalls: [] },
  ])('$name', async ({ fails, noFunction, want, reason, wantCalls }) => {
    const calls: string[] = [];
    const bind: BindFunction = async (pod, node) => {
      calls.push(`${pod.metadata.name}→${node}`);
      if (fails) throw new Error('conflict: pod already bound');
    };
    const pl = new DefaultBinder({ bindFunction: noFunction ? undefined : bind } as Handle);
    const s = await pl.bind(new CycleState(), new PodInfo(makePod('p')), 'n1');
    expect(s.code).toBe(want);
    if (reason) expect(s.reasons).toEqual([reason]);
    expect(calls).toEqual(wantCalls);
  });
});
