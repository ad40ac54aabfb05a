import type { networkingV1 } from '@orch/api';
import { defineKind } from '../binding';

/** networking.orch.io/v1 IngressClasses: nothing special. */
export const ingressClasses = defineKind<networkingV1.IngressClass>({ group: 'networking.orch.io', resource: 'ingressclasses' });
