import type { appsV1 } from '@orch/api';
import { STATUS, col, defineKind } from '../binding';
import { age, containerCells, selectorText } from '../table-cells';

/** apps/v1 DaemonSets. */
export const daemonSets = defineKind<appsV1.DaemonSet>({
  group: 'apps',
  resource: 'daemonsets',
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Node Selector'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (d) => {
      const st = d.status;
      const ns = d.spec?.template?.spec?.nodeSelector;
      return [d.metadata.name, st?.desiredNumberScheduled ?? 0, st?.currentNumberScheduled ?? 0, st?.numberReady ?? 0, st?.updatedNumberScheduled ?? 0, st?.numberAvailable ?? 0, ns ? selectorText(ns) : '<none>', age(d.metadata.creationTimestamp), ...containerCells(d.spec?.template?.spec), selectorText(d.spec?.selector)];
    },
  },
});
