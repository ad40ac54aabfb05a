import type { KubeObject } from '@orch/apimachinery';
import { isNotFound, type ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, type ControllerCluster } from './support/cluster';
import { PodSimulator } from './support/pod-simulator';

// The garbage collector against the real gateway: background, foreground and orphan
// propagation, blockOwnerDeletion, and owners of any kind (config maps owning config maps).

const NS = 'gc';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

interface Deployment extends KubeObject {
  spec: Record<string, unknown>;
}

function deployment(name: string): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: `${name}:v1` }] } },
    },
  };
}

function configMap(name: string, owner?: KubeObject, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  const ownerReferences = owner ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', blockOwnerDeletion: true }] : undefined;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, ownerReferences, ...extra }, data: { k: name } };
}

describe('workload controllers: garbage collector (real gateway)', () => {
  let cluster: ControllerCluster;
  let sim: PodSimulator;
  let deployments: ResourceClient<Deployment>;
  let sets: ResourceClient;
  let pods: ResourceClient;
  let configMaps: ResourceClient;

  beforeAll(async () => {
    cluster = await startControllerCluster(['replicaset', 'deployment', 'garbagecollector']);
    await cluster.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    deployments = cluster.client.resource<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' }, NS);
    sets = cluster.client.resource({ group: 'apps', version: 'v1', resource: 'replicasets' }, NS);
    pods = cluster.client.resource({ group: '', version: 'v1', resource: 'pods' }, NS);
    configMaps = cluster.client.resource({ group: '', version: 'v1', resource: 'configmaps' }, NS);
    sim = new PodSimulator({ client: cluster.client, namespace: NS }).start();
  });

  afterAll(async () => {
    await sim?.stop();
    await cluster?.stop();
  });

  const gone = async (client: ResourceClient, name: string) => {
    try {
      await client.get(name);
      return undefined;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  };
  const countOf = async (client: ResourceClient, app: string) => (await client.list({ labelSelector: `app=${app}` })).items.length;
  const running = (app: string) => eventually(`${app} has 2 pods`, async () => ((await countOf(pods, app)) === 2 ? true : undefined));

  it('background: deleting a deployment deletes its ReplicaSet and pods', async () => {
    await deployments.create(deployment('bg'));
    await running('bg');
    await deployments.delete('bg', { propagationPolicy: 'Background' });
    await eventually('replica sets and pods of bg collected', async () => ((await countOf(sets, 'bg')) + (await countOf(pods, 'bg')) === 0 ? true : undefined));
  });

  it('foreground: the owner stays (with foregroundDeletion) until its dependents are gone', async () => {
    await deployments.create(deployment('fg'));
    await running('fg');
    const deleting = (await deployments.delete('fg', { propagationPolicy: 'Foreground' })) as Deployment;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.finalizers).toContain('foregroundDeletion');
    let ownerOutlivedDependents = true;
    await eventually('fg deleted', async () => {
      const dependents = (await countOf(sets, 'fg')) + (await countOf(pods, 'fg'));
      const ownerGone = await gone(deployments, 'fg');
      if (ownerGone && dependents > 0) ownerOutlivedDependents = false;
      return ownerGone && dependents === 0 ? true : undefined;
    });
    expect(ownerOutlivedDependents).toBe(true);
  });

  it('orphan: the dependents stay and lose their reference to the owner', async () => {
    await deployments.create(deployment('orph'));
    await running('orph');
    const uid = (await deployments.get('orph')).metadata.uid;
    await deployments.delete('orph', { propagationPolicy: 'Orphan' });
    await eventually('orph deleted', () => gone(deployments, 'orph'));
    const rsList = await eventually('replica set released', async () => {
      const items = (await sets.list({ labelSelector: 'app=orph' })).items;
      return items.length === 1 && !items[0].metadata.ownerReferences?.some((r) => r.uid === uid) ? items : undefined;
    });
    expect(rsList[0].metadata.ownerReferences ?? []).toEqual([]);
    // The replica set keeps running its pods.
    await new Promise((r) => setTimeout(r, 500));
    expect(await countOf(pods, 'orph')).toBe(2);
  });

  it('collects objects of any kind whose owner is gone, including owners that never existed', async () => {
    const owner = await configMaps.create(configMap('owner'));
    await configMaps.create(configMap('child', owner));
    await configMaps.create(configMap('stray', { ...owner, metadata: { name: 'never-existed', uid: '00000000-0000-0000-0000-000000000001' } }));
    await eventually('stray collected', () => gone(configMaps, 'stray'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await gone(configMaps, 'child')).toBeUndefined();
    await configMaps.delete('owner');
    await eventually('child collected', () => gone(configMaps, 'child'));
  });

  it('blockOwnerDeletion: a dependent held by a finalizer holds a foreground-deleted owner', async () => {
    const owner = await configMaps.create(configMap('holder'));
    await configMaps.create(configMap('held', owner, { finalizers: ['example.com/hold'] }));
    await configMaps.delete('holder', { propagationPolicy: 'Foreground' });
    const held = await eventually('dependent being deleted', async () => {
      const cm = await configMaps.get('held');
      return cm.metadata.deletionTimestamp ? cm : undefined;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await gone(configMaps, 'holder')).toBeUndefined();
    await configMaps.patch('held', 'merge', { metadata: { resourceVersion: held.metadata.resourceVersion, finalizers: null } });
    await eventually('owner deleted after its dependent', () => gone(configMaps, 'holder'));
  });
});
