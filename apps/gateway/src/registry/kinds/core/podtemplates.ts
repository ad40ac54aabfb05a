import type { coreV1 } from '@orch/api';
import { defineKind } from '../binding';

/** core/v1 PodTemplates: nothing special. */
export const podTemplates = defineKind<coreV1.PodTemplate>({ group: '', resource: 'podtemplates' });
