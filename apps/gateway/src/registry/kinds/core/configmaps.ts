import type { coreV1 } from '@orch/api';
import { col, defineKind } from '../binding';
import { age } from '../table-cells';

/** core/v1 ConfigMaps. */
export const configMaps = defineKind<coreV1.ConfigMap>({
  group: '',
  resource: 'configmaps',
  table: {
    columns: [col('Name'), col('Data', 'integer'), col('Age')],
    cells: (c) => [c.metadata.name, Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length, age(c.metadata.creationTimestamp)],
  },
});
