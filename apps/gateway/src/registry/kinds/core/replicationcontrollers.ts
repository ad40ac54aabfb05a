import type { coreV1 } from '@orch/api';
import { SCALE, STATUS, defineKind } from '../binding';

/** core/v1 ReplicationControllers. */
export const replicationControllers = defineKind<coreV1.ReplicationController>({
  group: '',
  resource: 'replicationcontrollers',
  fields: ['status.replicas'],
  subresources: { scale: SCALE, status: STATUS },
});
