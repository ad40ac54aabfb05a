import { FieldError, isDNS1123Label, isDNS1123Subdomain } from '@orch/apimachinery';
import { parseIPv4 } from './ranges';
import { CLUSTER_IP_NONE, SERVICE_TYPES, externallyAccessible, isHeadless, needsHealthCheckNodePort, type Service, type ServicePort } from './service';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const AFFINITIES = ['ClientIP', 'None'];
const TRAFFIC_POLICIES = ['Cluster', 'Local'];
const FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
/** upstream MaxClientIPServiceAffinitySeconds (one day). */
const MAX_AFFINITY_SECONDS = 86400;
const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/**
 * Checks a Service after defaulting and normalization (upstream ValidateService, the parts
 * SPEC "Service resource fields" names and what allocation relies on). Pure: never mutates.
 * Whether requested addresses are free and in range is decided by allocation, not here.
 */
export function validateService(svc: Service): FieldError[] {
  const errs: FieldError[] = [];
  const spec = svc.spec ?? {};
  const type = spec.type ?? '';
  if (!SERVICE_TYPES.includes(type)) errs.push(FieldError.notSupported('spec.type', type, SERVICE_TYPES));

  // --- addresses
  const ips = spec.clusterIPs ?? [];
  if (ips.length > 0 && spec.clusterIP !== ips[0]) {
    errs.push(FieldError.invalid('spec.clusterIPs', ips, 'must match `clusterIP` in its first element'));
  }
  if (ips.length > 1) errs.push(FieldError.invalid('spec.clusterIPs', ips, 'may hold at most one address: this cluster is IPv4 single-stack'));
  ips.forEach((ip, i) => {
    if (ip === CLUSTER_IP_NONE) {
      if (i !== 0 || ips.length > 1) errs.push(FieldError.invalid(`spec.clusterIPs[${i}]`, ip, "'None' must be the first and only value"));
    } else if (parseIPv4(ip) === undefined) {
      errs.push(FieldError.invalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IPv4 address (e.g. 10.9.8.7): this cluster is IPv4 single-stack'));
    }
  });
  (spec.ipFamilies ?? []).forEach((f, i) => {
    if (f !== 'IPv4') errs.push(FieldError.invalid(`spec.ipFamilies[${i}]`, f, f === 'IPv6' ? 'not configured on this cluster' : 'must be IPv4'));
  });
  if (spec.ipFamilyPolicy !== undefined) {
    if (!FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) errs.push(FieldError.notSupported('spec.ipFamilyPolicy', spec.ipFamilyPolicy, FAMILY_POLICIES));
    else if (spec.ipFamilyPolicy === 'RequireDualStack') {
      errs.push(FieldError.invalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, 'this cluster is not configured for dual-stack services'));
    }
  }

  // --- per type
  if (type === 'ExternalName') {
    if (ips.length > 0 || spec.clusterIP) errs.push(FieldError.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if ((spec.ipFamilies ?? []).length > 0) errs.push(FieldError.forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined) errs.push(FieldError.forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    const cname = (spec.externalName ?? '').replace(/\.$/, '');
    if (!cname) errs.push(FieldError.required('spec.externalName'));
    else for (const msg of isDNS1123Subdomain(cname)) errs.push(FieldError.invalid('spec.externalName', cname, msg));
  } else if (type !== '') {
    if ((spec.ports ?? []).length === 0 && !isHeadless(svc)) errs.push(FieldError.required('spec.ports'));
    if ((type === 'NodePort' || type === 'LoadBalancer') && isHeadless(svc)) {
      errs.push(FieldError.invalid('spec.clusterIPs[0]', CLUSTER_IP_NONE, `may not be set to 'None' for ${type} services`));
    }
  }

  // --- ports: names, numbers, protocols, duplicates
  const ports = spec.ports ?? [];
  const names = new Set<string>();
  const portKeys = new Set<string>();
  const nodePortKeys = new Set<string>();
  ports.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    errs.push(...validatePort(p, path, ports.length > 1, names));
    const key = `${p.protocol}/${p.port}`;
    if (portKeys.has(key)) errs.push(FieldError.duplicate(path, { port: p.port, protocol: p.protocol }));
    portKeys.add(key);
    if (p.nodePort) {
      if (type === 'ClusterIP') errs.push(FieldError.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
      else if (type === 'ExternalName') errs.push(FieldError.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ExternalName'"));
      const nk = `${p.protocol}/${p.nodePort}`;
      if (nodePortKeys.has(nk)) errs.push(FieldError.duplicate(`${path}.nodePort`, p.nodePort));
      nodePortKeys.add(nk);
      if (!Number.isInteger(p.nodePort) || p.nodePort < 1 || p.nodePort > 65535) errs.push(FieldError.invalid(`${path}.nodePort`, p.nodePort, PORT_RANGE));
    }
  });

  errs.push(...validateTrafficRules(svc));
  return errs;
}

/** Session affinity, internal and external traffic policies and the health-check node port of a Service. */
function validateTrafficRules(svc: Service): FieldError[] {
  const errs: FieldError[] = [];
  const spec = svc.spec ?? {};
  const type = spec.type ?? '';
  // --- session affinity
  const affinity = spec.sessionAffinity ?? '';
  if (!AFFINITIES.includes(affinity)) errs.push(FieldError.notSupported('spec.sessionAffinity', affinity, AFFINITIES));
  if (affinity === 'ClientIP') {
    const t = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (t === undefined) errs.push(FieldError.required('spec.sessionAffinityConfig.clientIP.timeoutSeconds', 'when session affinity type is ClientIP'));
    else if (!Number.isInteger(t) || t <= 0 || t > MAX_AFFINITY_SECONDS) {
      errs.push(FieldError.invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', t, `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`));
    }
  } else if (affinity === 'None' && spec.sessionAffinityConfig !== undefined) {
    errs.push(FieldError.forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }

  // --- traffic policies
  const itp = spec.internalTrafficPolicy;
  if (itp === undefined) {
    if (type === 'ClusterIP' || type === 'NodePort' || type === 'LoadBalancer') {
      errs.push(FieldError.required('spec.internalTrafficPolicy', 'must be specified when `type` is set to NodePort, LoadBalancer or ClusterIP'));
    }
  } else if (!TRAFFIC_POLICIES.includes(itp)) {
    errs.push(FieldError.notSupported('spec.internalTrafficPolicy', itp, TRAFFIC_POLICIES));
  }
  const etp = spec.externalTrafficPolicy ?? '';
  if (!externallyAccessible(svc)) {
    if (etp) errs.push(FieldError.invalid('spec.externalTrafficPolicy', etp, 'may only be set for externally-accessible services'));
  } else if (!etp) {
    errs.push(FieldError.required('spec.externalTrafficPolicy'));
  } else if (!TRAFFIC_POLICIES.includes(etp)) {
    errs.push(FieldError.notSupported('spec.externalTrafficPolicy', etp, TRAFFIC_POLICIES));
  }
  const hc = spec.healthCheckNodePort;
  if (hc) {
    if (!needsHealthCheckNodePort(svc)) {
      errs.push(FieldError.invalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
    } else if (!Number.isInteger(hc) || hc < 1 || hc > 65535) {
      errs.push(FieldError.invalid('spec.healthCheckNodePort', hc, PORT_RANGE));
    }
  }
  return errs;
}

/** Update rules on top of validateService: the cluster IP may not change unless the type moves to or from ExternalName. */
export function validateServiceUpdate(svc: Service, old: Service): FieldError[] {
  const errs = validateService(svc);
  if (svc.spec?.type === 'ExternalName' || old.spec?.type === 'ExternalName') return errs;
  const now = svc.spec?.clusterIPs ?? [];
  const before = old.spec?.clusterIPs ?? [];
  for (let i = 0; i < Math.min(now.length, before.length); i++) {
    if (now[i] !== before[i]) errs.push(FieldError.invalid(`spec.clusterIPs[${i}]`, now, 'may not change once set'));
  }
  if (before.length > 0 && now.length === 0) errs.push(FieldError.invalid('spec.clusterIPs', now, 'primary clusterIP can not be unset'));
  return errs;
}

function validatePort(p: ServicePort, path: string, requireName: boolean, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !p.name) errs.push(FieldError.required(`${path}.name`));
  else if (p.name) {
    for (const msg of isDNS1123Label(p.name)) errs.push(FieldError.invalid(`${path}.name`, p.name, msg));
    if (names.has(p.name)) errs.push(FieldError.duplicate(`${path}.name`, p.name));
    names.add(p.name);
  }
  if (!Number.isInteger(p.port) || p.port! < 1 || p.port! > 65535) errs.push(FieldError.invalid(`${path}.port`, p.port ?? 0, PORT_RANGE));
  if (!p.protocol) errs.push(FieldError.required(`${path}.protocol`));
  else if (!PROTOCOLS.includes(p.protocol)) errs.push(FieldError.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
  const tp = p.targetPort;
  if (typeof tp === 'number') {
    if (!Number.isInteger(tp) || tp < 1 || tp > 65535) errs.push(FieldError.invalid(`${path}.targetPort`, tp, PORT_RANGE));
  } else if (typeof tp === 'string') {
    for (const msg of portNameErrors(tp)) errs.push(FieldError.invalid(`${path}.targetPort`, tp, msg));
  }
  return errs;
}

/** upstream IsValidPortName (IANA_SVC_NAME). */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}
