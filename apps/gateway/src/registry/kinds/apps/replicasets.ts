import type { appsV1 } from '@orch/api';
import { SCALE, STATUS, col, defineKind } from '../binding';
import { age, containerCells, selectorText } from '../table-cells';

/** apps/v1 ReplicaSets. */
export const replicaSets = defineKind<appsV1.ReplicaSet>({
  group: 'apps',
  resource: 'replicasets',
  subresources: { scale: SCALE, status: STATUS },
  table: {
    columns: [col('Name'), col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (r) => [r.metadata.name, r.spec?.replicas ?? 0, r.status?.replicas ?? 0, r.status?.readyReplicas ?? 0, age(r.metadata.creationTimestamp), ...containerCells(r.spec?.template?.spec), selectorText(r.spec?.selector)],
  },
});
