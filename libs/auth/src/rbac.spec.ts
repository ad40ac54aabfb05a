import type { AuthorizationAttributes } from './authz';
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_ROLES, BOOTSTRAP_ROLE_BINDINGS, reconcileDefault } from './bootstrap-policy';
import { RbacIndex, rbacAuthorizer, ruleString, uncoveredRules, type BindingObject, type PolicyRule, type RoleObject } from './rbac';
import type { UserInfo } from './user';

const RBAC = 'rbac.authorization.orch.io';
const role = (name: string, rules: PolicyRule[], namespace?: string, labels?: Record<string, string>): RoleObject => ({ metadata: { name, namespace, labels }, rules });
const binding = (name: string, roleKind: 'Role' | 'ClusterRole', roleName: string, subjects: BindingObject['subjects'], namespace?: string): BindingObject => ({
  metadata: { name, namespace },
  roleRef: { apiGroup: RBAC, kind: roleKind, name: roleName },
  subjects,
});

const who = (username: string, ...groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'] });
const res = (user: UserInfo, verb: string, resource: string, namespace = '', name = '', apiGroup = '', subresource = ''): AuthorizationAttributes => ({
  user,
  isResourceRequest: true,
  path: '',
  verb,
  apiGroup,
  apiVersion: 'v1',
  resource,
  subresource,
  namespace,
  name,
});
const url = (user: UserInfo, verb: string, path: string): AuthorizationAttributes => ({ user, isResourceRequest: false, path, verb, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' });

function policy(): RbacIndex {
  const index = new RbacIndex();
  for (const r of BOOTSTRAP_CLUSTER_ROLES) index.upsert('ClusterRole', r);
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) index.upsert('ClusterRoleBinding', b);
  for (const r of BOOTSTRAP_ROLES) index.upsert('Role', r);
  for (const b of BOOTSTRAP_ROLE_BINDINGS) index.upsert('RoleBinding', b);
  index.upsert('Role', role('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] }], 'team'));
  index.upsert('RoleBinding', binding('alice-reads', 'Role', 'pod-reader', [{ kind: 'User', name: 'alice' }], 'team'));
  index.upsert('ClusterRole', role('one-secret', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['db'] }]));
  index.upsert('RoleBinding', binding('ops-one-secret', 'ClusterRole', 'one-secret', [{ kind: 'Group', name: 'ops' }], 'team'));
  index.upsert('ClusterRole', role('deploy-scaler', [{ verbs: ['update', 'patch'], apiGroups: ['apps'], resources: ['*/scale'] }]));
  index.upsert('ClusterRoleBinding', binding('scalers', 'ClusterRole', 'deploy-scaler', [{ kind: 'ServiceAccount', name: 'hpa', namespace: 'kube' }]));
  index.upsert('ClusterRole', role('metrics-reader', [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] }]));
  index.upsert('ClusterRoleBinding', binding('metrics', 'ClusterRole', 'metrics-reader', [{ kind: 'User', name: 'prom' }]));
  index.upsert('ClusterRoleBinding', binding('bob-views', 'ClusterRole', 'view', [{ kind: 'User', name: 'bob' }]));
  index.upsert('RoleBinding', binding('carol-edits', 'ClusterRole', 'edit', [{ kind: 'User', name: 'carol' }], 'team'));
  // An aggregated piece added later: view picks it up.
  index.upsert('ClusterRole', role('widgets-view', [{ verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] }], undefined, { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' }));
  return index;
}

describe('RBAC decision matrix', () => {
  const authz = rbacAuthorizer(policy());
  const alice = who('alice');
  const bob = who('bob');
  const carol = who('carol');
  const dave = who('dave', 'ops');
  const hpa = who('system:serviceaccount:kube:hpa', 'system:serviceaccounts', 'system:serviceaccounts:kube');
  const prom = who('prom');
  const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const admin = who('root', 'system:masters');

  it.each([
    // Role in one namespace
    { a: res(alice, 'get', 'pods', 'team', 'p'), allowed: true },
    { a: res(alice, 'list', 'pods', 'team'), allowed: true },
    { a: res(alice, 'get', 'pods', 'team', 'p', '', 'log'), allowed: true },
    { a: res(alice, 'get', 'pods', 'other', 'p'), allowed: false },
    { a: res(alice, 'delete', 'pods', 'team', 'p'), allowed: false },
    { a: res(alice, 'get', 'pods', 'team', 'p', '', 'exec'), allowed: false },
    { a: res(alice, 'list', 'pods'), allowed: false },
    // resourceNames through a group binding
    { a: res(dave, 'get', 'secrets', 'team', 'db'), allowed: true },
    { a: res(dave, 'get', 'secrets', 'team', 'other'), allowed: false },
    { a: res(dave, 'list', 'secrets', 'team'), allowed: false },
    // */subresource wildcard, service-account subject, k8s.io spelling of a group
    { a: res(hpa, 'patch', 'deployments', 'any', 'd', 'apps', 'scale'), allowed: true },
    { a: res(hpa, 'patch', 'deployments', 'any', 'd', 'apps'), allowed: false },
    // nonResourceURLs, exact and prefix
    { a: url(prom, 'get', '/metrics'), allowed: true },
    { a: url(prom, 'get', '/debug/pprof'), allowed: true },
    { a: url(prom, 'post', '/metrics'), allowed: false },
    { a: url(alice, 'get', '/metrics'), allowed: false },
    // aggregated clusterroles: view (with a piece added later), edit contains view
    { a: res(bob, 'list', 'deployments', 'x', '', 'apps'), allowed: true },
    { a: res(bob, 'get', 'widgets', 'x', 'w', 'example.com'), allowed: true },
    { a: res(bob, 'get', 'secrets', 'x', 's'), allowed: false },
    { a: res(bob, 'create', 'pods', 'x'), allowed: false },
    { a: res(carol, 'create', 'pods', 'team'), allowed: true },
    { a: res(carol, 'get', 'secrets', 'team', 's'), allowed: true },
    { a: res(carol, 'get', 'widgets', 'team', 'w', 'example.com'), allowed: true },
    { a: res(carol, 'create', 'pods', 'other'), allowed: false },
    { a: res(carol, 'create', 'roles', 'team', '', 'rbac.authorization.k8s.io'), allowed: false },
    // defaults for everyone
    { a: url(alice, 'get', '/api/v1'), allowed: true },
    { a: url(anonymous, 'get', '/healthz'), allowed: true },
    { a: url(anonymous, 'get', '/readyz/etcd'), allowed: true },
    { a: url(anonymous, 'get', '/api'), allowed: false },
    { a: res(anonymous, 'get', 'configmaps', 'orch-public', 'cluster-info'), allowed: true },
    { a: res(anonymous, 'list', 'configmaps', 'orch-public'), allowed: false },
    { a: res(alice, 'create', 'selfsubjectaccessreviews', '', '', 'authorization.k8s.io'), allowed: true },
    // cluster-admin through system:masters
    { a: res(admin, 'delete', 'nodes', '', 'n', ''), allowed: true },
    { a: url(admin, 'put', '/anything'), allowed: true },
  ])('$a.user.username $a.verb $a.resource$a.path $a.subresource in "$a.namespace" → $allowed', ({ a, allowed }) => {
    expect((authz.authorize(a) as { decision: string }).decision).toBe(allowed ? 'allow' : 'no-opinion');
  });

  it('a removed binding no longer allows', () => {
    const index = policy();
    const a = res(alice, 'get', 'pods', 'team', 'p');
    expect((rbacAuthorizer(index).authorize(a) as { decision: string }).decision).toBe('allow');
    index.remove('RoleBinding', 'team', 'alice-reads');
    expect((rbacAuthorizer(index).authorize(a) as { decision: string }).decision).toBe('no-opinion');
  });
});

describe('escalation check (uncoveredRules)', () => {
  const owned: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'configmaps'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['db'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
  ];
  it.each([
    { name: 'a subset', want: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], missing: [] },
    { name: 'a k8s.io spelling of an owned group', want: [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }], missing: [] },
    { name: 'a named secret owned by name', want: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['db'] }], missing: [] },
    { name: 'a URL under an owned prefix', want: [{ verbs: ['get'], nonResourceURLs: ['/logs/today'] }], missing: [] },
    { name: 'a verb not held', want: [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }], missing: ['{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'] },
    { name: 'all secrets when only one is held', want: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }], missing: ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'] },
    { name: 'a wildcard resource', want: [{ verbs: ['get'], apiGroups: [''], resources: ['*'] }], missing: ['{APIGroups:[""], Resources:["*"], Verbs:["get"]}'] },
  ])('$name', ({ want, missing }) => {
    expect(uncoveredRules(owned, want).map(ruleString)).toEqual(missing);
  });
});

describe('reconcileDefault', () => {
  const wanted = BOOTSTRAP_CLUSTER_ROLES.find((r) => r.metadata.name === 'system:basic-user')!;
  it.each([
    { name: 'absent: created', current: undefined, changed: true },
    { name: 'equal: nothing to do', current: structuredClone(wanted), changed: false },
    { name: 'a rule missing: added back, user rules kept', current: { ...structuredClone(wanted), rules: [{ verbs: ['get'], apiGroups: ['x'], resources: ['y'] }] }, changed: true },
    { name: 'autoupdate off: left alone', current: { ...structuredClone(wanted), rules: [], metadata: { ...wanted.metadata, annotations: { 'rbac.authorization.orch.io/autoupdate': 'false' } } }, changed: false },
  ])('$name', ({ current, changed }) => {
    const next = reconcileDefault(wanted, current);
    expect(next !== undefined).toBe(changed);
    if (next && current) expect(next.rules).toEqual(expect.arrayContaining([...(current.rules ?? []), ...(wanted.rules ?? [])]));
  });
});
