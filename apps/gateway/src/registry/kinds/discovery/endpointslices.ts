import type { discoveryV1 } from '@orch/api';
import { col, createOnUpdateStrategy, defineKind } from '../binding';
import { age, firstThree } from '../table-cells';

/** discovery.orch.io/v1 EndpointSlices: PUT creates (upstream). */
export const endpointSlices = defineKind<discoveryV1.EndpointSlice>({
  group: 'discovery.orch.io',
  resource: 'endpointslices',
  strategy: createOnUpdateStrategy,
  table: {
    columns: [col('Name'), col('AddressType'), col('Ports'), col('Endpoints'), col('Age')],
    cells: (s) => {
      const ports = (s.ports ?? []).map((p) => p.port).filter((p) => p !== undefined);
      const addrs = (s.endpoints ?? []).flatMap((e) => e.addresses ?? []);
      return [s.metadata.name, s.addressType ?? '', ports.length ? ports.join(',') : '<unset>', firstThree(addrs, '<unset>'), age(s.metadata.creationTimestamp)];
    },
  },
});
