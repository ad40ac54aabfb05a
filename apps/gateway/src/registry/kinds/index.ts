import type { ResourceDef } from '@orch/api';
import { DEFAULT_TABLE_COLUMNS, type TableColumns } from '@orch/apimachinery';
import { resolveBinding, type KindBinding, type KindDeps, type ResolvedKind, type VirtualOperation } from './binding';
import { customTable } from './custom';
import { mutatingAdmissionPolicies } from './admissionregistration/mutatingadmissionpolicies';
import { mutatingAdmissionPolicyBindings } from './admissionregistration/mutatingadmissionpolicybindings';
import { mutatingWebhookConfigurations } from './admissionregistration/mutatingwebhookconfigurations';
import { validatingAdmissionPolicies } from './admissionregistration/validatingadmissionpolicies';
import { validatingAdmissionPolicyBindings } from './admissionregistration/validatingadmissionpolicybindings';
import { validatingWebhookConfigurations } from './admissionregistration/validatingwebhookconfigurations';
import { customResourceDefinitions } from './apiextensions/customresourcedefinitions';
import { apiServices } from './apiregistration/apiservices';
import { controllerRevisions } from './apps/controllerrevisions';
import { daemonSets } from './apps/daemonsets';
import { deployments } from './apps/deployments';
import { replicaSets } from './apps/replicasets';
import { statefulSets } from './apps/statefulsets';
import { selfSubjectReviews } from './authentication/selfsubjectreviews';
import { tokenReviews } from './authentication/tokenreviews';
import { localSubjectAccessReviews } from './authorization/localsubjectaccessreviews';
import { selfSubjectAccessReviews } from './authorization/selfsubjectaccessreviews';
import { selfSubjectRulesReviews } from './authorization/selfsubjectrulesreviews';
import { subjectAccessReviews } from './authorization/subjectaccessreviews';
import { horizontalPodAutoscalers } from './autoscaling/horizontalpodautoscalers';
import { cronJobs } from './batch/cronjobs';
import { jobs } from './batch/jobs';
import { certificateSigningRequests } from './certificates/certificatesigningrequests';
import { leases } from './coordination/leases';
import { bindings } from './core/bindings';
import { componentStatuses } from './core/componentstatuses';
import { configMaps } from './core/configmaps';
import { endpoints } from './core/endpoints';
import { events as coreEvents } from './core/events';
import { limitRanges } from './core/limitranges';
import { namespaces } from './core/namespaces';
import { nodes } from './core/nodes';
import { persistentVolumeClaims } from './core/persistentvolumeclaims';
import { persistentVolumes } from './core/persistentvolumes';
import { pods } from './core/pods';
import { podTemplates } from './core/podtemplates';
import { replicationControllers } from './core/replicationcontrollers';
import { resourceQuotas } from './core/resourcequotas';
import { secrets } from './core/secrets';
import { serviceAccounts } from './core/serviceaccounts';
import { services } from './core/services';
import { endpointSlices } from './discovery/endpointslices';
import { events as eventsV1Events } from './events/events';
import { flowSchemas } from './flowcontrol/flowschemas';
import { priorityLevelConfigurations } from './flowcontrol/prioritylevelconfigurations';
import { ingressClasses } from './networking/ingressclasses';
import { ingresses } from './networking/ingresses';
import { networkPolicies } from './networking/networkpolicies';
import { runtimeClasses } from './node/runtimeclasses';
import { podDisruptionBudgets } from './policy/poddisruptionbudgets';
import { clusterRoleBindings } from './rbac/clusterrolebindings';
import { clusterRoles } from './rbac/clusterroles';
import { roleBindings } from './rbac/rolebindings';
import { roles } from './rbac/roles';
import { priorityClasses } from './scheduling/priorityclasses';
import { csiDrivers } from './storage/csidrivers';
import { csiNodes } from './storage/csinodes';
import { csiStorageCapacities } from './storage/csistoragecapacities';
import { storageClasses } from './storage/storageclasses';
import { volumeAttachments } from './storage/volumeattachments';

