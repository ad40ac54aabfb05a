import { canonicalGroup, type rbacV1 } from '@orch/api';
import { FieldError, isDNS1123Subdomain, isValidPathSegmentName } from '@orch/apimachinery';
import type { Served, Strategy } from '../../strategy';
import { col, createOnUpdateStrategy, defineKind, type KindTable } from '../binding';
import { age } from '../table-cells';

const RBAC_GROUP = 'rbac.authorization.orch.io';
/** The group a roleRef or a User/Group subject names: ours, or its upstream spelling stock clients send. */
const RBAC_GROUPS = [RBAC_GROUP, 'rbac.authorization.k8s.io'];
const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];

type RoleRef = Partial<rbacV1.RoleRef>;
/** A RoleBinding or ClusterRoleBinding as written: validation trusts none of its fields. */
type Binding = Served<{ roleRef?: RoleRef; subjects?: Partial<rbacV1.Subject>[] }>;

/**
 * upstream ValidateRoleBinding / ValidateClusterRoleBinding: the roleRef names a Role (in a
 * RoleBinding) or a ClusterRole of the RBAC group by a path-segment name; every subject has a
 * name and is a ServiceAccount (core group, with a namespace in a ClusterRoleBinding), a User or
 * a Group (RBAC group).
 */
export function validateBinding(binding: Binding, namespaced: boolean): FieldError[] {
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
export function validateBindingUpdate(binding: Binding, old: Binding, namespaced: boolean): FieldError[] {
  const errs = validateBinding(binding, namespaced);
  const same = (a: RoleRef = {}, b: RoleRef = {}) => canonicalGroup(String(a.apiGroup)) === canonicalGroup(String(b.apiGroup)) && a.kind === b.kind && a.name === b.name;
  if (!same(binding.roleRef, old.roleRef)) errs.push(FieldError.invalid('roleRef', binding.roleRef, 'cannot change roleRef'));
  return errs;
}

/** RoleBindings and ClusterRoleBindings: PUT may create them, names are path segments, roleRef and subjects are validated. */
export const bindingStrategy = (namespaced: boolean): Strategy<Binding> => ({
  ...createOnUpdateStrategy,
  nameRule: 'pathSegment',
  validate: (binding) => validateBinding(binding, namespaced),
  validateUpdate: (binding, old) => validateBindingUpdate(binding, old, namespaced),
});

/** The columns of RoleBindings and ClusterRoleBindings: the role and the subjects by kind. */
export const bindingTable: KindTable<Served<rbacV1.RoleBinding | rbacV1.ClusterRoleBinding>> = {
  columns: [col('Name'), col('Role'), col('Age'), col('Users', 'string', 1), col('Groups', 'string', 1), col('ServiceAccounts', 'string', 1)],
  cells: (b) => {
    const subjects = b.subjects ?? [];
    const of = (kind: string) => subjects.filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name)).join(', ');
    return [b.metadata.name, `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`, age(b.metadata.creationTimestamp), of('User'), of('Group'), of('ServiceAccount')];
  },
};

/** rbac.authorization.orch.io/v1 RoleBindings. */
export const roleBindings = defineKind<rbacV1.RoleBinding>({ group: 'rbac.authorization.orch.io', resource: 'rolebindings', strategy: bindingStrategy(true), table: bindingTable });

