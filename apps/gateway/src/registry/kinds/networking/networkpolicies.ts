import type { networkingV1 } from '@orch/api';
import { defineKind } from '../binding';

/** networking.orch.io/v1 NetworkPolicies: nothing special. */
export const networkPolicies = defineKind<networkingV1.NetworkPolicy>({ group: 'networking.orch.io', resource: 'networkpolicies' });
