import type { storageV1 } from '@orch/api';
import { defineKind } from '../binding';

/** storage.orch.io/v1 CSIDrivers: nothing special. */
export const csiDrivers = defineKind<storageV1.CSIDriver>({ group: 'storage.orch.io', resource: 'csidrivers' });
