import type { KubeObject } from '@orch/apimachinery';
import { defaultClass, INGRESS_CLASS_DEFAULT_KEYS, STORAGE_CLASS_DEFAULT_KEYS } from './default-class';

const cls = (name: string, annotations: Record<string, string>, created: string) => ({ apiVersion: 'v1', kind: 'X', metadata: { name, annotations, creationTimestamp: created } }) as KubeObject;

describe('DefaultStorageClass and DefaultIngressClass', () => {
  it.each([
    { name: 'orch spelling', keys: STORAGE_CLASS_DEFAULT_KEYS, classes: [cls('a', {}, '1'), cls('b', { 'storageclass.orch.io/is-default-class': 'true' }, '1')], want: 'b' },
    { name: 'upstream spelling', keys: STORAGE_CLASS_DEFAULT_KEYS, classes: [cls('a', { 'storageclass.kubernetes.io/is-default-class': 'true' }, '1')], want: 'a' },
    { name: 'beta spelling', keys: STORAGE_CLASS_DEFAULT_KEYS, classes: [cls('a', { 'storageclass.beta.kubernetes.io/is-default-class': 'true' }, '1')], want: 'a' },
    { name: '"false" is not default', keys: STORAGE_CLASS_DEFAULT_KEYS, classes: [cls('a', { 'storageclass.orch.io/is-default-class': 'false' }, '1')], want: undefined },
    { name: 'several: the newest', keys: INGRESS_CLASS_DEFAULT_KEYS, classes: [cls('old', { 'ingressclass.orch.io/is-default-class': 'true' }, '2024-01-01T00:00:00Z'), cls('new', { 'ingressclass.kubernetes.io/is-default-class': 'true' }, '2024-06-01T00:00:00Z')], want: 'new' },
    { name: 'none', keys: INGRESS_CLASS_DEFAULT_KEYS, classes: [], want: undefined },
  ])('$name', ({ keys, classes, want }) => {
    expect(defaultClass(classes, keys)?.metadata.name).toBe(want);
  });
});
