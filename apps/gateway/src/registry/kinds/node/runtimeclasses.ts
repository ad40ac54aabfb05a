import type { nodeV1 } from '@orch/api';
import { defineKind } from '../binding';

/** node.orch.io/v1 RuntimeClasses: nothing special. */
export const runtimeClasses = defineKind<nodeV1.RuntimeClass>({ group: 'node.orch.io', resource: 'runtimeclasses' });
