import { mergeNodeSelector, parseNodeSelector, podNodeSelectorConfiguration, withinNodeSelectorWhitelist } from './pod-node-selector';

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

  it.each<{ name: string; labels: Record<string, string>; whitelist?: Record<string, string>; want: boolean }>([
    { name: 'an empty whitelist allows all', labels: { a: 'b' }, whitelist: {}, want: true },
    { name: 'no whitelist allows all', labels: { a: 'b' }, whitelist: undefined, want: true },
    { name: 'labels within', labels: { env: 'prod' }, whitelist: { env: 'prod', zone: 'a' }, want: true },
    { name: 'another value', labels: { env: 'dev' }, whitelist: { env: 'prod' }, want: false },
    { name: 'another key', labels: { disk: 'ssd' }, whitelist: { env: 'prod' }, want: false },
  ])('whitelist: $name', ({ labels, whitelist, want }) => {
    expect(withinNodeSelectorWhitelist(labels, whitelist)).toBe(want);
  });
});

describe('podNodeSelectorPluginConfig', () => {
  it('reads the cluster default and the namespace whitelists', () => {
    const c = podNodeSelectorConfiguration({ podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'pool=general', team: 'pool=team,disk=ssd' } });
    expect(c.clusterDefault).toEqual({ pool: 'general' });
    expect([...c.whitelists]).toEqual([['team', { pool: 'team', disk: 'ssd' }]]);
    expect(podNodeSelectorConfiguration(undefined)).toEqual({ clusterDefault: {}, whitelists: new Map() });
  });

  it.each([
    { name: 'not a map', doc: { podNodeSelectorPluginConfig: ['a=b'] }, want: 'podNodeSelectorPluginConfig: must be a map of names to node selectors' },
    { name: 'not a string', doc: { podNodeSelectorPluginConfig: { team: 3 } }, want: 'podNodeSelectorPluginConfig.team: must be a string' },
    { name: 'not equalities', doc: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env in (a)' } }, want: 'podNodeSelectorPluginConfig.clusterDefaultNodeSelector: invalid node selector' },
  ])('refuses $name', ({ doc, want }) => {
    expect(() => podNodeSelectorConfiguration(doc, 'cfg: plugin PodNodeSelector')).toThrow(`cfg: plugin PodNodeSelector: invalid admission configuration: ${want}`);
  });
});
