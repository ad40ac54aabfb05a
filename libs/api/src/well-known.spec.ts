import { jobPodLabels, mirrorUpstreamKeys, readWellKnown, upstreamKeysMissing, UPSTREAM_TWINS, withTwin } from './well-known';

describe('well-known keys and their upstream twins', () => {
  it('pairs every orch.io key with the kubernetes.io key of the same meaning', () => {
    for (const [key, twin] of Object.entries(UPSTREAM_TWINS)) {
      expect(key).toMatch(/(^|\.)orch\.io\//);
      expect(twin).toBe(key.replace(/(^|\.)orch\.io\//, '$1kubernetes.io/'));
    }
  });

  it.each<{ name: string; map?: Record<string, string>; want?: string }>([
    { name: 'the orch form wins', map: { 'deployment.orch.io/revision': '3', 'deployment.kubernetes.io/revision': '2' }, want: '3' },
    { name: 'the twin is read when the orch form is absent', map: { 'deployment.kubernetes.io/revision': '2' }, want: '2' },
    { name: 'absent', map: {}, want: undefined },
    { name: 'no map', map: undefined, want: undefined },
  ])('readWellKnown: $name', ({ map, want }) => {
    expect(readWellKnown(map, 'deployment.orch.io/revision')).toBe(want);
  });

  it.each<{ name: string; map: Record<string, string>; enabled: boolean; want: Record<string, string>; changed: boolean }>([
    { name: 'adds the twin', map: { 'orch.io/service-name': 'web', other: 'x' }, enabled: true, want: { 'orch.io/service-name': 'web', 'kubernetes.io/service-name': 'web', other: 'x' }, changed: true },
    { name: 'corrects a stale twin', map: { 'orch.io/service-name': 'web', 'kubernetes.io/service-name': 'old' }, enabled: true, want: { 'orch.io/service-name': 'web', 'kubernetes.io/service-name': 'web' }, changed: true },
    { name: 'nothing to do', map: { 'orch.io/service-name': 'web', 'kubernetes.io/service-name': 'web' }, enabled: true, want: { 'orch.io/service-name': 'web', 'kubernetes.io/service-name': 'web' }, changed: false },
    { name: 'compatibility off', map: { 'orch.io/service-name': 'web' }, enabled: false, want: { 'orch.io/service-name': 'web' }, changed: false },
  ])('mirrorUpstreamKeys: $name', ({ map, enabled, want, changed }) => {
    const copy = { ...map };
    expect(upstreamKeysMissing(map, enabled)).toBe(changed);
    expect(mirrorUpstreamKeys(copy, enabled)).toBe(changed);
    expect(copy).toEqual(want);
  });

  it.each<{ name: string; upstreamTwins: boolean; want: Record<string, string> }>([
    {
      name: 'compatibility off',
      upstreamTwins: false,
      want: { 'job-name': 'pi', 'batch.orch.io/job-name': 'pi', 'controller-uid': 'u1', 'batch.orch.io/controller-uid': 'u1' },
    },
    {
      name: 'compatibility on: the batch.kubernetes.io twins too',
      upstreamTwins: true,
      want: {
        'job-name': 'pi',
        'batch.orch.io/job-name': 'pi',
        'controller-uid': 'u1',
        'batch.orch.io/controller-uid': 'u1',
        'batch.kubernetes.io/job-name': 'pi',
        'batch.kubernetes.io/controller-uid': 'u1',
      },
    },
  ])('jobPodLabels: $name', ({ upstreamTwins, want }) => {
    expect(jobPodLabels({ metadata: { name: 'pi', uid: 'u1' } }, upstreamTwins)).toEqual(want);
  });

  it('withTwin lists a key with its twin, or alone', () => {
    expect(withTwin('orch.io/service-name')).toEqual(['orch.io/service-name', 'kubernetes.io/service-name']);
    expect(withTwin('pod-template-hash')).toEqual(['pod-template-hash']);
  });
});
