import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, type RunningProcess } from '@orch/testing';
import { startControllerManager } from '../support/controller-manager';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from '../support/gateway';
import { kubectlSync } from '../support/kubectl';

// One identity per controller (--use-service-account-credentials, on by default): a real
// controller-manager started with its own component credential (system:orch-controller-manager,
// which may read everything but write no workload) runs the deployment and replicaset
// controllers against a real gateway with Node,RBAC. Each acts as its service account
// orch-system/<controller> with the role system:controller:<controller>: a Deployment gets its
// pods only because the replicaset controller's own role allows pod creation; taking that one
// permission away makes the replicaset controller fail under its own name, and a deleted
// account is re-created with a fresh token.

const NS = 'identities';
const RS_ROLE = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:replicaset-controller';
const account = (name: string) => `system:serviceaccount:orch-system:${name}`;

let gw: GatewayProcess;
let cm: RunningProcess;
let cacheDir: string;

const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir }, args);
const canI = (as: string, ...args: string[]) => kubectl('auth', 'can-i', `--as=${as}`, ...args).out.trim();

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
}
const livePods = async (): Promise<Pod[]> => ((await gw.admin.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`)).json as { items: Pod[] }).items.filter((p) => !p.metadata.deletionTimestamp);
const podCount = (n: number) => async () => ((await livePods()).length === n ? true : undefined);

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'orch-identities-kubectl-'));
  gw = await startGateway({ args: ['--write-component-kubeconfigs'] });
  const cmKubeconfig = join(gw.dataDir, 'controller-manager.kubeconfig');
  await eventually('the controller-manager kubeconfig', () => (existsSync(cmKubeconfig) ? true : undefined), 10_000);
  cm = await startControllerManager(cmKubeconfig, ['deployment', 'replicaset', ...POD_CONTROLLERS]);
  expect(kubectl('create', 'namespace', NS).code).toBe(0);
  await defaultServiceAccount(gw.admin, NS);
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await gw?.stop();
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});

describe('one identity per controller', () => {
  it.each([
    { who: account('replicaset-controller'), args: ['create', 'pods', '-n', NS], want: 'yes' },
    { who: account('deployment-controller'), args: ['create', 'pods', '-n', NS], want: 'no' },
    { who: account('deployment-controller'), args: ['create', 'replicasets.apps', '-n', NS], want: 'yes' },
    { who: account('replicaset-controller'), args: ['create', 'replicasets.apps', '-n', NS], want: 'no' },
    { who: account('replicaset-controller'), args: ['update', 'replicasets.apps', '--subresource=status', '-n', NS], want: 'yes' },
    { who: account('deployment-controller'), args: ['delete', 'pods', '-n', NS], want: 'no' },
    { who: account('namespace-controller'), args: ['delete', 'pods', '-n', NS], want: 'yes' },
    { who: account('namespace-controller'), args: ['create', 'pods', '-n', NS], want: 'no' },
    { who: account('token-cleaner'), args: ['delete', 'secrets', '-n', 'orch-system'], want: 'yes' },
    { who: account('token-cleaner'), args: ['delete', 'secrets', '-n', NS], want: 'no' },
    { who: account('generic-garbage-collector'), args: ['create', 'pods', '-n', NS], want: 'no' },
    // The controller-manager itself: its informers read everything; it writes no workload.
    { who: 'system:orch-controller-manager', args: ['list', 'pods', '--all-namespaces'], want: 'yes' },
    { who: 'system:orch-controller-manager', args: ['create', 'pods', '-n', NS], want: 'no' },
    { who: 'system:orch-controller-manager', args: ['create', 'replicasets.apps', '-n', NS], want: 'no' },
    { who: 'system:orch-controller-manager', args: ['create', 'serviceaccounts/token', '-n', 'orch-system'], want: 'yes' },
  ])('$who: can-i $args → $want', ({ who, args, want }) => {
    expect(canI(who, ...args)).toBe(want);
  });

  it('a Deployment gets its pods: the deployment and replicaset controllers each write as their own account', async () => {
    const created = kubectl('create', 'deployment', 'web', '-n', NS, '--image=registry.example/web:1', '--replicas=2');
    expect(created.err).toBe('');
    await eventually('2 pods', podCount(2), 30_000);
    const accounts = kubectl('get', 'serviceaccounts', '-n', 'orch-system', '-o', 'name').out;
    expect(accounts).toContain('serviceaccount/deployment-controller');
    expect(accounts).toContain('serviceaccount/replicaset-controller');
  });

  it('without its pod-create permission the replicaset controller fails as itself; with it back, it catches up', async () => {
    const role = (await gw.admin.get(RS_ROLE)).json as { rules: { verbs: string[]; resources?: string[] }[] };
    const original = structuredClone(role.rules);
    for (const r of role.rules) if (r.resources?.includes('pods')) r.verbs = r.verbs.filter((v) => v !== 'create');
    expect((await gw.admin.put(RS_ROLE, role)).status).toBe(200);
    await eventually('pod creation denied', () => (canI(account('replicaset-controller'), 'create', 'pods', '-n', NS) === 'no' ? true : undefined), 10_000);

    expect(kubectl('scale', 'deployment', 'web', '-n', NS, '--replicas=3').code).toBe(0);
    const failure = await eventually(
      'a FailedCreate event naming the replicaset controller',
      async () => {
        const events = (await gw.admin.get(`/api/v1/namespaces/${NS}/events`)).json as { items: { reason?: string; message?: string }[] };
        return events.items.find((e) => e.reason === 'FailedCreate')?.message;
      },
      30_000,
    );
    expect(failure).toContain(`"${account('replicaset-controller')}"`);
    expect(failure).toContain('cannot create resource "pods"');
    expect(await livePods()).toHaveLength(2);

    const restored = (await gw.admin.get(RS_ROLE)).json as { rules: unknown[] };
    restored.rules = original;
    expect((await gw.admin.put(RS_ROLE, restored)).status).toBe(200);
    await eventually('3 pods', podCount(3), 60_000);
  });

  it('a deleted controller account is re-created and the controller gets a new token (401 → TokenRequest)', async () => {
    const before = kubectl('get', 'serviceaccount', 'replicaset-controller', '-n', 'orch-system', '-o', 'jsonpath={.metadata.uid}').out;
    expect(before).not.toBe('');
    expect(kubectl('delete', 'serviceaccount', 'replicaset-controller', '-n', 'orch-system').code).toBe(0);
    expect(kubectl('scale', 'deployment', 'web', '-n', NS, '--replicas=4').code).toBe(0);
    await eventually('4 pods', podCount(4), 60_000);
    const after = kubectl('get', 'serviceaccount', 'replicaset-controller', '-n', 'orch-system', '-o', 'jsonpath={.metadata.uid}').out;
    expect(after).not.toBe('');
    expect(after).not.toBe(before);
  });
});
