import type { storageV1 } from '@orch/api';
import { STATUS, defineKind } from '../binding';

/** storage.orch.io/v1 VolumeAttachments. */
export const volumeAttachments = defineKind<storageV1.VolumeAttachment>({ group: 'storage.orch.io', resource: 'volumeattachments', subresources: { status: STATUS } });
