import type { appsV1 } from '@orch/api';
import { SCALE, STATUS, col, defineKind } from '../binding';
import { age, containerCells, selectorText } from '../table-cells';

/** apps/v1 Deployments. */
export const deployments = defineKind<appsV1.Deployment>({
  group: 'apps',
  resource: 'deployments',
  subresources: { scale: SCALE, status: STATUS },
  table: {
    columns: [col('Name'), col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (d) => [d.metadata.name, `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`, d.status?.updatedReplicas ?? 0, d.status?.availableReplicas ?? 0, age(d.metadata.creationTimestamp), ...containerCells(d.spec?.template?.spec), selectorText(d.spec?.selector)],
  },
});
