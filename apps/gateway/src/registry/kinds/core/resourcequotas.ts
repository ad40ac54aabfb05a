import type { coreV1 } from '@orch/api';
import { STATUS, defineKind } from '../binding';

/** core/v1 ResourceQuotas (usage in status, written by admission and the quota controller). */
export const resourceQuotas = defineKind<coreV1.ResourceQuota>({ group: '', resource: 'resourcequotas', subresources: { status: STATUS } });
