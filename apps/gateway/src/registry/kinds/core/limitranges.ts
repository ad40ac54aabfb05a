import type { coreV1 } from '@orch/api';
import { createOnUpdateStrategy, defineKind } from '../binding';

/** core/v1 LimitRanges: PUT creates (upstream). */
export const limitRanges = defineKind<coreV1.LimitRange>({ group: '', resource: 'limitranges', strategy: createOnUpdateStrategy });
