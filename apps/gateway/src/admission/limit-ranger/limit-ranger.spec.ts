import type { KubeObject } from '@orch/apimachinery';
import type { LimitRange, LimitRangeItem } from '../api';
import { aggregate, applyDefaults, claimViolations, podViolations } from './limit-ranger';

const range = (...limits: LimitRangeItem[]): LimitRange => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' }, spec: { limits } });
type Res = { limits?: Record<string, string>; requests?: Record<string, string> };
const pod = (...resources: Res[]) =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: resources.map((r, i) => ({ name: `c${i}`, image: 'x', resources: r })) } }) as KubeObject & { spec: { containers: { name: string; resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }[] } };

describe('LimitRanger defaults', () => {
  const defaults = range({ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m' } });
  it.each([
    { name: 'nothing set: both defaulted', given: {}, want: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } }, notes: ['cpu request for container c0', 'cpu, memory limit for container c0'] },
    { name: 'own values kept', given: { limits: { cpu: '1' }, requests: { cpu: '200m' } }, want: { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '200m' } }, notes: ['memory limit for container c0'] },
  ])('$name', ({ given, want, notes }) => {
    const p = pod(given as Res);
    expect(applyDefaults(p, [defaults])).toEqual(notes);
    expect(p.spec.containers[0].resources).toEqual(want);
  });
});

describe('LimitRanger bounds', () => {
  it.each([
    { name: 'within bounds', ranges: [range({ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' } })], res: { requests: { cpu: '200m' }, limits: { cpu: '500m' } }, want: [] },
    { name: 'below min', ranges: [range({ type: 'Container', min: { cpu: '100m' } })], res: { requests: { cpu: '50m' } }, want: ['minimum cpu usage per Container is 100m, but request is 50m'] },
    { name: 'no request under a min', ranges: [range({ type: 'Container', min: { memory: '1Mi' } })], res: {}, want: ['minimum memory usage per Container is 1Mi.  No request is specified'] },
    { name: 'above max', ranges: [range({ type: 'Container', max: { cpu: '1' } })], res: { limits: { cpu: '2' } }, want: ['maximum cpu usage per Container is 1, but limit is 2'] },
    { name: 'no limit under a max', ranges: [range({ type: 'Container', max: { cpu: '1' } })], res: {}, want: ['maximum cpu usage per Container is 1.  No limit is specified'] },
    { name: 'ratio', ranges: [range({ type: 'Container', maxLimitRequestRatio: { cpu: '2' } })], res: { requests: { cpu: '100m' }, limits: { cpu: '300m' } }, want: ['cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000'] },
    { name: 'pod total', ranges: [range({ type: 'Pod', max: { memory: '1Gi' } })], res: { limits: { memory: '768Mi' } }, twice: true, want: ['maximum memory usage per Pod is 1Gi, but limit is 1536Mi'] },
  ])('$name', ({ ranges, res, twice, want }) => {
    const r = res as Res;
    expect(podViolations(twice ? pod(r, r) : pod(r), ranges)).toEqual(want);
  });

  it('bounds claims by storage', () => {
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { resources: { requests: { storage: '5Gi' } } } } as KubeObject;
    expect(claimViolations(claim, [range({ type: 'PersistentVolumeClaim', max: { storage: '1Gi' } })])).toEqual(['maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 5Gi']);
  });

  it('aggregates several errors as upstream', () => {
    expect(aggregate(['a'])).toBe('a');
    expect(aggregate(['a', 'b'])).toBe('[a, b]');
  });
});
