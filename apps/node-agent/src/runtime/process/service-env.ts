import type { Pod, Service } from '../../api/types';

/**
 * Services in `default` whose variables every container gets, whatever its namespace and
 * enableServiceLinks (upstream: the master service `kubernetes`; here the API's own `orch`
 * and, under the compatibility option, `kubernetes`).
 */
export const API_SERVICE_NAMES = ['orch', 'kubernetes'];
const API_SERVICE_NAMESPACE = 'default';

/** upstream makeEnvVariableName: upper case, `-` → `_`. */
function envName(name: string): string {
  return name.toUpperCase().replace(/-/g, '_');
}

function hasClusterIP(svc: Service): boolean {
  const ip = svc.spec?.clusterIP;
  return !!ip && ip !== 'None' && (svc.spec?.ports?.length ?? 0) > 0;
}

/**
 * The variables of one Service (upstream envvars.FromServices): `<NAME>_SERVICE_HOST`,
 * `<NAME>_SERVICE_PORT` (first port), `<NAME>_SERVICE_PORT_<PORTNAME>` per named port, and the
 * Docker link variables `<NAME>_PORT`, `<NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]`.
 */
export function serviceVariables(svc: Service): Record<string, string> {
  const out: Record<string, string> = {};
  if (!hasClusterIP(svc)) return out;
  const prefix = envName(svc.metadata.name ?? '');
  const ip = svc.spec!.clusterIP!;
  const ports = svc.spec!.ports!;
  out[`${prefix}_SERVICE_HOST`] = ip;
  out[`${prefix}_SERVICE_PORT`] = String(ports[0].port);
  for (const p of ports) if (p.name) out[`${prefix}_SERVICE_PORT_${envName(p.name)}`] = String(p.port);
  const hostPort = ip.includes(':') ? `[${ip}]:` : `${ip}:`;
  ports.forEach((p, i) => {
    const proto = (p.protocol || 'TCP').toLowerCase();
    const url = `${proto}://${hostPort}${p.port}`;
    if (i === 0) out[`${prefix}_PORT`] = url;
    const portPrefix = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
    out[portPrefix] = url;
    out[`${portPrefix}_PROTO`] = proto;
    out[`${portPrefix}_PORT`] = String(p.port);
    out[`${portPrefix}_ADDR`] = ip;
  });
  return out;
}

/**
 * The service-link variables of a pod's containers (upstream kubelet getServiceEnvVarMap):
 * the API Services of `default` always, and with `enableServiceLinks` (default true) every
 * Service of the pod's namespace with a cluster IP. A Service of the pod's namespace wins over
 * an API Service of the same name. Container `env` is applied after these and overrides them.
 */
export function serviceLinkEnv(pod: Pod, services: readonly Service[]): Record<string, string> {
  const ns = pod.metadata.namespace ?? '';
  const links = pod.spec.enableServiceLinks !== false;
  const chosen = new Map<string, Service>();
  for (const svc of services) {
    const name = svc.metadata.name ?? '';
    if (svc.metadata.namespace === API_SERVICE_NAMESPACE && API_SERVICE_NAMES.includes(name) && !chosen.has(name)) chosen.set(name, svc);
  }
  if (links) for (const svc of services) if (svc.metadata.namespace === ns) chosen.set(svc.metadata.name ?? '', svc);
  const out: Record<string, string> = {};
  for (const svc of [...chosen.values()].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) Object.assign(out, serviceVariables(svc));
  return out;
}
