import { Catalog, parseRuntimeConfig, type CustomResourceInfo, type ResourceDef } from '@orch/api';
import { deprecationWarning } from './deprecation';

/** A version of the CRD widgets.example.com (uid w1). */
function widget(version: string, custom: Partial<CustomResourceInfo> = {}): ResourceDef {
  return {
    group: 'example.com',
    version,
    resource: 'widgets',
    kind: 'Widget',
    listKind: 'WidgetList',
    singular: 'widget',
    shortNames: [],
    scope: 'Namespaced',
    verbs: ['get', 'list'],
    subresources: [],
    categories: [],
    enabledByDefault: true,
    virtual: false,
    custom: { crdName: 'widgets.example.com', crdUid: 'w1', crdGeneration: 1, schema: {}, versions: [], storageVersion: 'v1', conversion: { strategy: 'None' }, printerColumns: [], selectableFields: [], deprecated: false, terminating: false, ...custom } as CustomResourceInfo,
  };
}

describe('deprecationWarning (upstream texts)', () => {
  const catalog = new Catalog(undefined, parseRuntimeConfig('storage.orch.io/v1beta1/csistoragecapacities=true'));
  for (const def of [widget('v1alpha1', { deprecated: true }), widget('v1beta1', { deprecated: true }), widget('v1'), widget('v2beta1'), widget('v3', { deprecated: true, deprecationWarning: 'v3 was a mistake' })]) catalog.register(def);
  const builtin = (group: string, version: string, resource: string) => catalog.lookup(group, version, resource)!;

  it.each<{ name: string; def: () => ResourceDef; requested: string; want: string | undefined }>([
    // built-ins (prerelease lifecycle)
    { name: 'a GA version is not deprecated', def: () => builtin('', 'v1', 'pods'), requested: '', want: undefined },
    { name: 'ComponentStatus', def: () => builtin('', 'v1', 'componentstatuses'), requested: '', want: 'v1 ComponentStatus is deprecated in v1.19+' },
    {
      name: 'a removed beta with its replacement',
      def: () => builtin('storage.orch.io', 'v1beta1', 'csistoragecapacities'),
      requested: 'storage.orch.io',
      want: 'storage.orch.io/v1beta1 CSIStorageCapacity is deprecated in v1.24+, unavailable in v1.27+; use storage.orch.io/v1 CSIStorageCapacity',
    },
    {
      name: 'asked under the k8s.io name, answered in it',
      def: () => builtin('storage.orch.io', 'v1beta1', 'csistoragecapacities'),
      requested: 'storage.k8s.io',
      want: 'storage.k8s.io/v1beta1 CSIStorageCapacity is deprecated in v1.24+, unavailable in v1.27+; use storage.k8s.io/v1 CSIStorageCapacity',
    },
    // custom resources (apiextensions defaultDeprecationWarning)
    { name: 'a served CRD version', def: () => widget('v1'), requested: 'example.com', want: undefined },
    { name: 'a deprecated CRD version names the newest newer served one', def: () => widget('v1beta1', { deprecated: true }), requested: 'example.com', want: 'example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget' },
    { name: 'deprecated versions are never suggested', def: () => widget('v1alpha1', { deprecated: true }), requested: 'example.com', want: 'example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget' },
    { name: 'the CRD\'s own deprecationWarning', def: () => widget('v3', { deprecated: true, deprecationWarning: 'v3 was a mistake' }), requested: 'example.com', want: 'v3 was a mistake' },
    { name: 'no newer version: the message alone', def: () => widget('v4', { deprecated: true }), requested: 'example.com', want: 'example.com/v4 Widget is deprecated' },
  ])('$name', ({ def, requested, want }) => {
    expect(deprecationWarning(def(), requested, catalog)).toBe(want);
  });
});
