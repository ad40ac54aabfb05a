import type { KubeObject } from '@orch/apimachinery';
import { peerContext, waitFor, type PeerContext } from '../../framework/testing/harness';
import type { Pod, ReplicaSet } from '../../framework/api';
import { ReplicaSetController } from './replicaset.controller';

const RS = 'apps/v1/replicasets';
const PODS = '/v1/pods';

function replicaSet(replicas: number): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'rs-uid', generation: 1 },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'web' }] } } },
  };
}

function ownedPod(name: string, cost?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: { app: 'web' },
      annotations: cost ? { 'controller.orch.io/pod-deletion-cost': cost } : undefined,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'c' }], nodeName: 'n1' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
  };
}

const podsOf = (t: PeerContext) => t.peer.stored(PODS) as Pod[];

describe('ReplicaSetController.sync against an API peer', () => {
  let t: PeerContext;
  let controller: ReplicaSetController;
  beforeEach(async () => {
    t = await peerContext();
  });
  afterEach(() => t.stop());

  const start = async (...objects: [string, KubeObject][]) => {
    for (const [gvr, obj] of objects) t.peer.put(gvr, obj);
    controller = t.own(new ReplicaSetController(t.ctx));
    await t.start();
  };

  it('creates the missing pods from the template with a controller reference, and reports status', async () => {
    await start([RS, replicaSet(3)]);
    await controller.sync('ns/web');
    const pods = podsOf(t);
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata.generateName).toBe('web-');
      expect(p.metadata.labels).toEqual({ app: 'web' });
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }]);
    }
    await waitFor(() => t.ctx.informers.informerFor({ group: '', version: 'v1', resource: 'pods' }).list().length === 3, 'pods observed');
    await controller.sync('ns/web');
    expect((t.peer.stored(RS)[0] as ReplicaSet).status).toMatchObject({ replicas: 3, readyReplicas: 0, observedGeneration: 1 });
  });

  it('does not create twice while its creations are not yet observed (slow watch)', async () => {
    await start([RS, replicaSet(2)]);
    t.peer.paused = true;
    await controller.sync('ns/web');
    await controller.sync('ns/web');
    await controller.sync('ns/web');
    expect(podsOf(t)).toHaveLength(2);
  });

  it('scales down by pod-deletion-cost', async () => {
    await start([RS, replicaSet(2)], [PODS, ownedPod('a', '10')], [PODS, ownedPod('b', '-10')], [PODS, ownedPod('c', '5')]);
    await controller.sync('ns/web');
    expect(podsOf(t).map((p) => p.metadata.name).sort()).toEqual(['a', 'c']);
  });

  it('adopts a matching orphan instead of creating a pod', async () => {
    const orphan = ownedPod('orphan');
    delete orphan.metadata.ownerReferences;
    await start([RS, replicaSet(1)], [PODS, orphan]);
    await controller.sync('ns/web');
    const pods = podsOf(t);
    expect(pods.map((p) => p.metadata.name)).toEqual(['orphan']);
    expect(pods[0].metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', uid: 'rs-uid', controller: true });
  });
});
