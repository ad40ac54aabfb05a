import type { KubeObject } from '@orch/apimachinery';
import type { ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, staysUnchanged, type ControllerCluster } from './support/cluster';
import { PodSimulator } from './support/pod-simulator';

// StatefulSets (ordered, stable identity, rolling update) and DaemonSets (one pod per
// eligible node, tolerations, node selectors) against the real gateway.

const NS = 'sets';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

interface Pod extends KubeObject {
  spec: { hostname?: string; subdomain?: string; affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: { matchFields?: { values?: string[] }[] }[] } } } };
  status?: { phase?: string };
}
interface StatefulSet extends KubeObject {
  spec: Record<string, unknown>;
  status?: { replicas?: number; readyReplicas?: number; currentRevision?: string; updateRevision?: string; updatedReplicas?: number; currentReplicas?: number; observedGeneration?: number };
}
interface DaemonSet extends KubeObject {
  spec: Record<string, unknown>;
  status?: { desiredNumberScheduled?: number; currentNumberScheduled?: number; numberReady?: number; updatedNumberScheduled?: number; numberMisscheduled?: number; numberAvailable?: number; observedGeneration?: number };
}

const REVISION = 'controller-revision-hash';
const nodeOf = (p: Pod) => p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];

describe('workload controllers: stateful sets and daemon sets (real gateway)', () => {
  let cluster: ControllerCluster;
  let sim: PodSimulator;
  let pods: ResourceClient<Pod>;
  let statefulSets: ResourceClient<StatefulSet>;
  let daemonSets: ResourceClient<DaemonSet>;
  let nodes: ResourceClient;
  /** Stateful pods allowed to become ready (the rest stay Pending). */
  const allowed = new Set<string>();

  beforeAll(async () => {
    cluster = await startControllerCluster(['statefulset', 'daemonset']);
    await cluster.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    pods = cluster.client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, NS);
    statefulSets = cluster.client.resource<StatefulSet>({ group: 'apps', version: 'v1', resource: 'statefulsets' }, NS);
    daemonSets = cluster.client.resource<DaemonSet>({ group: 'apps', version: 'v1', resource: 'daemonsets' }, NS);
    nodes = cluster.client.resource({ group: '', version: 'v1', resource: 'nodes' });
    sim = new PodSimulator({ client: cluster.client, namespace: NS, ready: (p) => p.metadata.labels?.['app'] !== 'db' || allowed.has(p.metadata.name ?? '') }).start();
  });

  afterAll(async () => {
    await sim?.stop();
    await cluster?.stop();
  });

  const podsOf = async (app: string) => (await pods.list({ labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);
  const names = (items: Pod[]) => items.map((p) => p.metadata.name).sort();
  const settled = (name: string, replicas: number) =>
    eventually(`${name} settled at ${replicas}`, async () => {
      const s = await statefulSets.get(name);
      const st = s.status ?? {};
      return st.observedGeneration === s.metadata.generation && st.replicas === replicas && st.readyReplicas === replicas && st.updatedReplicas === replicas && st.currentRevision === st.updateRevision ? s : undefined;
    });

  it('creates stateful pods in ordinal order, each after its predecessor is ready', async () => {
    await statefulSets.create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: NS },
      spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'main', image: 'db:v1' }] } } },
    });
    await eventually('db-0 created', async () => (names(await podsOf('db')).includes('db-0') ? true : undefined));
    await new Promise((r) => setTimeout(r, 700));
    expect(names(await podsOf('db'))).toEqual(['db-0']);
    allowed.add('db-0');
    await eventually('db-1 created', async () => (names(await podsOf('db')).includes('db-1') ? true : undefined));
    expect(names(await podsOf('db'))).toEqual(['db-0', 'db-1']);
    allowed.add('db-1');
    allowed.add('db-2');
    const set = await settled('db', 3);
    for (const [i, p] of (await podsOf('db')).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')).entries()) {
      expect(p.metadata.labels).toMatchObject({ 'statefulset.orch.io/pod-name': `db-${i}`, 'apps.orch.io/pod-index': String(i), [REVISION]: set.status?.updateRevision });
      expect(p.spec).toMatchObject({ hostname: `db-${i}`, subdomain: 'db' });
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', name: 'db', controller: true });
    }
  });

  it('rolls a template change out from the highest ordinal down', async () => {
    const before = (await statefulSets.get('db')).status?.updateRevision;
    const order: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const p of await podsOf('db')) {
          if (p.metadata.labels?.[REVISION] !== before && !order.includes(p.metadata.name ?? '')) order.push(p.metadata.name ?? '');
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await statefulSets.patch('db', 'merge', { spec: { template: { spec: { containers: [{ name: 'main', image: 'db:v2' }] } } } });
    const set = await settled('db', 3);
    sampling = false;
    await sampler;
    expect(set.status?.updateRevision).not.toBe(before);
    expect(order).toEqual(['db-2', 'db-1', 'db-0']);
  });

  it('scales down from the highest ordinal', async () => {
    await statefulSets.patch('db', 'merge', { spec: { replicas: 1 } });
    await settled('db', 1);
    expect(names(await podsOf('db'))).toEqual(['db-0']);
  });

  it('runs one daemon pod per eligible node, honouring taints, tolerations and node selectors', async () => {
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { disk: 'ssd' } } });
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n3' }, spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } });
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n4' }, spec: { unschedulable: true, taints: [{ key: 'node.orch.io/unschedulable', effect: 'NoSchedule' }] } });
    await daemonSets.create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: NS },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'main', image: 'agent:v1' }] } } },
    });
    const placed = async (app: string, want: string[]) =>
      eventually(`${app} on ${want}`, async () => {
        const items = await podsOf(app);
        const on = items.map(nodeOf).sort();
        return JSON.stringify(on) === JSON.stringify(want) ? items : undefined;
      });
    // n3's taint is not tolerated; n4 is unschedulable, which daemon pods tolerate.
    await placed('agent', ['n1', 'n2', 'n4']);
    const ds = await eventually('agent status', async () => {
      const cur = await daemonSets.get('agent');
      return cur.status?.numberReady === 3 ? cur : undefined;
    });
    expect(ds.status).toMatchObject({ desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberMisscheduled: 0 });
    // Tolerating the taint adds n3 and rolls the new template out everywhere.
    await daemonSets.patch('agent', 'merge', { spec: { template: { spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] } } } });
    await placed('agent', ['n1', 'n2', 'n3', 'n4']);
    await eventually('agent updated', async () => ((await daemonSets.get('agent')).status?.updatedNumberScheduled === 4 ? true : undefined));
    expect(new Set((await podsOf('agent')).map((p) => p.metadata.labels?.[REVISION])).size).toBe(1);

    await daemonSets.create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'ssd', namespace: NS },
      spec: { selector: { matchLabels: { app: 'ssd' } }, template: { metadata: { labels: { app: 'ssd' } }, spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'main', image: 'ssd:v1' }] } } },
    });
    await placed('ssd', ['n1']);
    await nodes.patch('n2', 'merge', { metadata: { labels: { disk: 'ssd' } } });
    await placed('ssd', ['n1', 'n2']);
    await nodes.patch('n1', 'merge', { metadata: { labels: { disk: null } } });
    await placed('ssd', ['n2']);
  });

  it('settles: no further status writes once converged', async () => {
    // Converged means every count final, not just numberReady: a pod still leaving n1 can be
    // counted ready while the one on n2 starts, and the next status write is then still due.
    const converged = (name: string, nodes: number) =>
      eventually(`${name} converged on ${nodes} node(s)`, async () => {
        const ds = await daemonSets.get(name);
        const st = ds.status ?? {};
        const counts = [st.desiredNumberScheduled, st.currentNumberScheduled, st.numberReady, st.numberAvailable, st.updatedNumberScheduled];
        return st.observedGeneration === ds.metadata.generation && counts.every((n) => n === nodes) && (st.numberMisscheduled ?? 0) === 0 && (await podsOf(name)).length === nodes ? true : undefined;
      });
    await Promise.all([converged('ssd', 1), converged('agent', 4), settled('db', 1)]);
    const quiet = await Promise.all([staysUnchanged(() => statefulSets.get('db')), staysUnchanged(() => daemonSets.get('agent')), staysUnchanged(() => daemonSets.get('ssd'))]);
    expect(quiet).toEqual([true, true, true]);
  });
});
