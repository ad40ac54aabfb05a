import type { KubeObject } from '@orch/apimachinery';
import { isNotFound, type ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, type ControllerCluster } from './support/cluster';

// The garbage collector and the namespace controller with custom kinds they learn through
// discovery: a CRD created after the controller-manager started is collected and cleaned up.

const CRDS = { group: 'apiextensions.orch.io', version: 'v1', resource: 'customresourcedefinitions' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const WIDGETS = { group: 'gc.example.com', version: 'v1', resource: 'widgets', kind: 'Widget', listKind: 'WidgetList', singular: 'widget', shortNames: [], scope: 'Namespaced' as const, verbs: [], subresources: [], categories: [], enabledByDefault: true, virtual: false };

const crd: KubeObject = {
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.gc.example.com' },
  spec: {
    group: 'gc.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
} as KubeObject;

const widget = (name: string, ns: string, owner?: KubeObject): KubeObject => ({
  apiVersion: 'gc.example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns, ownerReferences: owner ? [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid! }] : undefined },
});

describe('garbage collector and namespace deletion with custom kinds (real gateway)', () => {
  let cluster: ControllerCluster;

  beforeAll(async () => {
    cluster = await startControllerCluster(['garbagecollector', 'namespace']);
    await cluster.client.resource(CRDS).create(crd);
    await eventually('the CRD is served', async () => ((await cluster.client.resource(WIDGETS, 'default').list()).items ? true : undefined));
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const gone = (client: ResourceClient, name: string) => async () => {
    try {
      await client.get(name);
      return undefined;
    } catch (err) {
      return isNotFound(err) ? true : undefined;
    }
  };

  it('deletes a custom resource whose owner (of a custom kind too) is gone', async () => {
    const widgets = cluster.client.resource(WIDGETS, 'default');
    const owner = await widgets.create(widget('owner', 'default'));
    await widgets.create(widget('dependent', 'default', owner));
    const configMaps = cluster.client.resource({ group: '', version: 'v1', resource: 'configmaps' }, 'default');
    await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned-by-widget', namespace: 'default', ownerReferences: [{ apiVersion: 'gc.example.com/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid! }] } });
    await widgets.delete('owner');
    await eventually('the dependent widget is collected', gone(widgets, 'dependent'));
    await eventually('the dependent config map is collected', gone(configMaps, 'owned-by-widget'));
  });

  it('deleting a namespace deletes its custom resources', async () => {
    const namespaces = cluster.client.resource(NAMESPACES);
    await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    const widgets = cluster.client.resource(WIDGETS, 'doomed');
    for (const n of ['a', 'b', 'c']) await widgets.create(widget(n, 'doomed'));
    await namespaces.delete('doomed');
    await eventually('the namespace is gone', gone(namespaces, 'doomed'), 30_000);
    expect((await cluster.client.resource(WIDGETS).list()).items.filter((w) => w.metadata.namespace === 'doomed')).toEqual([]);
  });
});
