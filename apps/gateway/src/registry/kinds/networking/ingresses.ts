import type { networkingV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Served } from '../../strategy';
import { col, defineKind, validatedWithStatus } from '../binding';
import { age, orNone } from '../table-cells';

type Ingress = Served<networkingV1.Ingress>;

const PATH_TYPES = ['Exact', 'Prefix', 'ImplementationSpecific'];

function validateBackend(b: networkingV1.IngressBackend | undefined, path: string): FieldError[] {
  if (!b) return [];
  const errs: FieldError[] = [];
  if (b.service && b.resource) errs.push(FieldError.invalid(path, '', 'cannot set both service and resource backends'));
  if (!b.service && !b.resource) errs.push(FieldError.invalid(path, '', 'one backend (service or resource) must be specified'));
  if (b.service) {
    if (!b.service.name) errs.push(FieldError.required(`${path}.service.name`, ''));
    const port = b.service.port ?? {};
    if ((port.number === undefined) === (port.name === undefined)) errs.push(FieldError.invalid(`${path}.service.port`, port, 'exactly one of number or name must be set'));
  }
  return errs;
}

/** networking.orch.io/v1 Ingress (SPEC Versioning 1.22 row): pathType required; backends by name and port. */
export function validateIngress(ing: Ingress): FieldError[] {
  const errs: FieldError[] = [...validateBackend(ing.spec?.defaultBackend, 'spec.defaultBackend')];
  (ing.spec?.rules ?? []).forEach((rule, i) => {
    (rule.http?.paths ?? []).forEach((p, j) => {
      const at = `spec.rules[${i}].http.paths[${j}]`;
      if (!p.pathType) errs.push(FieldError.required(`${at}.pathType`, 'pathType must be specified'));
      else if (!PATH_TYPES.includes(p.pathType)) errs.push(FieldError.notSupported(`${at}.pathType`, p.pathType, PATH_TYPES));
      else if (p.pathType !== 'ImplementationSpecific' && !String(p.path ?? '').startsWith('/')) errs.push(FieldError.invalid(`${at}.path`, p.path ?? '', 'must be an absolute path'));
      if (!p.backend) errs.push(FieldError.required(`${at}.backend`, ''));
      errs.push(...validateBackend(p.backend, `${at}.backend`));
    });
  });
  return errs;
}

/** networking.orch.io/v1 Ingresses. */
export const ingresses = defineKind<networkingV1.Ingress>({
  group: 'networking.orch.io',
  resource: 'ingresses',
  ...validatedWithStatus(validateIngress),
  table: {
    columns: [col('Name'), col('Class'), col('Hosts'), col('Address'), col('Ports'), col('Age')],
    cells: (i) => {
      const hosts = (i.spec?.rules ?? []).map((r) => r.host).filter(Boolean);
      const addr = (i.status?.loadBalancer?.ingress ?? []).map((x) => x.ip || x.hostname);
      return [i.metadata.name, orNone(i.spec?.ingressClassName), hosts.length ? hosts.join(',') : '*', addr.join(','), i.spec?.tls?.length ? '80, 443' : '80', age(i.metadata.creationTimestamp)];
    },
  },
});

