import type { FeatureGates } from '@orch/api';
import { parseNodePortRange, parseServiceCidr, type NodePortRange, type ServiceCidr } from './ranges';

export { ServiceAddresses, IP_ADDRESS_PREFIX, NODE_PORT_PREFIX } from './addresses';
export { ServiceAddressRepair } from './repair';
export type { RepairOptions, RepairReport } from './repair';
export { serviceStrategy } from './strategy';

/** Name of the readyz check that waits for the first repair pass (upstream's post-start hook). */
export const REPAIR_HEALTH_CHECK = 'poststarthook/start-service-ip-repair-controllers';

/**
 * The service ranges from the gateway flags (`--service-cluster-ip-range`,
 * `--service-node-port-range`; the ServiceIPStaticSubrange gate decides whether the cluster
 * IP range has a lower band). Throws a start-up error for a bad range.
 */
export function serviceRangesFromFlags(
  flags: { 'service-cluster-ip-range': string; 'service-node-port-range': string },
  features: FeatureGates,
): { cidr: ServiceCidr; nodePorts: NodePortRange } {
  return {
    cidr: parseServiceCidr(flags['service-cluster-ip-range'], features.enabled('ServiceIPStaticSubrange')),
    nodePorts: parseNodePortRange(flags['service-node-port-range']),
  };
}
