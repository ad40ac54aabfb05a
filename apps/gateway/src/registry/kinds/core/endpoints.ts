import type { coreV1 } from '@orch/api';
import { col, createOnUpdateStrategy, defineKind } from '../binding';
import { age, firstThree } from '../table-cells';

/** core/v1 Endpoints: PUT creates (upstream). */
export const endpoints = defineKind<coreV1.Endpoints>({
  group: '',
  resource: 'endpoints',
  strategy: createOnUpdateStrategy,
  table: {
    columns: [col('Name'), col('Endpoints'), col('Age')],
    cells: (e) => {
      const out: string[] = [];
      for (const s of e.subsets ?? []) for (const a of s.addresses ?? []) for (const p of s.ports ?? [{} as coreV1.EndpointPort]) out.push(p.port ? `${a.ip}:${p.port}` : a.ip);
      return [e.metadata.name, firstThree(out, '<none>'), age(e.metadata.creationTimestamp)];
    },
  },
});
