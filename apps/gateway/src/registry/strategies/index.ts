import type { ResourceDef } from '@orch/api';
import type { StatusStrategy, Strategy } from '../strategy';
import { defaultStrategy, fieldsFrom, statusSubresource } from './common';
import { crdStrategy, type CrdRuleCheck } from './crd';
import { flowSchemaStrategy, priorityLevelStrategy } from './flowcontrol';
import { csrStrategy } from './csr';
import { coreEventFields, eventsV1Strategy } from './events';
import { ingressStrategy, pdbStrategy } from './networking-policy';
import { secretStrategy } from './secret';
import { webhookStrategy, admissionPolicyStrategy, admissionPolicyBindingStrategy, mutatingPolicyStrategy, mutatingPolicyBindingStrategy } from './webhooks';
import { jobStrategy } from './job';
import { namespaceStrategy } from './namespace';
import { bindingStrategy, nodeStrategy, roleStrategy } from './node-rbac';
import { podStrategy } from './pod';

export { NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL, PROTECTED_NAMESPACES, systemNamespaces } from './namespace';

/** Kinds whose PUT of an absent object creates it (upstream AllowCreateOnUpdate). */
const CREATE_ON_UPDATE = new Set([
  '/endpoints',
  '/events',
  '/limitranges',
  'coordination.orch.io/leases',
  'discovery.orch.io/endpointslices',
  'rbac.authorization.orch.io/roles',
  'rbac.authorization.orch.io/rolebindings',
  'rbac.authorization.orch.io/clusterroles',
  'rbac.authorization.orch.io/clusterrolebindings',
]);

const createOnUpdate: Strategy = { ...defaultStrategy, allowCreateOnUpdate: true };

/** What strategies depend on besides the object: gateway options. */
export interface StrategyOptions {
  /** Compatibility option (--k8s-group-aliases): write the upstream twins of well-known labels. */
  k8sCompatibility: boolean;
  /** Compiles the validation rules of a CRD's schemas (refused when they do not compile or cost too much). */
  crdRuleCheck?: CrdRuleCheck;
}

/** Strategies that depend on the options, keyed like {@link STRATEGIES}. */
const CONFIGURED_STRATEGIES: Record<string, (options: StrategyOptions) => Strategy> = {
  '/namespaces': (o) => namespaceStrategy(o.k8sCompatibility),
  'batch/jobs': (o) => jobStrategy(o.k8sCompatibility),
  'apiextensions.orch.io/customresourcedefinitions': (o) => crdStrategy(o.crdRuleCheck),
};

/** Per-kind strategies keyed by `<group>/<resource>`; anything absent uses the default. */
const STRATEGIES: Record<string, Strategy> = {
  '/pods': podStrategy,
  '/services': { ...defaultStrategy, nameRule: 'dns1035Label', fieldAttributes: fieldsFrom(['spec.clusterIP', 'spec.type']) },
  '/nodes': nodeStrategy,
  '/secrets': secretStrategy,
  '/replicationcontrollers': { ...defaultStrategy, fieldAttributes: fieldsFrom(['status.replicas']) },
  '/events': { ...createOnUpdate, fieldAttributes: coreEventFields },
  'events.orch.io/events': eventsV1Strategy,
  'networking.orch.io/ingresses': ingressStrategy,
  'policy/poddisruptionbudgets': pdbStrategy,
  'admissionregistration.orch.io/mutatingwebhookconfigurations': webhookStrategy(true),
  'admissionregistration.orch.io/validatingwebhookconfigurations': webhookStrategy(false),
  'admissionregistration.orch.io/validatingadmissionpolicies': admissionPolicyStrategy,
  'admissionregistration.orch.io/validatingadmissionpolicybindings': admissionPolicyBindingStrategy,
  'admissionregistration.orch.io/mutatingadmissionpolicies': mutatingPolicyStrategy,
  'admissionregistration.orch.io/mutatingadmissionpolicybindings': mutatingPolicyBindingStrategy,
  'certificates.orch.io/certificatesigningrequests': csrStrategy,
  'flowcontrol.apiserver.orch.io/flowschemas': flowSchemaStrategy,
  'flowcontrol.apiserver.orch.io/prioritylevelconfigurations': priorityLevelStrategy,
  'rbac.authorization.orch.io/roles': roleStrategy(true),
  'rbac.authorization.orch.io/rolebindings': bindingStrategy(true),
  'rbac.authorization.orch.io/clusterroles': roleStrategy(false),
  'rbac.authorization.orch.io/clusterrolebindings': bindingStrategy(false),
};

/** The strategy of a catalog resource. */
export function strategyFor(def: ResourceDef, options: StrategyOptions): Strategy {
  const key = `${def.group}/${def.resource}`;
  return CONFIGURED_STRATEGIES[key]?.(options) ?? STRATEGIES[key] ?? (CREATE_ON_UPDATE.has(key) ? createOnUpdate : defaultStrategy);
}

/** The writable part-of-object subresources (status, finalize) a resource has. */
export function subresourceStrategies(def: ResourceDef, strategy: Strategy): Record<string, StatusStrategy> {
  const out: Record<string, StatusStrategy> = {};
  if (def.subresources.some((s) => s.name === 'status')) out.status = statusSubresource;
  return { ...out, ...(strategy.subresources ?? {}) };
}
