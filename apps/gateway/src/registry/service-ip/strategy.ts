import type { Strategy } from '../strategy';
import type { ServiceAddresses } from './addresses';
import { externallyAccessible, needsClusterIP, needsHealthCheckNodePort, needsNodePorts, type Service } from './service';
import { validateService, validateServiceUpdate } from './validation';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * upstream NormalizeClusterIPs: a client that sets only `clusterIP` gets `clusterIPs` to
 * match; on update, a changed `clusterIP` with unchanged `clusterIPs` wins.
 */
export function normalizeClusterIPs(svc: Service, old: Service | undefined): void {
  const spec = svc.spec;
  if (!spec) return;
  if (!old) {
    if (spec.clusterIP && !(spec.clusterIPs ?? []).length) spec.clusterIPs = [spec.clusterIP];
    return;
  }
  if (spec.clusterIP !== old.spec?.clusterIP && same(spec.clusterIPs, old.spec?.clusterIPs)) {
    if (spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
    else delete spec.clusterIPs;
  }
}

/**
 * upstream patchAllocatedValues: an update that leaves out values the gateway allocated
 * (clusterIP(s), node ports by port name, health-check node port) keeps the old ones, so a
 * client may PUT a manifest that never named them.
 */
export function patchAllocatedValues(svc: Service, old: Service): void {
  const spec = (svc.spec ??= {});
  const before = old.spec ?? {};
  if (needsClusterIP(old) && needsClusterIP(svc)) {
    if (!spec.clusterIP && before.clusterIP) spec.clusterIP = before.clusterIP;
    if (!(spec.clusterIPs ?? []).length && before.clusterIPs?.length) spec.clusterIPs = [...before.clusterIPs];
  }
  if (needsNodePorts(old) && needsNodePorts(svc)) {
    const byName = new Map((before.ports ?? []).map((p) => [p.name ?? '', p.nodePort]));
    for (const p of spec.ports ?? []) if (!p.nodePort && byName.get(p.name ?? '')) p.nodePort = byName.get(p.name ?? '');
  }
  if (needsHealthCheckNodePort(old) && needsHealthCheckNodePort(svc) && !spec.healthCheckNodePort && before.healthCheckNodePort) {
    spec.healthCheckNodePort = before.healthCheckNodePort;
  }
}

/**
 * upstream dropTypeDependentFields: when the type changes so that a field no longer applies,
 * and the client left the field as it was, the field is cleared (and its allocation freed
 * once the update is written).
 */
export function dropTypeDependentFields(svc: Service, old: Service): void {
  const spec = (svc.spec ??= {});
  const before = old.spec ?? {};
  if (needsClusterIP(old) && !needsClusterIP(svc)) {
    if (spec.clusterIP === before.clusterIP && same(spec.clusterIPs, before.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, before.ipFamilies)) delete spec.ipFamilies;
    if (spec.ipFamilyPolicy === before.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  if (needsNodePorts(old) && !needsNodePorts(svc) && same(spec.ports?.map((p) => p.nodePort), before.ports?.map((p) => p.nodePort))) {
    for (const p of spec.ports ?? []) delete p.nodePort;
  }
  if (needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(svc) && spec.healthCheckNodePort === before.healthCheckNodePort) {
    delete spec.healthCheckNodePort;
  }
  if (before.type === 'LoadBalancer' && spec.type !== 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === before.allocateLoadBalancerNodePorts) {
    delete spec.allocateLoadBalancerNodePorts;
  }
  if (externallyAccessible(old) && !externallyAccessible(svc) && spec.externalTrafficPolicy === before.externalTrafficPolicy) {
    delete spec.externalTrafficPolicy;
  }
}

/**
 * The Service strategy: DNS-1035 names, normalization, validation (SPEC "Service resource
 * fields") and address allocation through `addresses`.
 */
export function serviceStrategy(addresses: ServiceAddresses): Strategy<Service> {
  return {
    nameRule: 'dns1035Label',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate(svc) {
      svc.status = { loadBalancer: {} };
      normalizeClusterIPs(svc, undefined);
    },
    prepareForUpdate(svc, old) {
      patchAllocatedValues(svc, old);
      normalizeClusterIPs(svc, old);
      dropTypeDependentFields(svc, old);
    },
    validate: (svc) => validateService(svc),
    validateUpdate: (svc, old) => validateServiceUpdate(svc, old),
    allocate: (svc, old, ctx) => addresses.allocate(svc, old, ctx.dryRun),
    release: (svc) => addresses.release(svc),
  };
}
