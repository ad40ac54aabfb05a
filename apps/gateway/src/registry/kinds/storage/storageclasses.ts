import type { storageV1 } from '@orch/api';
import { defineKind } from '../binding';

/** storage.orch.io/v1 StorageClasses: nothing special. */
export const storageClasses = defineKind<storageV1.StorageClass>({ group: 'storage.orch.io', resource: 'storageclasses' });