export { customKind, NO_RULES, type CustomResourceRules } from './custom';
export type { CrdRuleCheck, KindBinding, KindDeps, ResolvedKind, SubresourceBinding, SubresourceHandler, VirtualOperation } from './binding';
export { systemNamespaces } from './core/namespaces';

/**
 * The binding of every built-in resource (kinds/<group>/<resource>.ts). Adding a built-in kind:
 * its catalog row (libs/api catalog-data.ts), its binding module, and a line here;
 * kinds.spec.ts fails while one of the three is missing.
 */
export const BUILTIN_KINDS: readonly KindBinding[] = [
  mutatingAdmissionPolicies,
  mutatingAdmissionPolicyBindings,
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
  customResourceDefinitions,
  apiServices,
  controllerRevisions,
  daemonSets,
  deployments,
  replicaSets,
  statefulSets,
  selfSubjectReviews,
  tokenReviews,
  localSubjectAccessReviews,
  selfSubjectAccessReviews,
  selfSubjectRulesReviews,
  subjectAccessReviews,
  horizontalPodAutoscalers,
  cronJobs,
  jobs,
  certificateSigningRequests,
  leases,
  bindings,
  componentStatuses,
  configMaps,
  endpoints,
  coreEvents,
  limitRanges,
  namespaces,
  nodes,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  podTemplates,
  replicationControllers,
  resourceQuotas,
  secrets,
  serviceAccounts,
  services,
  endpointSlices,
  eventsV1Events,
  flowSchemas,
  priorityLevelConfigurations,
  ingressClasses,
  ingresses,
  networkPolicies,
  runtimeClasses,
  podDisruptionBudgets,
  clusterRoleBindings,
  clusterRoles,
  roleBindings,
  roles,
  priorityClasses,
  csiDrivers,
  csiNodes,
  csiStorageCapacities,
  storageClasses,
  volumeAttachments,
];

const byResource = new Map(BUILTIN_KINDS.map((b) => [`${b.group}/${b.resource}`, b]));

/** The binding of a built-in catalog entry (every version of its group/resource), or undefined. */
export function bindingOf(def: Pick<ResourceDef, 'group' | 'resource'>): KindBinding | undefined {
  return byResource.get(`${def.group}/${def.resource}`);
}

const bound = new WeakMap<ResourceDef, KindBinding>();

/** The binding of a built-in catalog entry, looked up once per entry; throws for one without. */
function requireBinding(def: ResourceDef): KindBinding {
  const known = bound.get(def);
  if (known) return known;
  const binding = bindingOf(def);
  if (!binding) throw new Error(`${def.resource}.${def.group || 'core'} has no kind binding: add registry/kinds/${def.group.split('.')[0] || 'core'}/${def.resource}.ts and list it in BUILTIN_KINDS`);
  bound.set(def, binding);
  return binding;
}

/** A built-in catalog entry's binding, resolved once (at start-up) with the gateway's dependencies. Throws for a resource without one. */
export function resolveKind(def: ResourceDef, deps: KindDeps): ResolvedKind {
  return resolveBinding(requireBinding(def), deps);
}

/** The store serving a built-in kind (its preferred version) among `registries`, or undefined when the kind is not served. */
export function storeOf<S>(registries: ReadonlyMap<ResourceDef, S>, binding: KindBinding): S | undefined {
  for (const [def, store] of registries) if (def.group === binding.group && def.resource === binding.resource) return store;
  return undefined;
}

const tables = new WeakMap<ResourceDef, TableColumns>();

/** The columns of a resource's Table (the SPEC default when its kind has none of its own), resolved once per catalog entry. */
export function tableFor(def: ResourceDef): TableColumns {
  let table = tables.get(def);
  if (!table) tables.set(def, (table = def.custom ? customTable(def.custom.printerColumns) : ((requireBinding(def).table as TableColumns | undefined) ?? DEFAULT_TABLE_COLUMNS)));
  return table;
}

/** The operation of a virtual resource (server/virtual.ts). Throws for a resource bound as stored. */
export function virtualOperation(def: ResourceDef): VirtualOperation {
  const op = requireBinding(def).virtual;
  if (!op) throw new Error(`${def.resource}.${def.group || 'core'} is virtual in the catalog but its binding names no operation`);
  return op;
}
