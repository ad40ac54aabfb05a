import type { coreV1 } from '@orch/api';
import { STATUS, defineKind } from '../binding';

/** core/v1 PersistentVolumes. */
export const persistentVolumes = defineKind<coreV1.PersistentVolume>({ group: '', resource: 'persistentvolumes', subresources: { status: STATUS } });
