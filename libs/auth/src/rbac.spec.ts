import { nonResourceAttributes, resourceAttributes, type AuthorizationAttributes } from './authz';
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS, bootstrapRoles, bootstrapRoleBindings, reconcileDefault, withSettledAggregation } from './bootstrap-policy';
import { RbacIndex, aggregatedRules, rbacAuthorizer, ruleString, uncoveredRules, type BindingObject, type PolicyRule, type RoleObject } from './rbac';
import type { UserInfo } from './user';

const RBAC = 'rbac.authorization.orch.io';
const role = (name: string, rules: PolicyRule[], namespace?: string, labels?: Record<string, string>): RoleObject => ({ metadata: { name, namespace, labels }, rules });
const binding = (name: string, roleKind: 'Role' | 'ClusterRole', roleName: string, subjects: BindingObject['subjects'], namespace?: string): BindingObject => ({
  metadata: { name, namespace },
  roleRef: { apiGroup: RBAC, kind: roleKind, name: roleName },
  subjects,
});

const who = (username: string, ...groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'] });
const res = (user: UserInfo, verb: string, resource: string, namespace = '', name = '', apiGroup = '', subresource = ''): AuthorizationAttributes =>
  resourceAttributes(user, { verb, resource, namespace, name, apiGroup, subresource, apiVersion: 'v1' });
const url = (user: UserInfo, verb: string, path: string): AuthorizationAttributes => nonResourceAttributes(user, verb, path);

const WIDGETS_VIEW = role('widgets-view', [{ verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] }], undefined, { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });

function policy(): RbacIndex {
  const index = new RbacIndex();
  // An aggregated piece added later (k8s.io label spelling): view, and through it edit and admin,
  // hold its rules once aggregated (the controller's work, settled here).
  for (const r of withSettledAggregation([...BOOTSTRAP_CLUSTER_ROLES, WIDGETS_VIEW])) index.upsert('ClusterRole', r);
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) index.upsert('ClusterRoleBinding', b);
  for (const r of bootstrapRoles(true)) index.upsert('Role', r);
  for (const b of bootstrapRoleBindings(true)) index.upsert('RoleBinding', b);
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
  const signer = who('system:serviceaccount:orch-system:bootstrap-signer', 'system:serviceaccounts', 'system:serviceaccounts:orch-system');

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
    // a ServiceAccount subject is its user name exactly (upstream appliesTo): not another namespace's account, not a longer name
    { a: res(who('system:serviceaccount:other:hpa'), 'patch', 'deployments', 'any', 'd', 'apps', 'scale'), allowed: false },
    { a: res(who('system:serviceaccount:kube:hpa:x'), 'patch', 'deployments', 'any', 'd', 'apps', 'scale'), allowed: false },
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
    // kube-public (compatibility option): the same cluster-info rules as orch-public
    { a: res(anonymous, 'get', 'configmaps', 'kube-public', 'cluster-info'), allowed: true },
    { a: res(anonymous, 'get', 'configmaps', 'kube-public', 'other'), allowed: false },
    { a: res(signer, 'create', 'configmaps', 'kube-public'), allowed: true },
    { a: res(signer, 'update', 'configmaps', 'kube-public', 'cluster-info'), allowed: true },
    { a: res(signer, 'update', 'configmaps', 'kube-public', 'other'), allowed: false },
    { a: res(signer, 'update', 'configmaps', 'orch-public', 'cluster-info'), allowed: true },
    { a: res(signer, 'create', 'configmaps', 'default'), allowed: false },
    { a: res(alice, 'create', 'selfsubjectaccessreviews', '', '', 'authorization.k8s.io'), allowed: true },
    // cluster-admin through system:masters
    { a: res(admin, 'delete', 'nodes', '', 'n', ''), allowed: true },
    { a: url(admin, 'put', '/anything'), allowed: true },
  ])('$a.user.username $a.verb $a.resource$a.path $a.subresource in "$a.namespace" → $allowed', ({ a, allowed }) => {
    expect((authz.authorize(a) as { decision: string }).decision).toBe(allowed ? 'allow' : 'no-opinion');
  });

  it('an aggregated role grants what it holds: a piece not yet aggregated grants nothing through it', () => {
    const index = new RbacIndex();
    for (const r of BOOTSTRAP_CLUSTER_ROLES) index.upsert('ClusterRole', r);
    index.upsert('ClusterRole', WIDGETS_VIEW);
    index.upsert('ClusterRoleBinding', binding('bob-views', 'ClusterRole', 'view', [{ kind: 'User', name: 'bob' }]));
    const authz = rbacAuthorizer(index);
    expect((authz.authorize(res(bob, 'list', 'deployments', 'x', '', 'apps')) as { decision: string }).decision).toBe('allow');
    expect((authz.authorize(res(bob, 'get', 'widgets', 'x', 'w', 'example.com')) as { decision: string }).decision).toBe('no-opinion');
  });

  it('a removed binding no longer allows', () => {
    const index = policy();
    const a = res(alice, 'get', 'pods', 'team', 'p');
    expect((rbacAuthorizer(index).authorize(a) as { decision: string }).decision).toBe('allow');
    index.remove('RoleBinding', 'team', 'alice-reads');
    expect((rbacAuthorizer(index).authorize(a) as { decision: string }).decision).toBe('no-opinion');
  });
});

describe('aggregatedRules (what the clusterrole-aggregation controller writes)', () => {
  const r1 = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const r2 = { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] };
  const r3 = { verbs: ['get'], nonResourceURLs: ['/x'] };
  const agg = (selectors: NonNullable<RoleObject['aggregationRule']>['clusterRoleSelectors'], own: PolicyRule[] = []): RoleObject => ({ metadata: { name: 'agg', labels: { team: 'a' } }, rules: own, aggregationRule: { clusterRoleSelectors: selectors } });
  const pieces = [
    role('b-piece', [r2, r1], undefined, { team: 'a', tier: 'gold' }),
    role('a-piece', [r1], undefined, { team: 'a' }),
    role('c-piece', [r3], undefined, { team: 'b' }),
    role('unlabelled', [r3]),
  ];
  it.each([
    { name: 'matchLabels: matched pieces by name, each rule once; its own rules dropped', role: agg([{ matchLabels: { team: 'a' } }], [r3]), want: [r1, r2] },
    { name: 'several selectors: in selector order', role: agg([{ matchLabels: { team: 'b' } }, { matchLabels: { team: 'a' } }]), want: [r3, r1, r2] },
    { name: 'matchExpressions In / Exists / DoesNotExist', role: agg([{ matchExpressions: [{ key: 'team', operator: 'In', values: ['b'] }] }, { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }]), want: [r3, r2, r1] },
    { name: 'NotIn matches pieces without the label too', role: agg([{ matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] }]), want: [r3] },
    { name: 'no piece matches: no rules', role: agg([{ matchLabels: { team: 'z' } }], [r1]), want: [] },
    { name: 'not aggregated', role: role('plain', [r1]), want: undefined },
  ])('$name', ({ role: r, want }) => {
    expect(aggregatedRules(r, [...pieces, r])).toEqual(want);
  });

  it('bootstrap view → edit → admin settle: admin holds everything edit and view hold', () => {
    const byName = new Map(BOOTSTRAP_CLUSTER_ROLES.map((r) => [r.metadata.name, r.rules ?? []]));
    expect(uncoveredRules(byName.get('edit')!, byName.get('view')!)).toEqual([]);
    expect(uncoveredRules(byName.get('admin')!, byName.get('edit')!)).toEqual([]);
    expect(byName.get('view')!.length).toBeGreaterThan(0);
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
