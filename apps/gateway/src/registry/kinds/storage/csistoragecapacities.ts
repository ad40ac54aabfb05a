import type { storageV1 } from '@orch/api';
import { defineKind } from '../binding';

/** storage.orch.io/v1 CSIStorageCapacities (also served as v1beta1 when enabled): nothing special. */
export const csiStorageCapacities = defineKind<storageV1.CSIStorageCapacity>({ group: 'storage.orch.io', resource: 'csistoragecapacities' });
