import type { appsV1 } from '@orch/api';
import { SCALE, STATUS, col, defineKind } from '../binding';
import { age, containerCells } from '../table-cells';

/** apps/v1 StatefulSets. */
export const statefulSets = defineKind<appsV1.StatefulSet>({
  group: 'apps',
  resource: 'statefulsets',
  subresources: { scale: SCALE, status: STATUS },
  table: {
    columns: [col('Name'), col('Ready'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1)],
    cells: (s) => [s.metadata.name, `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`, age(s.metadata.creationTimestamp), ...containerCells(s.spec?.template?.spec)],
  },
});
