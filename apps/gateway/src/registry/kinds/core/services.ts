import type { coreV1 } from '@orch/api';
import { serviceStrategy } from '../../service-ip/strategy';
import { STATUS, col, defineKind, handled } from '../binding';
import { age, orNone, selectorText } from '../table-cells';

type Service = coreV1.Service;

function servicePorts(svc: Service): string {
  const ports = svc.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function externalIps(svc: Service): string {
  const type = svc.spec?.type ?? 'ClusterIP';
  const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname);
  const ext = svc.spec?.externalIPs ?? [];
  if (type === 'ExternalName') return svc.spec?.externalName ?? '<none>';
  if (type === 'LoadBalancer') return [...lb, ...ext].join(',') || '<pending>';
  return ext.length ? ext.join(',') : '<none>';
}

/** core/v1 Services: cluster IPs and node ports allocated by the gateway (service-ip/). */
export const services = defineKind<Service>({
  group: '',
  resource: 'services',
  strategy: (deps) => {
    if (!deps.serviceAddresses) throw new Error('services need the service address allocator (KindDeps.serviceAddresses)');
    return serviceStrategy(deps.serviceAddresses);
  },
  fields: ['spec.clusterIP', 'spec.type'],
  subresources: { proxy: handled('serviceProxy'), status: STATUS },
  table: {
    columns: [col('Name'), col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), col('Age'), col('Selector', 'string', 1)],
    cells: (s) => [s.metadata.name, s.spec?.type ?? 'ClusterIP', orNone(s.spec?.clusterIP), externalIps(s), servicePorts(s), age(s.metadata.creationTimestamp), s.spec?.selector ? selectorText(s.spec.selector) : '<none>'],
  },
});
