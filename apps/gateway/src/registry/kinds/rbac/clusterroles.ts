import type { rbacV1 } from '@orch/api';
import { defineKind } from '../binding';
import { roleStrategy } from './roles';

/** rbac.authorization.orch.io/v1 ClusterRoles (rules may name non-resource URLs). */
export const clusterRoles = defineKind<rbacV1.ClusterRole>({ group: 'rbac.authorization.orch.io', resource: 'clusterroles', strategy: roleStrategy(false) });
