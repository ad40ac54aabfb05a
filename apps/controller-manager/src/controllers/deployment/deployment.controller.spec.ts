import { peerContext, waitFor, type PeerContext } from '../../framework/testing/harness';
import type { Deployment, ReplicaSet } from '../../framework/api';
import { DeploymentController } from './deployment.controller';
import { templateHash } from './util';

const DEPLOYMENTS = 'apps/v1/deployments';
const RS = 'apps/v1/replicasets';

const deployment: Deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: 1 },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'web:v1' }] } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
    progressDeadlineSeconds: 600,
    revisionHistoryLimit: 10,
  },
};

describe('DeploymentController.sync against an API peer', () => {
  let t: PeerContext;
  let controller: DeploymentController;
  beforeEach(async () => {
    t = await peerContext();
  });
  afterEach(() => t.stop());

  it('creates the ReplicaSet <deployment>-<hash> at full size, and records revision 1', async () => {
    t.peer.put(DEPLOYMENTS, deployment);
    controller = t.own(new DeploymentController(t.ctx));
    await t.start();
    await controller.sync('ns/web');
    const hash = templateHash(deployment.spec.template);
    const [rs] = t.peer.stored(RS) as ReplicaSet[];
    expect(rs.metadata).toMatchObject({
      name: `web-${hash}`,
      labels: { app: 'web', 'pod-template-hash': hash },
      annotations: { 'deployment.orch.io/revision': '1', 'deployment.orch.io/desired-replicas': '3', 'deployment.orch.io/max-replicas': '4' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(rs.spec).toMatchObject({ replicas: 3, selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } } });
    const d = t.peer.stored(DEPLOYMENTS)[0] as Deployment;
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('1');
    expect(d.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetCreated' });
  });

  it('resolves a hash collision by bumping collisionCount', async () => {
    const hash = templateHash(deployment.spec.template);
    const squatter: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `web-${hash}`, namespace: 'ns', uid: 'other', labels: { app: 'other' } },
      spec: { replicas: 0, selector: { matchLabels: { app: 'other' } }, template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'c', image: 'other' }] } } },
    };
    t.peer.put(DEPLOYMENTS, deployment);
    t.peer.put(RS, squatter);
    controller = t.own(new DeploymentController(t.ctx));
    await t.start();
    await expect(controller.sync('ns/web')).rejects.toThrow(/already exists/);
    expect((t.peer.stored(DEPLOYMENTS)[0] as Deployment).status?.collisionCount).toBe(1);
    const informer = t.ctx.informers.informerFor<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' });
    await waitFor(() => informer.get('ns/web')?.status?.collisionCount === 1, 'collision count observed');
    await controller.sync('ns/web');
    const names = t.peer.stored(RS).map((r) => r.metadata.name);
    expect(names).toEqual([`web-${hash}`, `web-${templateHash(deployment.spec.template, 1)}`]);
  });
});
