import { LabelSelector, parseLabelSelector } from '@orch/apimachinery';
import { makePod } from './testing';
import { labelMatcher, PodInfo } from './types';

describe('labelMatcher agrees with LabelSelector.matches', () => {
  const labelSets: Array<Record<string, string>> = [{}, { a: '1' }, { a: '2' }, { a: '1', b: 'x' }, { b: 'x' }, { n: '5' }, { n: '50' }, { constructor: 'x' }];
  it.each([
    { name: 'everything', sel: LabelSelector.everything() },
    { name: 'nothing', sel: LabelSelector.nothing() },
    ...['a=1', 'a==1', 'a!=1', 'a in (1,2)', 'a notin (1)', 'a', '!a', 'a=1,b=x', 'a in (1),!b', 'n>10', 'n<10', 'constructor=x', 'toString'].map((s) => ({
      name: s,
      sel: parseLabelSelector(s),
    })),
  ])('$name', ({ sel }) => {
    const m = labelMatcher(sel);
    expect(labelSets.map((l) => m(l))).toEqual(labelSets.map((l) => sel.matches(l)));
  });
});

describe('PodInfo', () => {
  it('parses requests and affinity once', () => {
    const pi = new PodInfo(
      makePod('p', {
        labels: { app: 'web', rev: '2' },
        requests: { cpu: '250m', memory: '64Mi' },
        spec: {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'k', matchLabelKeys: ['rev'] }],
            },
          },
        },
      }),
    );
    expect([pi.requests.milliCPU, pi.requests.memory, pi.nonZeroCPU, pi.nonZeroMemory]).toEqual([250, 64 * 1024 * 1024, 250, 64 * 1024 * 1024]);
    const term = pi.requiredAntiAffinityTerms[0];
    expect([...term.namespaces]).toEqual(['default']);
    expect(term.selector.toString()).toBe('app=web,rev in (2)');
    expect(pi.hasAffinity() && pi.hasRequiredAntiAffinity()).toBe(true);
    expect(pi.withNodeName('n1').requests).toBe(pi.requests);
  });

  it('records an invalid affinity selector instead of throwing', () => {
    const pi = new PodInfo(
      makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'bad key!': 'x' } }, topologyKey: 'k' }] } } } }),
    );
    expect(pi.parseError).toMatch(/^parsing pod affinity terms: invalid label selector/);
  });
});
