import type { KubeObject } from '@orch/apimachinery';
import type { ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, staysUnchanged, type ControllerCluster } from './support/cluster';
import { PodSimulator } from './support/pod-simulator';

// Deployment → ReplicaSet → Pods against the real gateway and controller-manager processes,
// with the pod simulator standing in for the node agent.

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
interface Deployment extends KubeObject {
  spec: { replicas?: number; paused?: boolean; template: { spec: { containers: { name: string; image: string }[] } } };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number; availableReplicas?: number; unavailableReplicas?: number; conditions?: Condition[] };
}
interface ReplicaSet extends KubeObject {
  spec: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
}
interface Pod extends KubeObject {
  status?: { phase?: string; conditions?: Condition[] };
}

const NS = 'rollout';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

function deployment(name: string, image: string, extra: Partial<Deployment['spec']> & Record<string, unknown> = {}): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
      ...extra,
    } as Deployment['spec'],
  };
}

const condition = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) => obj?.status?.conditions?.find((c) => c.type === type);
const isReady = (p: Pod) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

describe('workload controllers: deployment rollouts (real gateway)', () => {
  let cluster: ControllerCluster;
  let sim: PodSimulator;
  let deployments: ResourceClient<Deployment>;
  let sets: ResourceClient<ReplicaSet>;
  let pods: ResourceClient<Pod>;

  beforeAll(async () => {
    cluster = await startControllerCluster(['replicaset', 'deployment']);
    await cluster.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    deployments = cluster.client.resource<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' }, NS);
    sets = cluster.client.resource<ReplicaSet>({ group: 'apps', version: 'v1', resource: 'replicasets' }, NS);
    pods = cluster.client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, NS);
    // Pods labelled stuck=true never become ready (progress deadline test).
    sim = new PodSimulator({ client: cluster.client, namespace: NS, ready: (p) => p.metadata.labels?.['stuck'] !== 'true' }).start();
  });

  afterAll(async () => {
    await sim?.stop();
    await cluster?.stop();
  });

  const setsOf = async (name: string) => (await sets.list({ labelSelector: `app=${name}` })).items;
  const podsOf = async (name: string) => (await pods.list({ labelSelector: `app=${name}` })).items;

  /** Waits until the deployment reports a complete rollout of `replicas` at its generation. */
  const rolledOut = (name: string, replicas: number) =>
    eventually(`${name} rolled out to ${replicas}`, async () => {
      const d = await deployments.get(name);
      const s = d.status ?? {};
      const done =
        s.observedGeneration === d.metadata.generation &&
        s.updatedReplicas === replicas &&
        s.replicas === replicas &&
        s.availableReplicas === replicas &&
        condition(d, 'Progressing')?.reason === 'NewReplicaSetAvailable';
      return done ? d : undefined;
    });

  it('creates a ReplicaSet named <deployment>-<hash> with 3 ready pods and reports status', async () => {
    await deployments.create(deployment('web', 'web:v1'));
    const d = await rolledOut('web', 3);
    expect(condition(d, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('1');
    const rsList = await setsOf('web');
    expect(rsList).toHaveLength(1);
    const hash = rsList[0].metadata.labels?.['pod-template-hash'];
    expect(rsList[0].metadata.name).toBe(`web-${hash}`);
    expect(rsList[0].metadata.annotations).toMatchObject({
      'deployment.orch.io/revision': '1',
      'deployment.orch.io/desired-replicas': '3',
      'deployment.orch.io/max-replicas': '4',
    });
    expect(rsList[0].metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Deployment', name: 'web', uid: d.metadata.uid, controller: true, blockOwnerDeletion: true })]);
    const running = await podsOf('web');
    expect(running).toHaveLength(3);
    for (const p of running) expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: rsList[0].metadata.name, controller: true });
  });

  it('settles: no further writes to a rolled-out deployment and its replica set', async () => {
    const rs = (await setsOf('web'))[0];
    const [d, r] = await Promise.all([staysUnchanged(() => deployments.get('web')), staysUnchanged(() => sets.get(rs.metadata.name ?? ''))]);
    expect({ deployment: d, replicaSet: r }).toEqual({ deployment: true, replicaSet: true });
  });

  it('rolls out a new image without dropping below replicas - maxUnavailable ready pods', async () => {
    let minReady = Infinity;
    let maxPods = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const items = await podsOf('web');
        const live = items.filter((p) => !p.metadata.deletionTimestamp);
        minReady = Math.min(minReady, live.filter(isReady).length);
        maxPods = Math.max(maxPods, live.length);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const before = (await setsOf('web'))[0];
    await deployments.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'main', image: 'web:v2' }] } } } });
    const d = await rolledOut('web', 3);
    sampling = false;
    await sampler;
    expect(minReady).toBeGreaterThanOrEqual(2); // replicas 3 - maxUnavailable 1
    expect(maxPods).toBeLessThanOrEqual(4); // replicas 3 + maxSurge 1
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('2');
    const rsList = await setsOf('web');
    expect(rsList).toHaveLength(2);
    const old = rsList.find((rs) => rs.metadata.uid === before.metadata.uid);
    expect(old?.spec.replicas).toBe(0);
    const current = rsList.find((rs) => rs.metadata.uid !== before.metadata.uid);
    expect(current?.metadata.annotations?.['deployment.orch.io/revision']).toBe('2');
    for (const p of await podsOf('web')) expect(p.metadata.labels?.['pod-template-hash']).toBe(current?.metadata.labels?.['pod-template-hash']);
  });

  it('rolls back by reusing the old ReplicaSet when the template changes back', async () => {
    const original = (await setsOf('web')).find((rs) => rs.metadata.annotations?.['deployment.orch.io/revision'] === '1');
    expect(original).toBeDefined();
    await deployments.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'main', image: 'web:v1' }] } } } });
    const d = await rolledOut('web', 3);
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('3');
    const rsList = await setsOf('web');
    expect(rsList).toHaveLength(2);
    const reused = rsList.find((rs) => rs.metadata.uid === original?.metadata.uid);
    expect(reused?.spec.replicas).toBe(3);
    expect(reused?.metadata.annotations).toMatchObject({ 'deployment.orch.io/revision': '3', 'deployment.orch.io/revision-history': '1' });
  });

  it('scales through the scale subresource', async () => {
    const scale = await deployments.getSubresource<KubeObject & { spec: { replicas: number } }>('web', 'scale');
    await deployments.updateSubresource('web', 'scale', { ...scale, spec: { replicas: 5 } });
    await rolledOut('web', 5);
    expect((await podsOf('web')).filter(isReady)).toHaveLength(5);
    const rs = (await setsOf('web')).find((s) => (s.spec.replicas ?? 0) > 0);
    expect(rs?.metadata.annotations?.['deployment.orch.io/desired-replicas']).toBe('5');
  });

  it('does not roll out while paused and resumes afterwards', async () => {
    await deployments.patch('web', 'merge', { spec: { paused: true } });
    await eventually('paused condition', async () => (condition(await deployments.get('web'), 'Progressing')?.reason === 'DeploymentPaused' ? true : undefined));
    await deployments.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'main', image: 'web:v3' }] } } } });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await setsOf('web')).toHaveLength(2);
    await deployments.patch('web', 'merge', { spec: { paused: false } });
    const d = await rolledOut('web', 5);
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('4');
    expect(await setsOf('web')).toHaveLength(3);
  });

  it('reports ProgressDeadlineExceeded when pods never become ready', async () => {
    const stuck = deployment('stuck', 'stuck:v1', { replicas: 1, progressDeadlineSeconds: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    stuck.spec.template = { metadata: { labels: { app: 'stuck', stuck: 'true' } }, spec: { containers: [{ name: 'main', image: 'stuck:v1' }] } } as Deployment['spec']['template'];
    await deployments.create(stuck);
    const d = await eventually(
      'deadline exceeded',
      async () => {
        const cur = await deployments.get('stuck');
        return condition(cur, 'Progressing')?.reason === 'ProgressDeadlineExceeded' ? cur : undefined;
      },
      15_000,
    );
    expect(condition(d, 'Progressing')?.status).toBe('False');
    expect(condition(d, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
  });

  it('recreates: old pods are gone before new ones start', async () => {
    await deployments.create(deployment('batch', 'batch:v1', { replicas: 2, strategy: { type: 'Recreate' } }));
    await rolledOut('batch', 2);
    const oldHash = (await podsOf('batch'))[0].metadata.labels?.['pod-template-hash'];
    let mixed = false;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const hashes = new Set((await podsOf('batch')).filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.labels?.['pod-template-hash']));
        if (hashes.size > 1) mixed = true;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await deployments.patch('batch', 'merge', { spec: { template: { spec: { containers: [{ name: 'main', image: 'batch:v2' }] } } } });
    await rolledOut('batch', 2);
    sampling = false;
    await sampler;
    expect(mixed).toBe(false);
    expect((await podsOf('batch')).every((p) => p.metadata.labels?.['pod-template-hash'] !== oldHash)).toBe(true);
  });
});
