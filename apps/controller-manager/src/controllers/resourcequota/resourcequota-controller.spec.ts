import type { ResourceQuota } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { countUsage } from './resourcequota-controller';

const pod = (name: string, cpu?: string, phase = 'Running', scope: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [{ name: 'c', resources: cpu ? { requests: { cpu } } : {} }], ...scope }, status: { phase } }) as KubeObject;
const quota = (hard: Record<string, string>, spec: Record<string, unknown> = {}): ResourceQuota => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' }, spec: { hard, ...spec } });

describe('quota recount', () => {
  it.each([
    { name: 'pods and cpu', q: quota({ pods: '10', 'requests.cpu': '4' }), pods: [pod('a', '500m'), pod('b', '1')], want: { pods: '2', 'requests.cpu': '1500m' } },
    { name: 'finished pods give usage back', q: quota({ pods: '10' }), pods: [pod('a'), pod('b', undefined, 'Succeeded'), pod('c', undefined, 'Failed')], want: { pods: '1' } },
    { name: 'scoped quota counts its scope only', q: quota({ pods: '10' }, { scopes: ['BestEffort'] }), pods: [pod('a'), pod('b', '1')], want: { pods: '1' } },
    { name: 'nothing counted', q: quota({ pods: '10' }), pods: [], want: { pods: '0' } },
  ])('$name', ({ q, pods, want }) => {
    const hard = q.spec!.hard!;
    const zero = Object.fromEntries(Object.keys(hard).map((k) => [k, '0']));
    expect(countUsage(q, { group: '', resource: 'pods' }, pods, zero, hard)).toEqual(want);
  });
});
