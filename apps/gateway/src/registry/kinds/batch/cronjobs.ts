import type { batchV1 } from '@orch/api';
import { STATUS, col, defineKind } from '../binding';
import { age, containerCells, orNone, selectorText } from '../table-cells';

/** batch/v1 CronJobs. */
export const cronJobs = defineKind<batchV1.CronJob>({
  group: 'batch',
  resource: 'cronjobs',
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Schedule'), col('Timezone'), col('Suspend', 'boolean'), col('Active', 'integer'), col('Last Schedule'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (c) => {
      const job = c.spec?.jobTemplate?.spec;
      return [c.metadata.name, c.spec?.schedule ?? '', orNone(c.spec?.timeZone), !!c.spec?.suspend, (c.status?.active ?? []).length, c.status?.lastScheduleTime ? age(c.status.lastScheduleTime) : '<none>', age(c.metadata.creationTimestamp), ...containerCells(job?.template?.spec), selectorText(job?.selector)];
    },
  },
});
