import type { FlowSchema, PolicyRulesWithSubjects, PriorityLevelConfiguration, Subject } from './types';

// The configuration API Priority and Fairness starts with (upstream apiserver/pkg/apis/
// flowcontrol/bootstrap, 1.32, with the orch identities): the mandatory objects are kept as
// they are here; the suggested ones are created when missing and then left to the cluster's
// administrators. A mandatory object whose `apf.orch.io/autoupdate-spec` (or the
// `apf.kubernetes.io` spelling) is "false" keeps the spec it was given.

export const API_VERSION = 'flowcontrol.apiserver.orch.io/v1';
export const AUTOUPDATE_ANNOTATIONS = ['apf.orch.io/autoupdate-spec', 'apf.kubernetes.io/autoupdate-spec'];

const ALL_RESOURCES = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }];
const ALL_NON_RESOURCES = [{ verbs: ['*'], nonResourceURLs: ['*'] }];

const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name } });

const CONTROLLER_MANAGER = 'system:orch-controller-manager';
const SCHEDULER = 'system:orch-scheduler';
const SYSTEM_NAMESPACE = 'orch-system';
const NODE_LEASE_NAMESPACE = 'orch-node-lease';

function level(name: string, shares: number, lendablePercent: number, queuing?: { queues: number; handSize: number; queueLengthLimit: number }): PriorityLevelConfiguration {
  return {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: {
      type: 'Limited',
      limited: { nominalConcurrencyShares: shares, lendablePercent, limitResponse: queuing ? { type: 'Queue', queuing } : { type: 'Reject' } },
    },
  };
}

function schema(name: string, plName: string, matchingPrecedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, ...rules: PolicyRulesWithSubjects[]): FlowSchema {
  return {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: { name },
    spec: { priorityLevelConfiguration: { name: plName }, matchingPrecedence, ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}), rules },
  };
}

const allOf = (...subjects: Subject[]): PolicyRulesWithSubjects => ({ subjects, resourceRules: ALL_RESOURCES, nonResourceRules: ALL_NON_RESOURCES });
const QUEUES_64 = { queues: 64, handSize: 6, queueLengthLimit: 50 };
const QUEUES_128 = { queues: 128, handSize: 6, queueLengthLimit: 50 };

export const MANDATORY_PRIORITY_LEVELS: PriorityLevelConfiguration[] = [
  { apiVersion: API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name: 'exempt' }, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
  level('catch-all', 5, 0),
];

export const MANDATORY_FLOW_SCHEMAS: FlowSchema[] = [
  schema('exempt', 'exempt', 1, undefined, allOf(group('system:masters'))),
  schema('catch-all', 'catch-all', 10000, 'ByUser', allOf(group('system:unauthenticated'), group('system:authenticated'))),
];

export const SUGGESTED_PRIORITY_LEVELS: PriorityLevelConfiguration[] = [
  level('system', 30, 33, QUEUES_64),
  level('node-high', 40, 25, QUEUES_64),
  level('leader-election', 10, 0, { queues: 16, handSize: 4, queueLengthLimit: 50 }),
  level('workload-high', 40, 50, QUEUES_128),
  level('workload-low', 100, 90, QUEUES_128),
  level('global-default', 20, 50, QUEUES_128),
];

const leaseRules = (namespaces: string[]) => [{ verbs: ['get', 'create', 'update'], apiGroups: ['coordination.orch.io'], resources: ['leases'], namespaces }];

export const SUGGESTED_FLOW_SCHEMAS: FlowSchema[] = [
  schema('probes', 'exempt', 2, undefined, {
    subjects: [group('system:unauthenticated'), group('system:authenticated')],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
  }),
  schema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [user(CONTROLLER_MANAGER), user(SCHEDULER), serviceAccount(SYSTEM_NAMESPACE, '*')],
    resourceRules: leaseRules([SYSTEM_NAMESPACE]),
  }),
  schema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [user(CONTROLLER_MANAGER), serviceAccount(SYSTEM_NAMESPACE, 'endpoint-controller')],
    resourceRules: [{ verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }],
  }),
  schema('workload-leader-election', 'leader-election', 200, 'ByUser', { subjects: [serviceAccount(SYSTEM_NAMESPACE, '*')], resourceRules: leaseRules(['*']) }),
  schema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: [group('system:nodes')],
    resourceRules: [
      { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true },
      { verbs: ['*'], apiGroups: ['coordination.orch.io'], resources: ['leases'], namespaces: [NODE_LEASE_NAMESPACE] },
    ],
  }),
  schema('system-nodes', 'system', 500, 'ByUser', allOf(group('system:nodes'))),
  schema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', allOf(user(CONTROLLER_MANAGER))),
  schema('kube-scheduler', 'workload-high', 800, 'ByNamespace', allOf(user(SCHEDULER))),
  schema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', allOf(serviceAccount(SYSTEM_NAMESPACE, '*'))),
  schema('service-accounts', 'workload-low', 9000, 'ByUser', allOf(group('system:serviceaccounts'))),
  schema('global-default', 'global-default', 9900, 'ByUser', allOf(group('system:unauthenticated'), group('system:authenticated'))),
];
