import { childNode, itemNode, listSemantics, rootNode } from './semantics';

const CRD = ['apiextensions.orch.io', 'v1', 'CustomResourceDefinition'] as const;

describe('listSemantics', () => {
  it.each([
    { name: 'pod containers', gvk: ['', 'v1', 'Pod'], path: 'spec.containers', want: { listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' } },
    {
      name: 'container ports through an index',
      gvk: ['', 'v1', 'Pod'],
      path: 'spec.containers[0].ports',
      want: { listType: 'map', listMapKeys: ['containerPort', 'protocol'], patchMergeKey: 'containerPort' },
    },
    { name: 'path as segments', gvk: ['', 'v1', 'Pod'], path: ['spec', 'containers', 3, 'env'], want: { listType: 'map', listMapKeys: ['name'], patchMergeKey: 'name' } },
    { name: 'deployment template volumes', gvk: ['apps', 'v1', 'Deployment'], path: 'spec.template.spec.volumes', want: { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' } },
    { name: 'deployment strategy', gvk: ['apps', 'v1', 'Deployment'], path: 'spec.strategy', want: { patchStrategy: 'retainKeys' } },
    { name: 'finalizers', gvk: ['apps', 'v1', 'Deployment'], path: 'metadata.finalizers', want: { listType: 'set', patchStrategy: 'merge', type: { array: 'string' } } },
    { name: 'owner references', gvk: ['', 'v1', 'ConfigMap'], path: 'metadata.ownerReferences', want: { listType: 'map', listMapKeys: ['uid'], patchMergeKey: 'uid' } },
    { name: 'owner reference item is atomic', gvk: ['', 'v1', 'ConfigMap'], path: 'metadata.ownerReferences[0]', want: { structType: 'atomic' } },
    { name: 'node podCIDRs', gvk: ['', 'v1', 'Node'], path: 'spec.podCIDRs', want: { listType: 'set', patchStrategy: 'merge' } },
    { name: 'atomic node selector map', gvk: ['', 'v1', 'Pod'], path: 'spec.nodeSelector', want: { mapType: 'atomic', type: { map: 'string' } } },
    { name: 'limits map of quantities', gvk: ['', 'v1', 'Pod'], path: 'spec.containers[0].resources.limits', want: { type: { map: 'quantity' } } },
    { name: 'map value', gvk: ['', 'v1', 'Pod'], path: 'spec.containers[0].resources.limits.cpu', want: { type: 'quantity' } },
    { name: 'field of an inline struct', gvk: ['', 'v1', 'Pod'], path: 'spec.volumes[0].configMap.items', want: { listType: 'atomic' } },
    {
      name: 'field of an inline rule',
      gvk: ['admissionregistration.orch.io', 'v1', 'ValidatingWebhookConfiguration'],
      path: 'webhooks[0].rules[0].apiGroups',
      want: { listType: 'atomic' },
    },
    { name: 'service ports', gvk: ['', 'v1', 'Service'], path: 'spec.ports', want: { listMapKeys: ['port', 'protocol'], patchMergeKey: 'port' } },
    { name: 'pod conditions', gvk: ['', 'v1', 'Pod'], path: 'status.conditions', want: { listType: 'map', listMapKeys: ['type'] } },
    {
      name: 'recursive JSON schema',
      gvk: CRD,
      path: 'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-validations',
      want: { listType: 'map', listMapKeys: ['rule'], patchMergeKey: 'rule' },
    },
    { name: 'JSON schema items array alternative', gvk: CRD, path: 'spec.versions[0].schema.openAPIV3Schema.items[1].required', want: { listType: 'atomic' } },
  ])('$name', ({ gvk, path, want }) => {
    const [group, version, kind] = gvk;
    expect(listSemantics(group, version, kind, path)).toMatchObject(want);
  });

  it.each([
    { name: 'unknown field', path: 'spec.bogus' },
    { name: 'into a scalar', path: 'spec.replicas.x' },
    { name: 'index into an object', path: 'spec.template[0]' },
  ])('is undefined for $name', ({ path }) => {
    expect(listSemantics('apps', 'v1', 'Deployment', path)).toBeUndefined();
  });

  it('walks node by node', () => {
    const root = rootNode('', 'v1', 'Pod')!;
    const containers = childNode(childNode(root, 'spec')!, 'containers')!;
    expect(containers.field?.patchMergeKey).toBe('name');
    expect(itemNode(containers)?.type).toEqual({ ref: 'io.orch.api.core.v1.Container' });
    expect(itemNode(root)).toBeUndefined();
  });
});
