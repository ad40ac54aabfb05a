import type { apiregistrationV1 } from '@orch/api';
import { STATUS, col, defineKind } from '../binding';
import { age } from '../table-cells';

/** apiregistration.orch.io/v1 APIServices (aggregation/ serves the APIs they name). */
export const apiServices = defineKind<apiregistrationV1.APIService>({
  group: 'apiregistration.orch.io',
  resource: 'apiservices',
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Service'), col('Available'), col('Age')],
    cells: (a) => {
      const svc = a.spec?.service;
      const available = (a.status?.conditions ?? []).find((c) => c.type === 'Available');
      const availableText = !available ? 'Unknown' : available.status === 'True' ? 'True' : `${available.status} (${available.reason})`;
      return [a.metadata.name, svc?.name ? `${svc.namespace}/${svc.name}` : 'Local', availableText, age(a.metadata.creationTimestamp)];
    },
  },
});
