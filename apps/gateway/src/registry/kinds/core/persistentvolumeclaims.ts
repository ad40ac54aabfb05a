import type { coreV1 } from '@orch/api';
import { STATUS, col, defineKind } from '../binding';
import { age, orNone } from '../table-cells';

/** core/v1 PersistentVolumeClaims. */
export const persistentVolumeClaims = defineKind<coreV1.PersistentVolumeClaim>({
  group: '',
  resource: 'persistentvolumeclaims',
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Status'), col('Volume'), col('Capacity'), col('Access Modes'), col('StorageClass'), col('Age'), col('VolumeMode', 'string', 1)],
    cells: (p) => [p.metadata.name, p.status?.phase ?? '', p.spec?.volumeName ?? '', p.status?.capacity?.storage ?? '', (p.status?.accessModes ?? []).join(','), orNone(p.spec?.storageClassName), age(p.metadata.creationTimestamp), p.spec?.volumeMode ?? 'Filesystem'],
  },
});
