import { PriorityResolver } from './priority';
import { makePod } from './testing';

describe('PriorityResolver', () => {
  const r = new PriorityResolver();
  r.set({ metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' });
  r.set({ metadata: { name: 'default' }, value: 10, globalDefault: true });
  it.each([
    { name: 'explicit priority wins', pod: makePod('p', { priority: 5, spec: { priorityClassName: 'high' } }), want: [5, undefined] },
    { name: 'from the named class', pod: makePod('p', { spec: { priorityClassName: 'high' } }), want: [1000, 'Never'] },
    { name: 'global default', pod: makePod('p'), want: [10, undefined] },
    { name: 'unknown class', pod: makePod('p', { spec: { priorityClassName: 'nope' } }), want: [0, undefined] },
  ])('$name', ({ pod, want }) => {
    const got = r.resolve(pod);
    expect([got.spec.priority, got.spec.preemptionPolicy]).toEqual(want);
  });
});
