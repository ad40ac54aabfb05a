import { freePort, startProcess, tcpProbe, type RunningProcess } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from '../support/gateway';
import { CONTROLLER_MANAGER_MAIN, eventually } from './support/cluster';

const LEASE = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases/controller-manager';

/** Two controller-managers: only the leader acts; kill -9 it and the other takes over, with no double-created pods. */
describe('controller-manager leader election', () => {
  let gw: GatewayProcess;
  const cms: RunningProcess[] = [];
  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
  });
  afterAll(async () => {
    for (const c of cms) await c.stop();
    await gw?.stop();
  });

  async function startControllerManager(): Promise<RunningProcess> {
    const port = await freePort();
    const p = await startProcess({
      cmd: process.execPath,
      args: [
        CONTROLLER_MANAGER_MAIN,
        `--kubeconfig=${gw.kubeconfig}`,
        '--controllers=replicaset',
        `--secure-port=${port}`,
        '--leader-elect-lease-duration=3s',
        '--leader-elect-renew-deadline=2s',
        '--leader-elect-retry-period=500ms',
      ],
      readyProbe: tcpProbe(port),
      timeoutMs: 20_000,
    });
    cms.push(p);
    return p;
  }

  const podNames = async () => ((await gw.admin.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dle')).json.items as any[]).map((p) => p.metadata.name).sort();

  it('fails over within the lease duration and never doubles the pods', async () => {
    const a = await startControllerManager();
    const b = await startControllerManager();
    const holder: string = await eventually('a leader', async () => (await gw.admin.get(LEASE)).json?.spec?.holderIdentity || undefined);
    const leader = holder.endsWith(`_${a.pid}`) ? a : b;
    const follower = leader === a ? b : a;

    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'le' },
      spec: { replicas: 5, selector: { matchLabels: { app: 'le' } }, template: { metadata: { labels: { app: 'le' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    };
    expect((await gw.admin.post('/apis/apps/v1/namespaces/default/replicasets', rs)).status).toBe(201);
    await eventually('5 pods', async () => ((await podNames()).length === 5 ? true : undefined));

    const killedAt = Date.now();
    await leader.kill9();
    await eventually('the follower leads', async () => ((await gw.admin.get(LEASE)).json.spec.holderIdentity.endsWith(`_${follower.pid}`) ? true : undefined), 15_000);
    const tookOverMs = Date.now() - killedAt;
    expect(tookOverMs).toBeLessThan(3000 + 3000);

    expect((await gw.admin.patch('/apis/apps/v1/namespaces/default/replicasets/le/scale', { spec: { replicas: 8 } }, 'application/merge-patch+json')).status).toBe(200);
    await eventually('8 pods', async () => ((await podNames()).length === 8 ? true : undefined));
    // Stays at exactly 8: no instance double-creates.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await podNames()).toHaveLength(8);
  });
});
