import type { KubeObject } from '@orch/apimachinery';
import type { AdmissionAttributes, AdmissionResource } from '../../pipeline/admit';
import type { AdmissionState } from '../admission-state';
import { DefaultIngressClass, DefaultStorageClass, defaultClass, INGRESS_CLASS_DEFAULT_KEYS, STORAGE_CLASS_DEFAULT_KEYS } from './default-class';

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

describe('the default-class plugins', () => {
  const marked = (name: string, key: string) => cls(name, { [key]: 'true' }, '2024-01-01T00:00:00Z');
  const state = {
    cache: (group: string, resource: string) => ({
      list: (): KubeObject[] => ({ 'storage.orch.io/storageclasses': [marked('fast', 'storageclass.orch.io/is-default-class')], 'networking.orch.io/ingressclasses': [marked('nginx', 'ingressclass.orch.io/is-default-class')] })[`${group}/${resource}` as 'storage.orch.io/storageclasses'] ?? [],
    }),
  } as unknown as AdmissionState;
  const storage = new DefaultStorageClass(state);
  const ingress = new DefaultIngressClass(state);
  const obj = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({ metadata: { name: 'x', ...(annotations ? { annotations } : {}) }, spec }) as unknown as KubeObject;

  it.each([
    { name: 'claim without a class gets the default', plugin: storage, object: obj({}), want: { storageClassName: 'fast' } },
    { name: 'claim with "" keeps no class', plugin: storage, object: obj({ storageClassName: '' }), want: { storageClassName: '' } },
    { name: 'claim with a class keeps it', plugin: storage, object: obj({ storageClassName: 'slow' }), want: { storageClassName: 'slow' } },
    { name: 'ingress without a class gets the default', plugin: ingress, object: obj({}), want: { ingressClassName: 'nginx' } },
    { name: 'ingress with the legacy annotation keeps no class', plugin: ingress, object: obj({}, { 'kubernetes.io/ingress.class': 'other' }), want: {} },
    { name: 'ingress with a class keeps it', plugin: ingress, object: obj({ ingressClassName: 'a' }), want: { ingressClassName: 'a' } },
  ])('$name', ({ plugin, object, want }) => {
    plugin.mutate({ operation: 'CREATE', object } as AdmissionAttributes);
    expect((object as unknown as { spec: unknown }).spec).toEqual(want);
  });

  it.each([
    { plugin: storage, name: 'DefaultStorageClass', group: '', resource: 'persistentvolumeclaims' },
    { plugin: ingress, name: 'DefaultIngressClass', group: 'networking.orch.io', resource: 'ingresses' },
  ])('$name handles creates of $resource only', ({ plugin, name, group, resource }) => {
    expect(plugin.name).toBe(name);
    expect(plugin.handles('CREATE', { group, resource } as AdmissionResource, '')).toBe(true);
    expect(plugin.handles('UPDATE', { group, resource } as AdmissionResource, '')).toBe(false);
    expect(plugin.handles('CREATE', { group, resource: 'pods' } as AdmissionResource, '')).toBe(false);
  });
});
