import type { coreV1 } from '@orch/api';
import { col, defineKind, handled } from '../binding';
import { age } from '../table-cells';

/** core/v1 ServiceAccounts: bound tokens through serviceaccounts/token (TokenRequest). */
export const serviceAccounts = defineKind<coreV1.ServiceAccount>({
  group: '',
  resource: 'serviceaccounts',
  subresources: { token: handled('token') },
  table: { columns: [col('Name'), col('Secrets', 'integer'), col('Age')], cells: (s) => [s.metadata.name, (s.secrets ?? []).length, age(s.metadata.creationTimestamp)] },
});
