// The built-in resource catalog as plain data. The dashboard's browser bundle imports this module
// (as `@orch/api/catalog`), so it and what it imports stay free of Node and server code: the UI's
// type check (apps/dashboard/ui/tsconfig.json, no Node types) fails otherwise.
import type { ApiDeprecation, ResourceDef, Scope, StorageRef, SubresourceDef, Verb } from './catalog-types';

/** The verbs of an ordinary stored resource. */
export const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const CREATE_ONLY: Verb[] = ['create'];

const status = (kind: string): SubresourceDef => ({ name: 'status', kind, verbs: ['get', 'patch', 'update'] });
const scale: SubresourceDef = { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] };
const proxy = (kind: string): SubresourceDef => ({
  name: 'proxy',
  kind,
  verbs: ['create', 'delete', 'get', 'patch', 'update'],
  stream: true,
});

interface Row {
  resource: string;
  kind: string;
  short?: string[];
  scope?: Scope;
  verbs?: Verb[];
  sub?: SubresourceDef[];
  categories?: string[];
  virtual?: boolean;
  enabled?: boolean;
  singular?: string;
  storage?: StorageRef;
  deprecation?: ApiDeprecation;
}

function group(group: string, version: string, defaultScope: Scope, rows: Row[]): ResourceDef[] {
  return rows.map((r) => ({
    group,
    version,
    resource: r.resource,
    kind: r.kind,
    listKind: `${r.kind}List`,
    singular: r.singular ?? r.kind.toLowerCase(),
    shortNames: r.short ?? [],
    scope: r.scope ?? defaultScope,
    verbs: r.verbs ?? ALL_VERBS,
    subresources: r.sub ?? [],
    categories: r.categories ?? [],
    enabledByDefault: r.enabled ?? true,
    virtual: r.virtual ?? false,
    ...(r.storage ? { storage: r.storage } : {}),
    ...(r.deprecation ? { deprecation: r.deprecation } : {}),
  }));
}

const N: Scope = 'Namespaced';
const C: Scope = 'Cluster';

/**
 * Every group/version/resource of SPEC "Resource types", in discovery order.
 * Groups appear in /apis in the order of their first resource here.
 */
