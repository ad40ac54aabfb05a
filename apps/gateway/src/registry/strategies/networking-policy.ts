import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { defaultStrategy, statusSubresource } from './common';

type Obj = KubeObject & Record<string, any>;

const PATH_TYPES = ['Exact', 'Prefix', 'ImplementationSpecific'];

function validateBackend(b: any, path: string): FieldError[] {
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
export function validateIngress(ing: Obj): FieldError[] {
  const errs: FieldError[] = [...validateBackend(ing.spec?.defaultBackend, 'spec.defaultBackend')];
  (ing.spec?.rules ?? []).forEach((rule: any, i: number) => {
    (rule.http?.paths ?? []).forEach((p: any, j: number) => {
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

export const ingressStrategy: Strategy = {
  ...defaultStrategy,
  validate: (obj) => validateIngress(obj as Obj),
  validateUpdate: (obj) => validateIngress(obj as Obj),
  subresources: { status: statusSubresource },
};

/**
 * policy/v1 PodDisruptionBudget: minAvailable and maxUnavailable are exclusive; a percentage
 * or non-negative count. (An empty selector selects every pod of the namespace; an unset one
 * selects none: the disruption controller and eviction check apply that.)
 */
export function validatePdb(pdb: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = pdb.spec ?? {};
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    errs.push(FieldError.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const f of ['minAvailable', 'maxUnavailable'] as const) {
    const v = spec[f];
    if (v === undefined) continue;
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 0)) errs.push(FieldError.invalid(`spec.${f}`, v, 'must be greater than or equal to 0'));
    if (typeof v === 'string') {
      const m = /^(\d+)%$/.exec(v);
      if (!m) errs.push(FieldError.invalid(`spec.${f}`, v, "a valid percent string must be a numeric string followed by an ending '%'"));
      else if (Number(m[1]) > 100) errs.push(FieldError.invalid(`spec.${f}`, v, 'must not be greater than 100%'));
    }
  }
  const policy = spec.unhealthyPodEvictionPolicy;
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    errs.push(FieldError.notSupported('spec.unhealthyPodEvictionPolicy', policy, ['IfHealthyBudget', 'AlwaysAllow']));
  }
  return errs;
}

export const pdbStrategy: Strategy = {
  ...defaultStrategy,
  validate: (obj) => validatePdb(obj as Obj),
  validateUpdate: (obj) => validatePdb(obj as Obj),
  subresources: { status: statusSubresource },
};
