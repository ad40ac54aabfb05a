import { mergeNodeSelector, parseNodeSelector } from './pod-node-selector';

describe('PodNodeSelector', () => {
  it.each([
    { name: 'namespace selector added', pod: undefined, ns: 'env=prod', want: { env: 'prod' } },
    { name: 'merged with the pod', pod: { disk: 'ssd' }, ns: 'env=prod,zone=a', want: { disk: 'ssd', env: 'prod', zone: 'a' } },
    { name: 'same value agrees', pod: { env: 'prod' }, ns: 'env=prod', want: { env: 'prod' } },
    { name: 'conflict', pod: { env: 'dev' }, ns: 'env=prod', want: undefined },
    { name: 'empty annotation', pod: { a: 'b' }, ns: '', want: { a: 'b' } },
  ])('$name', ({ pod, ns, want }) => {
    expect(mergeNodeSelector(pod as Record<string, string> | undefined, parseNodeSelector(ns))).toEqual(want);
  });

  it('refuses a selector that is not a set of equalities', () => {
    expect(() => parseNodeSelector('env in (a,b)')).toThrow(/invalid node selector/);
  });
});
