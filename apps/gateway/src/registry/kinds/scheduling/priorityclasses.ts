import type { schedulingV1 } from '@orch/api';
import { col, defineKind } from '../binding';
import { age } from '../table-cells';

/** scheduling.orch.io/v1 PriorityClasses. */
export const priorityClasses = defineKind<schedulingV1.PriorityClass>({
  group: 'scheduling.orch.io',
  resource: 'priorityclasses',
  table: {
    columns: [col('Name'), col('Value', 'integer'), col('Global-Default', 'boolean'), col('Age'), col('PreemptionPolicy', 'string', 1)],
    cells: (p) => [p.metadata.name, p.value ?? 0, !!p.globalDefault, age(p.metadata.creationTimestamp), p.preemptionPolicy ?? 'PreemptLowerPriority'],
  },
});
