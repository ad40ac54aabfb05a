import type { storageV1 } from '@orch/api';
import { defineKind } from '../binding';

/** storage.orch.io/v1 CSINodes: nothing special. */
export const csiNodes = defineKind<storageV1.CSINode>({ group: 'storage.orch.io', resource: 'csinodes' });
