import { isDeepStrictEqual } from 'node:util';
import type { flowcontrolV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import { MANDATORY_PRIORITY_LEVELS } from '../../../flowcontrol/bootstrap';
import type { Served } from '../../strategy';
import { defineKind, validatedWithStatus } from '../binding';

/** upstream priorityLevelConfigurationQueuingMaxQueues. */
const MAX_QUEUES = 10_000_000;
/** upstream shufflesharding.MaxHashBits: the bits of the flow hash a hand is dealt from. */
const MAX_HASH_BITS = 60;

/** A PriorityLevelConfiguration as written: validation checks every field's type. */
type Level = Served<flowcontrolV1.PriorityLevelConfiguration>;

const isInt = (v: unknown): v is number => Number.isInteger(v);

/**
 * upstream ValidatePriorityLevelConfiguration (1.32, v1): `exempt` and only it is Exempt; an
 * Exempt level has no `limited`, a Limited one has `limited` and no `exempt`; shares and
 * percentages in range; a Queue response has queuing whose hand fits the queues and the hash;
 * the mandatory `exempt` (but for spec.exempt) and `catch-all` keep their fixed spec.
 */
export function validatePriorityLevel(pl: Level): FieldError[] {
  const errs: FieldError[] = [];
  const spec = pl.spec ?? ({} as Partial<flowcontrolV1.PriorityLevelConfigurationSpec>);
  const name = pl.metadata?.name;
  if ((name === 'exempt') !== (spec.type === 'Exempt')) errs.push(FieldError.invalid('spec.type', spec.type ?? '', "type must be 'Exempt' if and only if name is 'exempt'"));
  switch (spec.type) {
    case 'Exempt':
      if (spec.limited != null) errs.push(FieldError.forbidden('spec.limited', 'must be nil if the type is not Limited'));
      if (spec.exempt != null) {
        const { nominalConcurrencyShares: shares, lendablePercent } = spec.exempt;
        if (shares != null && !(isInt(shares) && shares >= 0)) errs.push(FieldError.invalid('spec.exempt.nominalConcurrencyShares', shares, 'must be a non-negative integer'));
        if (lendablePercent != null && !(isInt(lendablePercent) && lendablePercent >= 0 && lendablePercent <= 100)) errs.push(FieldError.invalid('spec.exempt.lendablePercent', lendablePercent, 'must be between 0 and 100, inclusive'));
      }
      break;
    case 'Limited':
      if (spec.exempt != null) errs.push(FieldError.forbidden('spec.exempt', 'must be nil if the type is Limited'));
      if (spec.limited == null) errs.push(FieldError.required('spec.limited', 'must not be empty when type is Limited'));
      else errs.push(...validateLimited(spec.limited));
      break;
    default:
      errs.push(FieldError.notSupported('spec.type', spec.type ?? '', ['Exempt', 'Limited']));
  }
  errs.push(...validateMandatoryLevel(pl));
  return errs;
}

function validateLimited(limited: flowcontrolV1.LimitedPriorityLevelConfiguration): FieldError[] {
  const errs: FieldError[] = [];
  const at = 'spec.limited';
  const { nominalConcurrencyShares: shares, lendablePercent, borrowingLimitPercent, limitResponse } = limited;
  if (shares != null && !(isInt(shares) && shares >= 0)) errs.push(FieldError.invalid(`${at}.nominalConcurrencyShares`, shares, 'must be a non-negative integer'));
  const response = limitResponse ?? ({} as Partial<typeof limitResponse>);
  switch (response.type) {
    case 'Reject':
      if (response.queuing != null) errs.push(FieldError.forbidden(`${at}.limitResponse.queuing`, 'must be nil if limited.limitResponse.type is not Limited'));
      break;
    case 'Queue':
      if (response.queuing == null) errs.push(FieldError.required(`${at}.limitResponse.queuing`, 'must not be empty if limited.limitResponse.type is Limited'));
      else errs.push(...validateQueuing(response.queuing as Record<string, unknown>, `${at}.limitResponse.queuing`));
      break;
    default:
      errs.push(FieldError.notSupported(`${at}.limitResponse.type`, response.type ?? '', ['Queue', 'Reject']));
  }
  if (lendablePercent != null && !(isInt(lendablePercent) && lendablePercent >= 0 && lendablePercent <= 100)) errs.push(FieldError.invalid(`${at}.lendablePercent`, lendablePercent, 'must be between 0 and 100, inclusive'));
  if (borrowingLimitPercent != null && !(isInt(borrowingLimitPercent) && borrowingLimitPercent >= 0)) errs.push(FieldError.invalid(`${at}.borrowingLimitPercent`, borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  return errs;
}

/** upstream ValidatePriorityLevelQueuingConfiguration (after defaulting: 64 queues, hand of 8, 50 long). */
function validateQueuing(q: Record<string, unknown>, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const { queues, handSize, queueLengthLimit } = q;
  if (!(isInt(queueLengthLimit) && queueLengthLimit > 0)) errs.push(FieldError.invalid(`${at}.queueLengthLimit`, queueLengthLimit, 'must be positive'));
  const queuesOk = isInt(queues) && queues > 0;
  if (!queuesOk) errs.push(FieldError.invalid(`${at}.queues`, queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(FieldError.invalid(`${at}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  if (!(isInt(handSize) && handSize > 0)) errs.push(FieldError.invalid(`${at}.handSize`, handSize, 'must be positive'));
  else if (queuesOk && handSize > queues) errs.push(FieldError.invalid(`${at}.handSize`, handSize, `should not be greater than queues (${queues})`));
  else if (queuesOk && requiredEntropyBits(queues, handSize) > MAX_HASH_BITS) {
    errs.push(FieldError.invalid(`${at}.handSize`, handSize, `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`));
  }
  return errs;
}

/** upstream shufflesharding.RequiredEntropyBits: the hash bits a hand of `handSize` out of `deckSize` takes. */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize);
}

/** upstream ValidateIfMandatoryPriorityLevelConfigurationObject: `exempt` may change only spec.exempt, `catch-all` nothing. */
function validateMandatoryLevel(pl: Level): FieldError[] {
  const mandatory = MANDATORY_PRIORITY_LEVELS.find((m) => m.metadata.name === pl.metadata?.name);
  if (!mandatory) return [];
  const have = pl.metadata.name === 'exempt' ? { ...pl.spec, exempt: mandatory.spec.exempt } : pl.spec;
  if (isDeepStrictEqual(have, mandatory.spec)) return [];
  const detail = pl.metadata.name === 'exempt' ? "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value" : `spec of '${pl.metadata.name}' must equal the fixed value`;
  return [FieldError.invalid('spec', pl.spec, detail)];
}

/** flowcontrol.apiserver.orch.io/v1 PriorityLevelConfigurations. */
export const priorityLevelConfigurations = defineKind<flowcontrolV1.PriorityLevelConfiguration>({
  group: 'flowcontrol.apiserver.orch.io',
  resource: 'prioritylevelconfigurations',
  ...validatedWithStatus(validatePriorityLevel),
});
