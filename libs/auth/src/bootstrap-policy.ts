import { aggregatedRules, sameRules, type BindingObject, type PolicyRule, type RoleObject, type Subject } from './rbac';

/**
 * The default RBAC policy (upstream plugin/pkg/auth/authorizer/rbac/bootstrappolicy with
 * orch names), reconciled by the gateway at every start: missing objects are created,
 * missing rules and subjects added, nothing users changed is removed; an object annotated
 * `rbac.authorization.orch.io/autoupdate: "false"` is left alone.
 */

export const RBAC_GROUP = 'rbac.authorization.orch.io';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.orch.io/autoupdate';
export const BOOTSTRAPPING_LABEL = 'orch.io/bootstrapping';

/** Identities of the components (their client certificates' common names). */
export const SCHEDULER_USER = 'system:orch-scheduler';
export const CONTROLLER_MANAGER_USER = 'system:orch-controller-manager';
export const NETWORK_PROXY_USER = 'system:orch-proxy';
export const METRICS_SERVER_USER = 'system:orch-metrics-server';
export const NODES_GROUP = 'system:nodes';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const EVENT_WRITE = ['create', 'patch', 'update'];

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => (resourceNames ? { verbs, apiGroups, resources, resourceNames } : { verbs, apiGroups, resources });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

const EVENTS: PolicyRule[] = [rule(EVENT_WRITE, ['', 'events.orch.io'], ['events'])];

function clusterRole(name: string, rules: PolicyRule[], extra: Partial<RoleObject> & { labels?: Record<string, string> } = {}): RoleObject & { apiVersion: string; kind: string } {
  const { labels, ...rest } = extra;
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults', ...labels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    rules,
    ...rest,
  };
}

function binding(kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, roleKind: 'ClusterRole' | 'Role', role: string, subjects: Subject[], namespace?: string): BindingObject & { apiVersion: string; kind: string } {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: roleKind, name: role },
    subjects,
  };
}

const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });
const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });

