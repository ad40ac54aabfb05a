import type { rbacV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Served, Strategy } from '../../strategy';
import { createOnUpdateStrategy, defineKind } from '../binding';

/**
 * upstream ValidatePolicyRule for each rule of a Role or ClusterRole: at least one verb;
 * either resource rules (apiGroups and resources) or, in a ClusterRole only, non-resource URLs.
 */
export function validatePolicyRules(role: { rules?: Partial<rbacV1.PolicyRule>[] }, namespaced: boolean): FieldError[] {
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
export const roleStrategy = (namespaced: boolean): Strategy<Served<rbacV1.Role | rbacV1.ClusterRole>> => ({
  ...createOnUpdateStrategy,
  nameRule: 'pathSegment',
  validate: (role) => validatePolicyRules(role, namespaced),
  validateUpdate: (role) => validatePolicyRules(role, namespaced),
});

/** rbac.authorization.orch.io/v1 Roles. */
export const roles = defineKind<rbacV1.Role>({ group: 'rbac.authorization.orch.io', resource: 'roles', strategy: roleStrategy(true) });

