import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensurePki, issueClientCert, writeKubeconfig, type PolicyRule } from '@orch/auth';
import type { RunningProcess } from '@orch/testing';
import { startControllerManager } from '../support/controller-manager';
import { startGateway, type GatewayProcess } from '../support/gateway';
import { eventually, staysUnchanged } from './support/cluster';

// The clusterrole-aggregation controller, run by a real controller-manager started with its own
// identity (system:orch-controller-manager) and running the controller as its service account
// orch-system/clusterrole-aggregation-controller (nothing but their bootstrap roles), against a real
// gateway with Node,RBAC: a ClusterRole labelled aggregate-to-view lands in view, then edit
// and admin; users bound to view gain it (kubectl auth can-i); unlabelled, it leaves them.

const CLUSTER_ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
// A served resource view does not grant (kubectl sends unknown resources without their group),
// with a verb the controller-manager does not hold itself (it writes it through `escalate`).
const VOLUMES: PolicyRule = { verbs: ['get', 'list', 'create'], apiGroups: [''], resources: ['persistentvolumes'] };

let gw: GatewayProcess;
let cm: RunningProcess;

const rulesOf = async (name: string): Promise<PolicyRule[]> => ((await gw.admin.get(`${CLUSTER_ROLES}/${name}`)).json as { rules?: PolicyRule[] }).rules ?? [];
const holds = (rules: PolicyRule[], r: PolicyRule) => rules.some((x) => JSON.stringify(x) === JSON.stringify(r));
const canI = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, 'auth', 'can-i', ...args], { encoding: 'utf8' }).stdout.trim();

beforeAll(async () => {
  gw = await startGateway();
  const pki = await ensurePki(join(gw.dataDir, 'pki'));
  const identity = await issueClientCert(pki, { cn: 'system:orch-controller-manager', orgs: [] });
  const kubeconfig = join(gw.dataDir, 'controller-manager.kubeconfig');
  await writeKubeconfig(kubeconfig, { server: gw.url, caPem: pki.ca.certPem, clientCertPem: identity.certPem, clientKeyPem: identity.keyPem, user: 'system:orch-controller-manager', context: 'controller-manager' });
  cm = await startControllerManager(kubeconfig, ['clusterrole-aggregation']);
  expect((await gw.admin.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { metadata: { name: 'vera-views' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'vera' }] })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await gw?.stop();
});

describe('clusterrole-aggregation controller (real controller-manager, its own identity)', () => {
  it('the default view, edit and admin are settled at start and stay unchanged (no write loop)', async () => {
    const view = await rulesOf('view');
    expect(view.length).toBeGreaterThan(0);
    expect(canI('list', 'deployments.apps', '--as=vera', '-n', 'default')).toBe('yes');
    expect(await staysUnchanged(async () => (await gw.admin.get(`${CLUSTER_ROLES}/admin`)).json, 1500)).toBe(true);
  });

  it('a piece labelled aggregate-to-view reaches view, edit and admin; a view user gains it; unlabelled, it is removed again', async () => {
    expect(canI('list', 'persistentvolumes', '--as=vera')).toBe('no');
    const created = await gw.admin.post(CLUSTER_ROLES, { metadata: { name: 'volumes-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [VOLUMES] });
    expect(created.status).toBe(201);
    for (const name of ['view', 'edit', 'admin']) await eventually(`${name} holds the volumes rule`, async () => (holds(await rulesOf(name), VOLUMES) ? true : undefined));
    expect(canI('create', 'persistentvolumes', '--as=vera')).toBe('yes');
    expect(canI('delete', 'persistentvolumes', '--as=vera')).toBe('no');

    const piece = (await gw.admin.get(`${CLUSTER_ROLES}/volumes-view`)).json as { metadata: { labels: Record<string, string> } };
    piece.metadata.labels = {};
    expect((await gw.admin.put(`${CLUSTER_ROLES}/volumes-view`, piece)).status).toBe(200);
    for (const name of ['view', 'edit', 'admin']) await eventually(`${name} lost the volumes rule`, async () => (holds(await rulesOf(name), VOLUMES) ? undefined : true));
    expect(canI('list', 'persistentvolumes', '--as=vera')).toBe('no');
  });

  it('a user-made aggregated ClusterRole (matchExpressions) is filled too', async () => {
    const piece = { verbs: ['get'], apiGroups: [''], resources: ['nodes'] };
    expect((await gw.admin.post(CLUSTER_ROLES, { metadata: { name: 'ops-piece', labels: { team: 'ops' } }, rules: [piece] })).status).toBe(201);
    expect((await gw.admin.post(CLUSTER_ROLES, { metadata: { name: 'ops' }, aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'team', operator: 'In', values: ['ops', 'sre'] }] }] } })).status).toBe(201);
    expect(await eventually('ops filled', async () => ((await rulesOf('ops')).length ? rulesOf('ops') : undefined))).toEqual([piece]);
  });
});
