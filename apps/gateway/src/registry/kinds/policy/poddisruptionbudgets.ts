import type { policyV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Served } from '../../strategy';
import { col, defineKind, validatedWithStatus } from '../binding';
import { age, orNone } from '../table-cells';

type PodDisruptionBudget = Served<policyV1.PodDisruptionBudget>;

/**
 * policy/v1 PodDisruptionBudget: minAvailable and maxUnavailable are exclusive; a percentage
 * or non-negative count. (An empty selector selects every pod of the namespace; an unset one
 * selects none: the disruption controller and eviction check apply that.)
 */
export function validatePdb(pdb: PodDisruptionBudget): FieldError[] {
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

/** policy/v1 PodDisruptionBudgets (checked by pods/eviction, server/eviction.ts). */
export const podDisruptionBudgets = defineKind<policyV1.PodDisruptionBudget>({
  group: 'policy',
  resource: 'poddisruptionbudgets',
  ...validatedWithStatus(validatePdb),
  table: {
    columns: [col('Name'), col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', 'integer'), col('Age')],
    cells: (p) => [p.metadata.name, orNone(p.spec?.minAvailable) === '<none>' ? 'N/A' : String(p.spec?.minAvailable), p.spec?.maxUnavailable === undefined ? 'N/A' : String(p.spec.maxUnavailable), p.status?.disruptionsAllowed ?? 0, age(p.metadata.creationTimestamp)],
  },
});
