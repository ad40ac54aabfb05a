import type { coordinationV1 } from '@orch/api';
import { col, createOnUpdateStrategy, defineKind } from '../binding';
import { age } from '../table-cells';

/** coordination.orch.io/v1 Leases: PUT creates (upstream). */
export const leases = defineKind<coordinationV1.Lease>({
  group: 'coordination.orch.io',
  resource: 'leases',
  strategy: createOnUpdateStrategy,
  table: { columns: [col('Name'), col('Holder'), col('Age')], cells: (l) => [l.metadata.name, l.spec?.holderIdentity ?? '', age(l.metadata.creationTimestamp)] },
});
