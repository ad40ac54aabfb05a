import type { KubeObject } from '@orch/apimachinery';
import { ApiError, type ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, staysUnchanged, type ControllerCluster } from './support/cluster';
import { PodSimulator } from './support/pod-simulator';

// PodDisruptionBudget status from the disruption controller, and the gateway's eviction
// subresource refusing (429) evictions that would break a budget.

const NS = 'budget';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

interface Pdb extends KubeObject {
  spec: Record<string, unknown>;
  status?: { currentHealthy?: number; desiredHealthy?: number; disruptionsAllowed?: number; expectedPods?: number; observedGeneration?: number; disruptedPods?: Record<string, string>; conditions?: { type: string; status: string; reason?: string }[] };
}
interface Pod extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

describe('workload controllers: disruption budgets and evictions (real gateway)', () => {
  let cluster: ControllerCluster;
  let sim: PodSimulator;
  let budgets: ResourceClient<Pdb>;
  let pods: ResourceClient<Pod>;

  beforeAll(async () => {
    cluster = await startControllerCluster(['replicaset', 'deployment', 'disruption']);
    await cluster.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    budgets = cluster.client.resource<Pdb>({ group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' }, NS);
    pods = cluster.client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, NS);
    sim = new PodSimulator({ client: cluster.client, namespace: NS }).start();
    await cluster.client.resource({ group: 'apps', version: 'v1', resource: 'deployments' }, NS).create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'guarded', namespace: NS },
      spec: { replicas: 3, selector: { matchLabels: { app: 'guarded' } }, template: { metadata: { labels: { app: 'guarded' } }, spec: { containers: [{ name: 'main', image: 'guarded:v1' }] } } },
    });
  });

  afterAll(async () => {
    await sim?.stop();
    await cluster?.stop();
  });

  const readyPods = async () => (await pods.list({ labelSelector: 'app=guarded' })).items.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  const evict = (name: string) => pods.createSubresource(name, 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } });
  const budgetWith = (want: (s: NonNullable<Pdb['status']>) => boolean) =>
    eventually('budget status', async () => {
      const pdb = await budgets.get('guard');
      return pdb.status && pdb.status.observedGeneration === pdb.metadata.generation && want(pdb.status) ? pdb : undefined;
    });

  it('reports budget status and refuses an eviction that would break it with 429', async () => {
    await eventually('3 ready pods', async () => ((await readyPods()).length === 3 ? true : undefined));
    await budgets.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard', namespace: NS }, spec: { minAvailable: 3, selector: { matchLabels: { app: 'guarded' } } } });
    const pdb = await budgetWith((s) => s.currentHealthy === 3);
    expect(pdb.status).toMatchObject({ currentHealthy: 3, desiredHealthy: 3, disruptionsAllowed: 0, expectedPods: 3 });
    expect(pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    const victim = (await readyPods())[0].metadata.name ?? '';
    const err = await evict(victim).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(429);
    expect((err as ApiError).status.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect((err as ApiError).status.details?.causes?.[0]).toMatchObject({ reason: 'DisruptionBudget', message: 'The disruption budget guard needs 3 healthy pods and has 3 currently' });
    expect((await pods.get(victim)).metadata.deletionTimestamp).toBeUndefined();
  });

  it('allows one eviction per allowed disruption and counts it at once', async () => {
    await budgets.patch('guard', 'merge', { spec: { minAvailable: 2 } });
    await budgetWith((s) => s.disruptionsAllowed === 1);
    const [first, second] = (await readyPods()).map((p) => p.metadata.name ?? '');
    await evict(first);
    // The eviction used the budget up at once: the next one is refused before the controller runs.
    const err = await evict(second).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe(429);
    // The replacement becomes ready and the budget allows a disruption again.
    const pdb = await budgetWith((s) => s.currentHealthy === 3 && s.disruptionsAllowed === 1);
    expect(pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({ status: 'True', reason: 'SufficientPods' });
    await evict(second);
  });

  it('derives expected pods from the controller for maxUnavailable', async () => {
    await budgets.delete('guard');
    await budgets.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard', namespace: NS }, spec: { maxUnavailable: '34%', selector: { matchLabels: { app: 'guarded' } } } });
    const pdb = await budgetWith((s) => s.currentHealthy === 3);
    // 34% of 3 rounds up to 2 unavailable: 1 must stay healthy.
    expect(pdb.status).toMatchObject({ expectedPods: 3, desiredHealthy: 1, disruptionsAllowed: 2 });
    expect(await staysUnchanged(() => budgets.get('guard'))).toBe(true);
  });
});
