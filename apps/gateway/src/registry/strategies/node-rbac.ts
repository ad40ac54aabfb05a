import { FieldError, isQualifiedName, type KubeObject } from '@orch/apimachinery';
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
