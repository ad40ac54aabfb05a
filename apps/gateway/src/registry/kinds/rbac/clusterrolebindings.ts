import type { rbacV1 } from '@orch/api';
import { defineKind } from '../binding';
import { bindingStrategy, bindingTable } from './rolebindings';

/** rbac.authorization.orch.io/v1 ClusterRoleBindings (ServiceAccount subjects name their namespace). */
export const clusterRoleBindings = defineKind<rbacV1.ClusterRoleBinding>({ group: 'rbac.authorization.orch.io', resource: 'clusterrolebindings', strategy: bindingStrategy(false), table: bindingTable });