export const BUILTIN_RESOURCES: ResourceDef[] = [
  ...group('', 'v1', N, [
    { resource: 'bindings', kind: 'Binding', verbs: CREATE_ONLY, virtual: true },
    { resource: 'componentstatuses', kind: 'ComponentStatus', short: ['cs'], scope: C, verbs: ['get', 'list'], virtual: true, deprecation: { deprecatedIn: '1.19' } },
    { resource: 'configmaps', kind: 'ConfigMap', short: ['cm'] },
    { resource: 'endpoints', kind: 'Endpoints', short: ['ep'], singular: 'endpoints' },
    { resource: 'events', kind: 'Event', short: ['ev'] },
    { resource: 'limitranges', kind: 'LimitRange', short: ['limits'] },
    {
      resource: 'namespaces',
      kind: 'Namespace',
      short: ['ns'],
      scope: C,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      sub: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }, status('Namespace')],
    },
    { resource: 'nodes', kind: 'Node', short: ['no'], scope: C, sub: [proxy('NodeProxyOptions'), status('Node')] },
    { resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', short: ['pvc'], sub: [status('PersistentVolumeClaim')] },
    { resource: 'persistentvolumes', kind: 'PersistentVolume', short: ['pv'], scope: C, sub: [status('PersistentVolume')] },
    {
      resource: 'pods',
      kind: 'Pod',
      short: ['po'],
      categories: ['all'],
      sub: [
        { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'], stream: true },
        { name: 'binding', kind: 'Binding', verbs: ['create'] },
        { name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
        { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
        { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'], stream: true },
        { name: 'log', kind: 'Pod', verbs: ['get'], stream: true },
        { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'], stream: true },
        proxy('PodProxyOptions'),
        status('Pod'),
      ],
    },
    { resource: 'podtemplates', kind: 'PodTemplate' },
    {
      resource: 'replicationcontrollers',
      kind: 'ReplicationController',
      short: ['rc'],
      categories: ['all'],
      sub: [scale, status('ReplicationController')],
    },
    { resource: 'resourcequotas', kind: 'ResourceQuota', short: ['quota'], sub: [status('ResourceQuota')] },
    { resource: 'secrets', kind: 'Secret' },
    {
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      short: ['sa'],
      sub: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.orch.io', version: 'v1', verbs: ['create'] }],
    },
    {
      resource: 'services',
      kind: 'Service',
      short: ['svc'],
      categories: ['all'],
      sub: [proxy('ServiceProxyOptions'), status('Service')],
    },
  ]),
  ...group('apiregistration.orch.io', 'v1', C, [{ resource: 'apiservices', kind: 'APIService', sub: [status('APIService')] }]),
  ...group('apps', 'v1', N, [
    { resource: 'controllerrevisions', kind: 'ControllerRevision' },
    { resource: 'daemonsets', kind: 'DaemonSet', short: ['ds'], categories: ['all'], sub: [status('DaemonSet')] },
    { resource: 'deployments', kind: 'Deployment', short: ['deploy'], categories: ['all'], sub: [scale, status('Deployment')] },
    { resource: 'replicasets', kind: 'ReplicaSet', short: ['rs'], categories: ['all'], sub: [scale, status('ReplicaSet')] },
    { resource: 'statefulsets', kind: 'StatefulSet', short: ['sts'], categories: ['all'], sub: [scale, status('StatefulSet')] },
  ]),
  // Stored as core Events: `kubectl events` and `describe` (core v1) see what recorders write here.
  ...group('events.orch.io', 'v1', N, [{ resource: 'events', kind: 'Event', short: ['ev'], storage: { group: '', version: 'v1', resource: 'events', kind: 'Event' } }]),
  ...group('authentication.orch.io', 'v1', C, [
    { resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', verbs: CREATE_ONLY, virtual: true },
    { resource: 'tokenreviews', kind: 'TokenReview', verbs: CREATE_ONLY, virtual: true },
  ]),
  ...group('authorization.orch.io', 'v1', C, [
    { resource: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', scope: N, verbs: CREATE_ONLY, virtual: true },
    { resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', verbs: CREATE_ONLY, virtual: true },
    { resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', verbs: CREATE_ONLY, virtual: true },
    { resource: 'subjectaccessreviews', kind: 'SubjectAccessReview', verbs: CREATE_ONLY, virtual: true },
  ]),
  ...group('autoscaling', 'v2', N, [
    { resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', short: ['hpa'], categories: ['all'], sub: [status('HorizontalPodAutoscaler')] },
  ]),
  // Still served by upstream 1.32 (`kubectl autoscale` sends it); stored as autoscaling/v2.
  ...group('autoscaling', 'v1', N, [
    {
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      short: ['hpa'],
      categories: ['all'],
      sub: [status('HorizontalPodAutoscaler')],
      storage: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler' },
    },
  ]),
  ...group('batch', 'v1', N, [
    { resource: 'cronjobs', kind: 'CronJob', short: ['cj'], categories: ['all'], sub: [status('CronJob')] },
    { resource: 'jobs', kind: 'Job', categories: ['all'], sub: [status('Job')] },
  ]),
  ...group('certificates.orch.io', 'v1', C, [
    {
      resource: 'certificatesigningrequests',
      kind: 'CertificateSigningRequest',
      short: ['csr'],
      sub: [{ name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }, status('CertificateSigningRequest')],
    },
  ]),
  ...group('networking.orch.io', 'v1', N, [
    { resource: 'ingressclasses', kind: 'IngressClass', scope: C },
    { resource: 'ingresses', kind: 'Ingress', short: ['ing'], sub: [status('Ingress')] },
    { resource: 'networkpolicies', kind: 'NetworkPolicy', short: ['netpol'] },
  ]),
  ...group('policy', 'v1', N, [
    { resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', short: ['pdb'], sub: [status('PodDisruptionBudget')] },
  ]),
  ...group('rbac.authorization.orch.io', 'v1', C, [
    { resource: 'clusterrolebindings', kind: 'ClusterRoleBinding' },
    { resource: 'clusterroles', kind: 'ClusterRole' },
    { resource: 'rolebindings', kind: 'RoleBinding', scope: N },
    { resource: 'roles', kind: 'Role', scope: N },
  ]),
  ...group('storage.orch.io', 'v1', C, [
    { resource: 'csidrivers', kind: 'CSIDriver' },
    { resource: 'csinodes', kind: 'CSINode' },
    { resource: 'csistoragecapacities', kind: 'CSIStorageCapacity', scope: N },
    { resource: 'storageclasses', kind: 'StorageClass', short: ['sc'] },
    { resource: 'volumeattachments', kind: 'VolumeAttachment', sub: [status('VolumeAttachment')] },
  ]),
  // Served no more since 1.27; SPEC Versioning 2 names it as one a single-resource runtime-config can enable.
  ...group('storage.orch.io', 'v1beta1', N, [
    {
      resource: 'csistoragecapacities',
      kind: 'CSIStorageCapacity',
      enabled: false,
      storage: { group: 'storage.orch.io', version: 'v1', resource: 'csistoragecapacities', kind: 'CSIStorageCapacity' },
      deprecation: { deprecatedIn: '1.24', removedIn: '1.27', replacement: { group: 'storage.orch.io', version: 'v1', kind: 'CSIStorageCapacity' } },
    },
  ]),
  ...group('admissionregistration.orch.io', 'v1', C, [
    { resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', categories: ['api-extensions'] },
    { resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', categories: ['api-extensions'] },
    { resource: 'validatingadmissionpolicies', kind: 'ValidatingAdmissionPolicy', categories: ['api-extensions'], sub: [status('ValidatingAdmissionPolicy')] },
    { resource: 'validatingadmissionpolicybindings', kind: 'ValidatingAdmissionPolicyBinding', categories: ['api-extensions'] },
  ]),
  // Alpha in 1.32: served only with --runtime-config=admissionregistration.k8s.io/v1alpha1=true and
  // --feature-gates=MutatingAdmissionPolicy=true (the gateway unregisters them without the gate).
  ...group('admissionregistration.orch.io', 'v1alpha1', C, [
    { resource: 'mutatingadmissionpolicies', kind: 'MutatingAdmissionPolicy', categories: ['api-extensions'], enabled: false },
    { resource: 'mutatingadmissionpolicybindings', kind: 'MutatingAdmissionPolicyBinding', categories: ['api-extensions'], enabled: false },
  ]),
  ...group('apiextensions.orch.io', 'v1', C, [
    {
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      short: ['crd', 'crds'],
      categories: ['api-extensions'],
      sub: [status('CustomResourceDefinition')],
    },
  ]),
  ...group('scheduling.orch.io', 'v1', C, [{ resource: 'priorityclasses', kind: 'PriorityClass', short: ['pc'] }]),
  ...group('coordination.orch.io', 'v1', N, [{ resource: 'leases', kind: 'Lease' }]),
  ...group('node.orch.io', 'v1', C, [{ resource: 'runtimeclasses', kind: 'RuntimeClass' }]),
  ...group('discovery.orch.io', 'v1', N, [{ resource: 'endpointslices', kind: 'EndpointSlice' }]),
  ...group('flowcontrol.apiserver.orch.io', 'v1', C, [
    { resource: 'flowschemas', kind: 'FlowSchema', sub: [status('FlowSchema')] },
    { resource: 'prioritylevelconfigurations', kind: 'PriorityLevelConfiguration', sub: [status('PriorityLevelConfiguration')] },
  ]),
];
