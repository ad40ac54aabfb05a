import { eventually, type RunningProcess } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { startScheduler as startSchedulerProcess } from './support/scheduler';

const node = (name: string, labels: Record<string, string> = {}, taints: unknown[] = []) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'orch.io/hostname': name, ...labels } },
  spec: { taints },
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m', memory: '64Mi' } } }], ...spec },
});


const startScheduler = (gw: GatewayProcess, extra: string[] = []) => startSchedulerProcess(gw.kubeconfig, extra);

describe('scheduler process against a real gateway', () => {
  let gw: GatewayProcess;
  const schedulers: RunningProcess[] = [];
  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    for (const n of [node('n1', { 'topology.orch.io/zone': 'a' }), node('n2', { 'topology.orch.io/zone': 'b' }), node('n3', { 'topology.orch.io/zone': 'b' }, [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }])]) {
      const r = await gw.admin.post('/api/v1/nodes', n);
      expect(r.status).toBe(201);
      // status is written through the status subresource
      await gw.admin.put(`/api/v1/nodes/${n.metadata.name}/status`, { ...r.json, status: n.status });
    }
  });
  afterAll(async () => {
    for (const s of schedulers) await s.stop();
    await gw?.stop();
  });

  it('binds pods to feasible nodes through pods/binding, honouring taints and nodeSelector', async () => {
    schedulers.push(await startScheduler(gw, ['--leader-elect=false']));
    for (let i = 0; i < 6; i++) expect((await gw.admin.post('/api/v1/namespaces/default/pods', pod(`p-${i}`))).status).toBe(201);
    await gw.admin.post('/api/v1/namespaces/default/pods', pod('zoned', { nodeSelector: { 'topology.orch.io/zone': 'a' } }));
    const bound = await eventually('every pod bound', async () => {
      const items = (await gw.admin.get('/api/v1/namespaces/default/pods')).json.items;
      return items.every((p: any) => p.spec.nodeName) ? items : undefined;
    });
    for (const p of bound) expect(['n1', 'n2']).toContain(p.spec.nodeName);
    expect(bound.find((p: any) => p.metadata.name === 'zoned').spec.nodeName).toBe('n1');
    const scheduled = bound[0].status.conditions.find((c: any) => c.type === 'PodScheduled');
    expect(scheduled.status).toBe('True');
  });

  it('reports an unschedulable pod with PodScheduled=False', async () => {
    await gw.admin.post('/api/v1/namespaces/default/pods', pod('nowhere', { nodeSelector: { missing: 'label' } }));
    const cond = await eventually('PodScheduled=False', async () => {
      const p = (await gw.admin.get('/api/v1/namespaces/default/pods/nowhere')).json;
      return (p.status.conditions ?? []).find((c: any) => c.type === 'PodScheduled' && c.status === 'False');
    });
    expect(cond.reason).toBe('Unschedulable');
  });

  it('leader election: two schedulers, only the leader binds; kill -9 the leader and the other takes over', async () => {
    await schedulers.pop()!.stop();
    const flags = ['--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=500ms'];
    const a = await startScheduler(gw, flags);
    const b = await startScheduler(gw, flags);
    schedulers.push(a, b);
    const holder = await eventually('a lease holder', async () => (await gw.admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/scheduler')).json?.spec?.holderIdentity);
    const leader = holder.endsWith(`_${a.pid}`) ? a : b;
    const follower = leader === a ? b : a;
    await gw.admin.post('/api/v1/namespaces/default/pods', pod('before-failover'));
    await eventually('before-failover bound', async () => (await gw.admin.get('/api/v1/namespaces/default/pods/before-failover')).json.spec.nodeName);
    const killedAt = Date.now();
    await leader.kill9();
    const newHolder = await eventually('the follower holds the lease', async () => {
      const h = (await gw.admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/scheduler')).json.spec.holderIdentity;
      return h.endsWith(`_${follower.pid}`) ? h : undefined;
    }, 20_000);
    expect(newHolder).toBeDefined();
    expect(Date.now() - killedAt).toBeLessThan(3000 + 5000);
    await gw.admin.post('/api/v1/namespaces/default/pods', pod('after-failover'));
    const nodeName = await eventually('after-failover bound', async () => (await gw.admin.get('/api/v1/namespaces/default/pods/after-failover')).json.spec.nodeName);
    expect(['n1', 'n2']).toContain(nodeName);
  });
});
