import { Catalog, objectSchemaOf } from '@orch/api';
import { FieldManager, FieldSet, fieldElement, type KubeObject } from '@orch/apimachinery';

// A create's managedFields come from one walk of the new object (FieldManager.update with no
// live object); they must be byte for byte those of the generic comparison with an empty
// object, for the catalog's real schemas.

const catalog = new Catalog();
const STATUS = FieldSet.fromPaths([[fieldElement('status')]]);
const meta = (extra: Record<string, unknown> = {}) => ({ name: 'x', namespace: 'ns', uid: 'u', creationTimestamp: '2026-11-29T04:00:00Z', generation: 1, labels: { app: 'a', tier: 'b' }, annotations: { note: 'n' }, ...extra });

describe('managedFields of a create: the one-walk path equals the generic comparison', () => {
  it.each([
    { name: 'ConfigMap', gvr: ['', 'v1', 'configmaps'], obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { a: '1', b: '2' }, binaryData: { c: 'eA==' }, immutable: false } },
    {
      name: 'Pod: containers and ports by merge keys, atomic args, status ignored',
      gvr: ['', 'v1', 'pods'],
      ignored: STATUS,
      obj: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: meta({ finalizers: ['a/b', 'c/d'], ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }] }),
        spec: {
          nodeSelector: { disk: 'ssd' },
          containers: [
            { name: 'c', image: 'i', args: ['x', 'y'], ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }], env: [{ name: 'E', value: 'v' }], resources: { limits: { cpu: '1' } } },
            { name: 'd', image: 'j', volumeMounts: [{ name: 'v', mountPath: '/v' }] },
          ],
          volumes: [{ name: 'v', emptyDir: {} }],
          tolerations: [{ key: 'k', operator: 'Exists' }],
        },
        status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
      },
    },
    {
      name: 'Deployment: atomic selector, template, status ignored',
      gvr: ['apps', 'v1', 'deployments'],
      ignored: STATUS,
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(),
        spec: { replicas: 2, selector: { matchLabels: { app: 'a' } }, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
        status: { replicas: 0 },
      },
    },
    {
      name: 'Service: ports keyed by port and protocol, status owned when not ignored',
      gvr: ['', 'v1', 'services'],
      obj: { apiVersion: 'v1', kind: 'Service', metadata: meta(), spec: { selector: { app: 'a' }, ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }, { port: 80, protocol: 'UDP' }], clusterIPs: ['10.0.0.1'] }, status: { loadBalancer: {} } },
    },
    {
      name: 'Pod with duplicate containers and empty containers',
      gvr: ['', 'v1', 'pods'],
      ignored: STATUS,
      obj: { apiVersion: 'v1', kind: 'Pod', metadata: meta({ labels: {} }), spec: { containers: [{ name: 'c', image: '1' }, { name: 'c', image: '2' }], volumes: [] } },
    },
    { name: 'a requested managedFields list is not owned', gvr: ['', 'v1', 'configmaps'], obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ managedFields: [{}] }), data: { a: '1' } } },
    { name: 'only server-owned fields: no entry', gvr: ['', 'v1', 'configmaps'], obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns' } }, none: true },
    { name: 'a list-map item without its key: no managedFields', gvr: ['', 'v1', 'pods'], obj: { apiVersion: 'v1', kind: 'Pod', metadata: meta(), spec: { containers: [{ image: 'i' }] } }, none: true },
  ])('$name', ({ gvr, obj, ignored, none }) => {
    const [group, version, resource] = gvr;
    const def = catalog.lookup(group, version, resource)!;
    const fields = new FieldManager(objectSchemaOf(def), obj.apiVersion);
    const o = { manager: 'm', now: '2026-11-29T04:00:00Z', ignored };
    const generic = fields.update({} as KubeObject, obj as KubeObject, o);
    const create = fields.update(undefined, obj as KubeObject, o);
    expect(generic?.length).toBe(none ? undefined : 1);
    expect(JSON.stringify(create)).toBe(JSON.stringify(generic));
  });
});