const aggregateTo = (to: string) => ({ [`rbac.authorization.orch.io/aggregate-to-${to}`]: 'true' });
const aggregationOf = (to: string) => ({
  clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.orch.io/aggregate-to-${to}`]: 'true' } }, { matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' } }],
});

const VIEW_CORE = ['pods', 'pods/log', 'pods/status', 'configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'replicationcontrollers', 'replicationcontrollers/scale', 'replicationcontrollers/status', 'serviceaccounts', 'services', 'services/status', 'bindings', 'events', 'limitranges', 'resourcequotas', 'resourcequotas/status', 'namespaces', 'namespaces/status'];
const WORKLOADS = ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'];

const VIEW_RULES: PolicyRule[] = [
  rule(READ, [''], VIEW_CORE),
  rule(READ, ['apps'], WORKLOADS),
  rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
  rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
  rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
  rule(READ, ['networking.orch.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
  rule(READ, ['discovery.orch.io'], ['endpointslices']),
  rule(READ, ['events.orch.io'], ['events']),
];

const EDIT_RULES: PolicyRule[] = [
  rule(['impersonate'], [''], ['serviceaccounts']),
  rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
  rule(['create'], [''], ['pods/eviction', 'serviceaccounts/token']),
  rule(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
  rule(READ, [''], ['secrets', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'services/proxy']),
  rule(WRITE, ['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
  rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
  rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
  rule(WRITE, ['policy'], ['poddisruptionbudgets']),
  rule(WRITE, ['networking.orch.io'], ['ingresses', 'networkpolicies']),
  rule(WRITE, ['discovery.orch.io'], ['endpointslices']),
  rule(WRITE, ['coordination.orch.io'], ['leases']),
  rule(READ, ['coordination.orch.io'], ['leases']),
];

const ADMIN_RULES: PolicyRule[] = [
  rule(['create'], ['authorization.orch.io'], ['localsubjectaccessreviews']),
  rule([...READ, ...WRITE], [RBAC_GROUP], ['rolebindings', 'roles']),
];

/** upstream NodeRules(): what every node may do besides what the Node authorizer's graph grants. */
export const NODE_RULES: PolicyRule[] = [
  rule(['create'], ['authentication.orch.io'], ['tokenreviews']),
  rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  rule(READ, [''], ['services']),
  rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  rule(['update', 'patch'], [''], ['nodes/status']),
  rule(['update', 'patch'], [''], ['nodes']),
  rule(EVENT_WRITE, ['', 'events.orch.io'], ['events']),
  rule(READ, [''], ['pods']),
  rule(['create', 'delete'], [''], ['pods']),
  rule(['update', 'patch'], [''], ['pods/status']),
  rule(['create'], [''], ['pods/eviction']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.orch.io'], ['leases']),
  rule(['create', 'get', 'list', 'watch'], ['certificates.orch.io'], ['certificatesigningrequests']),
  rule(['get'], ['storage.orch.io'], ['volumeattachments', 'csidrivers']),
  rule(['get', 'list', 'watch'], ['node.orch.io'], ['runtimeclasses']),
];

/**
 * The controller-manager's own identity (upstream system:kube-controller-manager): its shared
 * informers (list/watch of everything), leader election, the service-account token controller
 * (which runs as the controller-manager, as upstream), and what it needs to give every other
 * controller its own identity (`--use-service-account-credentials`: it creates the accounts
 * `orch-system/<controller>` and requests their tokens). Writes to workloads are not here: each
 * controller makes them as `system:serviceaccount:orch-system:<controller>` with its
 * `system:controller:<controller>` role.
 */
const CONTROLLER_MANAGER_RULES: PolicyRule[] = [
  ...EVENTS,
  rule(['create'], ['coordination.orch.io'], ['leases']),
  rule(['get', 'update'], ['coordination.orch.io'], ['leases'], ['controller-manager']),
  rule(['create'], [''], ['secrets', 'serviceaccounts']),
  rule(['delete'], [''], ['secrets']),
  rule(['get'], [''], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
  rule(['update'], [''], ['secrets', 'serviceaccounts']),
  rule(['create'], ['authentication.orch.io'], ['tokenreviews']),
  rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews']),
  rule(['list', 'watch'], ['*'], ['*']),
  rule(['create'], [''], ['serviceaccounts/token']),
];

/** Namespace of the controllers' service accounts (upstream kube-system). */
export const CONTROLLER_NAMESPACE = 'orch-system';
/** Prefix of the per-controller roles (upstream saRolePrefix). */
export const CONTROLLER_ROLE_PREFIX = 'system:controller:';

const CONTROLLER_EVENTS = EVENTS;
const SIGNERS = ['orch.io/kube-apiserver-client', 'orch.io/kube-apiserver-client-kubelet', 'orch.io/kubelet-serving', 'orch.io/legacy-unknown'];

/**
 * One least-privilege role per controller service account (upstream 1.32
 * bootstrappolicy/controller_policy.go, for the controllers orch has, with the same account
 * names), bound to `orch-system/<account>`. Informer reads come from the controller-manager's
 * own identity; these cover each controller's gets and writes.
 */
export const CONTROLLER_ROLE_RULES: Record<string, PolicyRule[]> = {
  'clusterrole-aggregation-controller': [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [RBAC_GROUP], ['clusterroles'])],
  'cronjob-controller': [
    rule(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['cronjobs/status', 'cronjobs/finalizers']),
    rule(['list', 'watch', 'delete'], [''], ['pods']),
    ...CONTROLLER_EVENTS,
  ],
  'daemon-set-controller': [
    rule(READ, ['apps'], ['daemonsets']),
    rule(['update'], ['apps'], ['daemonsets/status', 'daemonsets/finalizers']),
    rule(['list', 'watch'], [''], ['nodes']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
    rule(['create'], [''], ['pods/binding']),
    rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], ['apps'], ['controllerrevisions']),
    ...CONTROLLER_EVENTS,
  ],
  // orch writes the revision annotation with a merge patch (upstream: update).
  'deployment-controller': [
    rule(['get', 'list', 'watch', 'update', 'patch'], ['apps'], ['deployments']),
    rule(['update'], ['apps'], ['deployments/status', 'deployments/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps'], ['replicasets']),
    rule(['get', 'list', 'watch', 'update'], [''], ['pods']),
    ...CONTROLLER_EVENTS,
  ],
  'disruption-controller': [
    rule(READ, ['apps'], ['deployments', 'replicasets', 'statefulsets']),
    rule(READ, [''], ['replicationcontrollers']),
    rule(READ, ['policy'], ['poddisruptionbudgets']),
    rule(['update'], ['policy'], ['poddisruptionbudgets/status']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(['get'], ['*'], ['*/scale']),
    ...CONTROLLER_EVENTS,
  ],
  'endpoint-controller': [
    rule(READ, [''], ['services', 'pods']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [''], ['endpoints']),
    rule(['create'], [''], ['endpoints/restricted']),
    ...CONTROLLER_EVENTS,
  ],
  'endpointslice-controller': [
    rule(READ, [''], ['services', 'pods', 'nodes']),
    rule(['update'], [''], ['services/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete'], ['discovery.orch.io'], ['endpointslices']),
    ...CONTROLLER_EVENTS,
  ],
  'endpointslicemirroring-controller': [
    rule(READ, [''], ['services', 'endpoints']),
    rule(['update'], [''], ['services/finalizers', 'endpoints/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete'], ['discovery.orch.io'], ['endpointslices']),
    ...CONTROLLER_EVENTS,
  ],
  'generic-garbage-collector': [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), ...CONTROLLER_EVENTS],
  'horizontal-pod-autoscaler': [
    rule(READ, ['autoscaling'], ['horizontalpodautoscalers']),
    rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
    rule(['get', 'update'], ['*'], ['*/scale']),
    rule(['list', 'watch'], [''], ['pods']),
    rule(['list', 'watch'], ['metrics.orch.io', 'metrics.k8s.io'], ['pods']),
    rule(READ, ['custom.metrics.orch.io', 'custom.metrics.k8s.io', 'external.metrics.orch.io', 'external.metrics.k8s.io'], ['*']),
    ...CONTROLLER_EVENTS,
  ],
  'job-controller': [
    rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['jobs/status', 'jobs/finalizers']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
    ...CONTROLLER_EVENTS,
  ],
  'namespace-controller': [
    rule(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
    rule(['update'], [''], ['namespaces/finalize', 'namespaces/status']),
    rule(['get', 'list', 'watch', 'delete', 'deletecollection'], ['*'], ['*']),
  ],
  'node-controller': [
    rule(['get', 'list', 'watch', 'update', 'delete', 'patch'], [''], ['nodes']),
    rule(['patch', 'update'], [''], ['nodes/status', 'pods/status']),
    rule(['list', 'watch', 'get', 'delete'], [''], ['pods']),
    ...CONTROLLER_EVENTS,
  ],
  // orch writes the pod's terminal status with an update (upstream: patch).
  'pod-garbage-collector': [
    rule(['list', 'watch', 'delete'], [''], ['pods']),
    rule(READ, [''], ['nodes']),
    rule(['patch', 'update'], [''], ['pods/status']),
  ],
  'replicaset-controller': [
    rule(['get', 'list', 'watch', 'update'], ['apps'], ['replicasets']),
    rule(['update'], ['apps'], ['replicasets/status', 'replicasets/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
    ...CONTROLLER_EVENTS,
  ],
  'resourcequota-controller': [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [''], ['resourcequotas/status']), ...CONTROLLER_EVENTS],
  'root-ca-cert-publisher': [rule(['create', 'update'], [''], ['configmaps']), ...CONTROLLER_EVENTS],
  'service-account-controller': [rule(['create'], [''], ['serviceaccounts']), ...CONTROLLER_EVENTS],
  'statefulset-controller': [
    rule(['list', 'watch'], [''], ['pods']),
    rule(READ, ['apps'], ['statefulsets']),
    rule(['update'], ['apps'], ['statefulsets/status', 'statefulsets/finalizers']),
    rule(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
    rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']),
    rule(['get', 'create', 'list', 'watch', 'update', 'delete'], [''], ['persistentvolumeclaims']),
    rule(['update'], [''], ['pods/finalizers']),
    ...CONTROLLER_EVENTS,
  ],
  'ttl-after-finished-controller': [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), ...CONTROLLER_EVENTS],
  'certificate-controller': [
    rule(['get', 'list', 'watch', 'delete'], ['certificates.orch.io'], ['certificatesigningrequests']),
    rule(['update'], ['certificates.orch.io'], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
    rule(['approve'], ['certificates.orch.io'], ['signers'], ['orch.io/kube-apiserver-client-kubelet']),
    rule(['sign'], ['certificates.orch.io'], ['signers'], SIGNERS),
    rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews']),
    ...CONTROLLER_EVENTS,
  ],
};

/**
 * Controllers whose permissions are namespaced (upstream bootstrappolicy/namespace_policy.go):
 * the bootstrap signer reads token secrets in orch-system and writes `cluster-info` in
 * orch-public; the token cleaner removes expired token secrets in orch-system only.
 */
const CONTROLLER_NAMESPACED_ROLES: { namespace: string; account: string; rules: PolicyRule[] }[] = [
  { namespace: CONTROLLER_NAMESPACE, account: 'bootstrap-signer', rules: [rule(READ, [''], ['secrets'])] },
  // orch's signer also creates cluster-info when it is missing (upstream: kubeadm does).
  { namespace: 'orch-public', account: 'bootstrap-signer', rules: [rule([...READ, 'create'], [''], ['configmaps']), rule(['update'], [''], ['configmaps'], ['cluster-info']), ...EVENTS] },
  { namespace: CONTROLLER_NAMESPACE, account: 'token-cleaner', rules: [rule([...READ, 'delete'], [''], ['secrets']), ...EVENTS] },
];

/** The service accounts the bootstrap policy grants a controller role to (cluster-wide or namespaced). */
export const CONTROLLER_ACCOUNTS: readonly string[] = [...new Set([...Object.keys(CONTROLLER_ROLE_RULES), ...CONTROLLER_NAMESPACED_ROLES.map((r) => r.account)])];

const SCHEDULER_RULES: PolicyRule[] = [
  ...EVENTS,
  rule(['create'], ['coordination.orch.io'], ['leases']),
  rule(['get', 'update', 'list', 'watch'], ['coordination.orch.io'], ['leases']),
  rule(READ, [''], ['nodes', 'namespaces', 'persistentvolumes', 'persistentvolumeclaims', 'replicationcontrollers', 'services', 'configmaps']),
  rule([...READ, 'delete'], [''], ['pods']),
  rule(['create'], [''], ['bindings', 'pods/binding']),
  rule(['patch', 'update'], [''], ['pods/status']),
  rule(READ, ['apps'], ['replicasets', 'statefulsets']),
  rule(READ, ['policy'], ['poddisruptionbudgets']),
  rule(READ, ['scheduling.orch.io'], ['priorityclasses']),
  rule(READ, ['storage.orch.io'], ['csinodes', 'csidrivers', 'csistoragecapacities', 'storageclasses', 'volumeattachments']),
  rule(['create'], ['authentication.orch.io'], ['tokenreviews']),
  rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews']),
];

/**
 * The metrics server (upstream system:metrics-server, system:auth-delegator and
 * extension-apiserver-authentication-reader): it lists nodes and pods, reads the node agents'
 * summaries through the node proxy, delegates authorization, and reads how to authenticate the
 * gateway's front proxy. Registering its APIService is done with other credentials.
 */
const METRICS_SERVER_RULES: PolicyRule[] = [
  rule(READ, [''], ['nodes', 'pods']),
  rule(['get'], [''], ['nodes/proxy']),
  rule(['get', 'list', 'watch'], [''], ['configmaps'], ['extension-apiserver-authentication']),
  rule(['create'], ['authentication.orch.io'], ['tokenreviews']),
  rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews']),
];

/** Reading resource metrics, aggregated into view, edit and admin (upstream system:aggregated-metrics-reader). */
const METRICS_READER_RULES: PolicyRule[] = [rule(READ, ['metrics.orch.io', 'metrics.k8s.io'], ['pods', 'nodes'])];

const NODE_PROXIER_RULES: PolicyRule[] = [
  ...EVENTS,
  rule(['list', 'watch'], [''], ['endpoints', 'services']),
  rule(READ, [''], ['nodes']),
  rule(['list', 'watch'], ['discovery.orch.io'], ['endpointslices']),
];

/**
 * The default ClusterRoles. The aggregated ones (admin, edit, view) ship with the rules of the
 * default pieces already aggregated ({@link withSettledAggregation}), so they grant from the
 * first start; the controller-manager's clusterrole-aggregation controller adds later pieces.
 */
export const BOOTSTRAP_CLUSTER_ROLES = withSettledAggregation([
  clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
  clusterRole('admin', [], { aggregationRule: aggregationOf('admin') }),
  clusterRole('edit', [], { aggregationRule: aggregationOf('edit'), labels: aggregateTo('admin') }),
  clusterRole('view', [], { aggregationRule: aggregationOf('view'), labels: aggregateTo('edit') }),
  clusterRole('system:aggregate-to-admin', ADMIN_RULES, { labels: aggregateTo('admin') }),
  clusterRole('system:aggregate-to-edit', EDIT_RULES, { labels: aggregateTo('edit') }),
  clusterRole('system:aggregate-to-view', VIEW_RULES, { labels: aggregateTo('view') }),
  clusterRole('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/livez/*', '/readyz', '/readyz/*', '/openapi', '/openapi/*', '/version', '/version/'])]),
  clusterRole('system:basic-user', [
    rule(['create'], ['authorization.orch.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    rule(['create'], ['authentication.orch.io'], ['selfsubjectreviews']),
  ]),
  clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*', '/version', '/version/'])]),
  clusterRole('system:monitoring', [urls(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])]),
  clusterRole('system:auth-delegator', [rule(['create'], ['authentication.orch.io'], ['tokenreviews']), rule(['create'], ['authorization.orch.io'], ['subjectaccessreviews'])]),
  clusterRole('system:node', NODE_RULES),
  clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], ['certificates.orch.io'], ['certificatesigningrequests'])]),
  clusterRole('system:certificates.orch.io:certificatesigningrequests:nodeclient', [rule(['create'], ['certificates.orch.io'], ['certificatesigningrequests/nodeclient'])]),
  clusterRole('system:certificates.orch.io:certificatesigningrequests:selfnodeclient', [rule(['create'], ['certificates.orch.io'], ['certificatesigningrequests/selfnodeclient'])]),
  clusterRole('system:orch-scheduler', SCHEDULER_RULES),
  clusterRole('system:orch-controller-manager', CONTROLLER_MANAGER_RULES),
  clusterRole('system:node-proxier', NODE_PROXIER_RULES),
  clusterRole('system:orch-metrics-server', METRICS_SERVER_RULES),
  clusterRole('system:aggregated-metrics-reader', METRICS_READER_RULES, { labels: { ...aggregateTo('view'), ...aggregateTo('edit'), ...aggregateTo('admin') } }),
  ...Object.entries(CONTROLLER_ROLE_RULES).map(([account, rules]) => clusterRole(`${CONTROLLER_ROLE_PREFIX}${account}`, rules)),
]);

/**
 * `roles` with every aggregated role's rules set as the aggregation controller would leave them
 * (applied until nothing changes, so view → edit → admin chains settle).
 */
export function withSettledAggregation<T extends RoleObject>(roles: T[]): T[] {
  const out = roles.map((r) => structuredClone(r));
  for (let pass = 0, changed = true; changed && pass < 8; pass++) {
    changed = false;
    for (const r of out) {
      const rules = aggregatedRules(r, out);
      if (rules && !sameRules(rules, r.rules ?? [])) {
        r.rules = rules;
        changed = true;
      }
    }
  }
  return out;
}

/** The default ClusterRoleBindings. */
export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS = [
  binding('ClusterRoleBinding', 'cluster-admin', 'ClusterRole', 'cluster-admin', [group('system:masters')]),
  binding('ClusterRoleBinding', 'system:discovery', 'ClusterRole', 'system:discovery', [group('system:authenticated')]),
  binding('ClusterRoleBinding', 'system:basic-user', 'ClusterRole', 'system:basic-user', [group('system:authenticated')]),
  binding('ClusterRoleBinding', 'system:public-info-viewer', 'ClusterRole', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
  binding('ClusterRoleBinding', 'system:orch-scheduler', 'ClusterRole', 'system:orch-scheduler', [user(SCHEDULER_USER)]),
  binding('ClusterRoleBinding', 'system:orch-controller-manager', 'ClusterRole', 'system:orch-controller-manager', [user(CONTROLLER_MANAGER_USER)]),
  binding('ClusterRoleBinding', 'system:node-proxier', 'ClusterRole', 'system:node-proxier', [user(NETWORK_PROXY_USER)]),
  binding('ClusterRoleBinding', 'system:orch-metrics-server', 'ClusterRole', 'system:orch-metrics-server', [user(METRICS_SERVER_USER)]),
  binding('ClusterRoleBinding', 'system:node-bootstrapper', 'ClusterRole', 'system:node-bootstrapper', [group('system:bootstrappers')]),
  binding('ClusterRoleBinding', 'system:certificates.orch.io:certificatesigningrequests:nodeclient', 'ClusterRole', 'system:certificates.orch.io:certificatesigningrequests:nodeclient', [group('system:bootstrappers')]),
  binding('ClusterRoleBinding', 'system:certificates.orch.io:certificatesigningrequests:selfnodeclient', 'ClusterRole', 'system:certificates.orch.io:certificatesigningrequests:selfnodeclient', [group(NODES_GROUP)]),
  ...Object.keys(CONTROLLER_ROLE_RULES).map((account) => binding('ClusterRoleBinding', `${CONTROLLER_ROLE_PREFIX}${account}`, 'ClusterRole', `${CONTROLLER_ROLE_PREFIX}${account}`, [serviceAccount(CONTROLLER_NAMESPACE, account)])),
];

/** The namespaces whose `cluster-info` the bootstrap signer keeps: `kube-public` too under the compatibility option. */
function publicNamespaces(k8sCompatibility: boolean): string[] {
  return k8sCompatibility ? ['orch-public', 'kube-public'] : ['orch-public'];
}

/** The controller roles of a namespaced account, with the orch-public ones repeated in every public namespace. */
function namespacedControllerRoles(k8sCompatibility: boolean): { namespace: string; account: string; rules: PolicyRule[] }[] {
  return CONTROLLER_NAMESPACED_ROLES.flatMap((r) => (r.namespace === 'orch-public' ? publicNamespaces(k8sCompatibility).map((namespace) => ({ ...r, namespace })) : [r]));
}

/**
 * Namespaced defaults: anyone may read the signed cluster-info config map of each public
 * namespace (joining nodes have no credentials yet); the namespaced controller roles. With
 * `k8sCompatibility` (the gateway's --k8s-group-aliases, which also creates kube-public) the
 * public-namespace roles are in kube-public too, where stock joiners and the signer look.
 */
export function bootstrapRoles(k8sCompatibility: boolean) {
  return [
    ...publicNamespaces(k8sCompatibility).map((namespace) => ({
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: 'Role',
      metadata: { name: 'system:bootstrap-signer-clusterinfo', namespace, labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
      rules: [rule(['get'], [''], ['configmaps'], ['cluster-info'])],
    })),
    ...namespacedControllerRoles(k8sCompatibility).map(({ namespace, account, rules }) => ({
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: 'Role',
      metadata: { name: `${CONTROLLER_ROLE_PREFIX}${account}`, namespace, labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
      rules,
    })),
  ];
}

/** The bindings of {@link bootstrapRoles}. */
export function bootstrapRoleBindings(k8sCompatibility: boolean) {
  return [
    ...publicNamespaces(k8sCompatibility).map((namespace) =>
      binding('RoleBinding', 'system:bootstrap-signer-clusterinfo', 'Role', 'system:bootstrap-signer-clusterinfo', [user('system:anonymous'), group('system:unauthenticated')], namespace),
    ),
    ...namespacedControllerRoles(k8sCompatibility).map(({ namespace, account }) =>
      binding('RoleBinding', `${CONTROLLER_ROLE_PREFIX}${account}`, 'Role', `${CONTROLLER_ROLE_PREFIX}${account}`, [serviceAccount(CONTROLLER_NAMESPACE, account)], namespace),
    ),
  ];
}

/**
 * The object a reconcile writes, or undefined when `current` already has everything (upstream
 * reconciliation: rules and subjects are added, never removed; aggregation rules are set when
 * missing; autoupdate=false objects are left alone).
 */
export function reconcileDefault<T extends RoleObject | BindingObject>(wanted: T, current: T | undefined): T | undefined {
  if (!current) return wanted;
  if (current.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return undefined;
  const next = structuredClone(current) as T;
  let changed = false;
  if ('roleRef' in wanted) {
    const n = next as BindingObject;
    const subjects = [...(n.subjects ?? [])];
    for (const s of (wanted as BindingObject).subjects ?? []) {
      if (!subjects.some((x) => x.kind === s.kind && x.name === s.name && (x.namespace ?? '') === (s.namespace ?? ''))) {
        subjects.push(s);
        changed = true;
      }
    }
    n.subjects = subjects;
  } else {
    const n = next as RoleObject;
    const w = wanted as RoleObject;
    const rules = [...(n.rules ?? [])];
    for (const r of w.rules ?? []) {
      if (!rules.some((x) => JSON.stringify(x) === JSON.stringify(r))) {
        rules.push(r);
        changed = true;
      }
    }
    n.rules = rules;
    if (w.aggregationRule && !n.aggregationRule) {
      n.aggregationRule = w.aggregationRule;
      changed = true;
    }
  }
  return changed ? next : undefined;
}
