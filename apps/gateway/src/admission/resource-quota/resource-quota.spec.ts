import { quotaMatches, quotaUsage, type ResourceQuota } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { quotaRefusal, usageDelta } from './resource-quota';

const pods = { group: '', version: 'v1', resource: 'pods' };
const pod = (requests: Record<string, string> = {}, limits: Record<string, string> = {}, spec: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', resources: { requests, limits } }], ...spec } }) as KubeObject;
const quota = (hard: Record<string, string>, used: Record<string, string> = {}, spec: Record<string, unknown> = {}, status = true): ResourceQuota => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'q' },
  spec: { hard, ...spec },
  ...(status ? { status: { hard, used } } : {}),
});
const text = (m: Map<string, { toString(): string }>) => Object.fromEntries([...m].map(([k, v]) => [k, v.toString()]));

describe('quota usage of an object', () => {
  it.each([
    { name: 'pod', group: '', resource: 'pods', obj: pod({ cpu: '100m', memory: '1Gi' }, { cpu: '1' }), want: { 'count/pods': '1', pods: '1', 'requests.cpu': '100m', cpu: '100m', 'requests.memory': '1Gi', memory: '1Gi', 'limits.cpu': '1' } },
    { name: 'finished pod uses nothing', group: '', resource: 'pods', obj: { ...pod(), status: { phase: 'Succeeded' } } as KubeObject, want: {} },
    { name: 'config map', group: '', resource: 'configmaps', obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } as KubeObject, want: { 'count/configmaps': '1', configmaps: '1' } },
    { name: 'deployment (both group spellings)', group: 'apps', resource: 'deployments', obj: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } } as KubeObject, want: { 'count/deployments.apps': '1' } },
    { name: 'ingress', group: 'networking.orch.io', resource: 'ingresses', obj: { apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name: 'i' } } as KubeObject, want: { 'count/ingresses.networking.orch.io': '1', 'count/ingresses.networking.k8s.io': '1' } },
    { name: 'node port service', group: '', resource: 'services', obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type: 'NodePort', ports: [{}, {}] } } as KubeObject, want: { 'count/services': '1', services: '1', 'services.nodeports': '2' } },
    { name: 'claim', group: '', resource: 'persistentvolumeclaims', obj: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { resources: { requests: { storage: '5Gi' } } } } as KubeObject, want: { 'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1', 'requests.storage': '5Gi' } },
  ])('$name', ({ group, resource, obj, want }) => {
    expect(text(quotaUsage(group, resource, obj))).toEqual(want);
  });
});

describe('quota scopes', () => {
  it.each([
    { name: 'no scopes: everything', spec: {}, obj: pod(), want: true },
    { name: 'BestEffort: pod without resources', spec: { scopes: ['BestEffort'] }, obj: pod(), want: true },
    { name: 'BestEffort: not a pod with requests', spec: { scopes: ['BestEffort'] }, obj: pod({ cpu: '1' }), want: false },
    { name: 'NotBestEffort', spec: { scopes: ['NotBestEffort'] }, obj: pod({ cpu: '1' }), want: true },
    { name: 'Terminating', spec: { scopes: ['Terminating'] }, obj: pod({}, {}, { activeDeadlineSeconds: 10 }), want: true },
    { name: 'NotTerminating', spec: { scopes: ['NotTerminating'] }, obj: pod({}, {}, { activeDeadlineSeconds: 10 }), want: false },
    { name: 'PriorityClass In', spec: { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } }, obj: pod({}, {}, { priorityClassName: 'high' }), want: true },
    { name: 'scoped quotas ignore other resources', spec: { scopes: ['BestEffort'] }, obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } as KubeObject, want: false },
  ])('$name', ({ spec, obj, want }) => {
    expect(quotaMatches(quota({}, {}, spec), '', obj.kind === 'Pod' ? 'pods' : 'configmaps', obj)).toBe(want);
  });
});

describe('admission against a quota', () => {
  it.each([
    { name: 'fits', q: quota({ pods: '2' }, { pods: '1' }), obj: pod(), want: undefined },
    { name: 'exceeded', q: quota({ pods: '1' }, { pods: '1' }), obj: pod(), want: 'exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1' },
    {
      name: 'several exceeded',
      q: quota({ 'requests.cpu': '1', pods: '1', 'requests.memory': '1Gi', 'limits.cpu': '2', 'limits.memory': '2Gi' }, { 'requests.cpu': '900m', pods: '1' }),
      obj: pod({ cpu: '200m', memory: '1Mi' }, { cpu: '1', memory: '1Mi' }),
      want: 'exceeded quota: q, requested: pods=1,requests.cpu=200m, used: pods=1,requests.cpu=900m, limited: pods=1,requests.cpu=1',
    },
    { name: 'compute constrained but not declared', q: quota({ 'limits.cpu': '2' }), obj: pod(), want: 'failed quota: q: must specify limits.cpu for: c' },
    { name: 'status not computed yet', q: quota({ pods: '1' }, {}, {}, false), obj: pod(), want: 'status unknown for quota: q, resources: pods' },
    { name: 'not constrained', q: quota({ 'count/secrets': '1' }), obj: pod(), want: undefined },
  ])('$name', ({ q, obj, want }) => {
    expect(quotaRefusal(q, usageDelta(pods, obj, undefined), obj, true)).toBe(want);
  });

  it('charges an update only what it adds', () => {
    const svc = (type: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type, ports: [{}] } }) as KubeObject;
    expect(text(usageDelta({ group: '', version: 'v1', resource: 'services' }, svc('LoadBalancer'), svc('ClusterIP')))).toEqual({ 'services.loadbalancers': '1', 'services.nodeports': '1' });
  });
});
