import { canonicalGroup } from '@orch/api';
import { FieldError, isDNS1123Subdomain, isQualifiedName, isValidPathSegmentName, type KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { defaultStrategy, fieldsFrom } from './common';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

interface NodeLike extends KubeObject {
  spec?: { taints?: { key?: string; effect?: string }[] };
}

/** upstream validateNodeTaints: every taint has a qualified-name key and a known effect. */
export function validateNodeTaints(node: NodeLike): FieldError[] {
  const errs: FieldError[] = [];
  (node.spec?.taints ?? []).forEach((t, i) => {
    const at = `spec.taints[${i}]`;
    if (!t.key) errs.push(FieldError.required(`${at}.key`, ''));
    else errs.push(...isQualifiedName(t.key).map((m) => FieldError.invalid(`${at}.key`, t.key, m)));
    if (!t.effect) errs.push(FieldError.required(`${at}.effect`, ''));
    else if (!TAINT_EFFECTS.includes(t.effect)) errs.push(FieldError.notSupported(`${at}.effect`, t.effect, TAINT_EFFECTS));
  });
  return errs;
}

export const nodeStrategy: Strategy = {
  ...defaultStrategy,
  fieldAttributes: fieldsFrom(['spec.unschedulable']),
  validate: (obj) => validateNodeTaints(obj as NodeLike),
  validateUpdate: (obj) => validateNodeTaints(obj as NodeLike),
};

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  nonResourceURLs?: string[];
}

/**
 * upstream ValidatePolicyRule for each rule of a Role or ClusterRole: at least one verb;
 * either resource rules (apiGroups and resources) or, in a ClusterRole only, non-resource URLs.
 */
export function validatePolicyRules(role: KubeObject & { rules?: PolicyRule[] }, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  (role.rules ?? []).forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (!rule.verbs?.length) errs.push(FieldError.required(`${at}.verbs`, 'verbs must contain at least one value'));
    if (rule.nonResourceURLs?.length) {
      if (namespaced) errs.push(FieldError.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (rule.apiGroups?.length || rule.resources?.length) errs.push(FieldError.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      return;
    }
    if (!rule.apiGroups?.length) errs.push(FieldError.required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!rule.resources?.length) errs.push(FieldError.required(`${at}.resources`, 'resource rules must supply at least one resource'));
  });
  return errs;
}

/** Roles and ClusterRoles: PUT may create them (upstream AllowCreateOnUpdate), names are path segments, rules are validated. */
export const roleStrategy = (namespaced: boolean): Strategy => ({
  ...defaultStrategy,
  allowCreateOnUpdate: true,
  nameRule: 'pathSegment',
  validate: (obj) => validatePolicyRules(obj, namespaced),
  validateUpdate: (obj) => validatePolicyRules(obj, namespaced),
});

const RBAC_GROUP = 'rbac.authorization.orch.io';
/** The group a roleRef or a User/Group subject names: ours, or its upstream spelling stock clients send. */
const RBAC_GROUPS = [RBAC_GROUP, 'rbac.authorization.k8s.io'];
const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

interface BindingLike extends KubeObject {
  roleRef?: RoleRef;
  subjects?: { kind?: string; apiGroup?: string; name?: string; namespace?: string }[];
}

/**
 * upstream ValidateRoleBinding / ValidateClusterRoleBinding: the roleRef names a Role (in a
 * RoleBinding) or a ClusterRole of the RBAC group by a path-segment name; every subject has a
 * name and is a ServiceAccount (core group, with a namespace in a ClusterRoleBinding), a User or
 * a Group (RBAC group).
 */
export function validateBinding(binding: BindingLike, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = binding.roleRef ?? {};
  if (!RBAC_GROUPS.includes(String(ref.apiGroup))) errs.push(FieldError.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', RBAC_GROUPS));
  const refKinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!refKinds.includes(String(ref.kind))) errs.push(FieldError.notSupported('roleRef.kind', ref.kind ?? '', refKinds));
  if (!ref.name) errs.push(FieldError.required('roleRef.name'));
  else errs.push(...isValidPathSegmentName(String(ref.name)).map((m) => FieldError.invalid('roleRef.name', ref.name, m)));
  (Array.isArray(binding.subjects) ? binding.subjects : []).forEach((subject, i) => {
    const at = `subjects[${i}]`;
    const s = subject ?? {};
    if (!s.name) errs.push(FieldError.required(`${at}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.name) errs.push(...isDNS1123Subdomain(String(s.name)).map((m) => FieldError.invalid(`${at}.name`, s.name, m)));
        if (s.apiGroup) errs.push(FieldError.notSupported(`${at}.apiGroup`, s.apiGroup, ['']));
        if (!namespaced && !s.namespace) errs.push(FieldError.required(`${at}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (!s.name) errs.push(FieldError.invalid(`${at}.name`, s.name ?? '', `${s.kind.toLowerCase()} name cannot be empty`));
        if (!RBAC_GROUPS.includes(String(s.apiGroup))) errs.push(FieldError.notSupported(`${at}.apiGroup`, s.apiGroup ?? '', RBAC_GROUPS));
        break;
      default:
        errs.push(FieldError.notSupported(`${at}.kind`, s.kind ?? '', SUBJECT_KINDS));
    }
  });
  return errs;
}

/** upstream ValidateRoleBindingUpdate: a binding's roleRef cannot change (either group spelling is the same group). */
export function validateBindingUpdate(binding: BindingLike, old: BindingLike, namespaced: boolean): FieldError[] {
  const errs = validateBinding(binding, namespaced);
  const same = (a: RoleRef = {}, b: RoleRef = {}) => canonicalGroup(String(a.apiGroup)) === canonicalGroup(String(b.apiGroup)) && a.kind === b.kind && a.name === b.name;
  if (!same(binding.roleRef, old.roleRef)) errs.push(FieldError.invalid('roleRef', binding.roleRef, 'cannot change roleRef'));
  return errs;
}

/** RoleBindings and ClusterRoleBindings: PUT may create them, names are path segments, roleRef and subjects are validated. */
export const bindingStrategy = (namespaced: boolean): Strategy => ({
  ...defaultStrategy,
  allowCreateOnUpdate: true,
  nameRule: 'pathSegment',
  validate: (obj) => validateBinding(obj as BindingLike, namespaced),
  validateUpdate: (obj, old) => validateBindingUpdate(obj as BindingLike, old as BindingLike, namespaced),
});
