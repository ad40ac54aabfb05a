import { FieldError } from '@orch/apimachinery';
import { policyEnv } from './policy-env';
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './policy-types';

/** Every expression of a policy with its field path and the result types it must have. */
export function expressions(p: ValidatingAdmissionPolicy): { fieldRef: string; expression: string; resultTypes?: string[] }[] {
  const s = p.spec ?? {};
  return [
    ...(s.matchConditions ?? []).map((c, i) => ({ fieldRef: `spec.matchConditions[${i}].expression`, expression: c.expression, resultTypes: ['bool'] })),
    ...(s.variables ?? []).map((v, i) => ({ fieldRef: `spec.variables[${i}].expression`, expression: v.expression })),
    ...(s.validations ?? []).flatMap((v, i) => [
      { fieldRef: `spec.validations[${i}].expression`, expression: v.expression, resultTypes: ['bool'] },
      ...(v.messageExpression ? [{ fieldRef: `spec.validations[${i}].messageExpression`, expression: v.messageExpression, resultTypes: ['string'] }] : []),
    ]),
    ...(s.auditAnnotations ?? []).map((x, i) => ({ fieldRef: `spec.auditAnnotations[${i}].valueExpression`, expression: x.valueExpression, resultTypes: ['string', 'null_type'] })),
  ];
}

/**
 * The expressions of a policy that do not compile at all (refused when the policy is written,
 * 422 naming the field).
 */
export function validatePolicy(p: ValidatingAdmissionPolicy): FieldError[] {
  const errs: FieldError[] = [];
  const s = p.spec ?? {};
  if (!s.validations?.length && !s.auditAnnotations?.length) errs.push(FieldError.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  if (!s.matchConstraints?.resourceRules?.length) errs.push(FieldError.required('spec.matchConstraints.resourceRules', ''));
  if (s.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(s.failurePolicy)) errs.push(FieldError.notSupported('spec.failurePolicy', s.failurePolicy, ['Fail', 'Ignore']));
  for (const e of expressions(p)) {
    try {
      policyEnv().compile(e.expression, e.resultTypes ? { resultTypes: e.resultTypes } : {});
    } catch (err) {
      errs.push(FieldError.invalid(e.fieldRef, e.expression, `compilation failed: ${(err as Error).message}`));
    }
  }
  return errs;
}

export function validateBinding(b: ValidatingAdmissionPolicyBinding): FieldError[] {
  const errs: FieldError[] = [];
  const s = b.spec ?? {};
  if (!s.policyName) errs.push(FieldError.required('spec.policyName', ''));
  const actions = s.validationActions ?? [];
  if (actions.length === 0) errs.push(FieldError.required('spec.validationActions', 'at least one validation action is required'));
  actions.forEach((a, i) => {
    if (!['Deny', 'Warn', 'Audit'].includes(a)) errs.push(FieldError.notSupported(`spec.validationActions[${i}]`, a, ['Deny', 'Warn', 'Audit']));
    if (actions.indexOf(a) !== i) errs.push(FieldError.duplicate(`spec.validationActions[${i}]`, a));
  });
  if (actions.includes('Deny') && actions.includes('Warn')) errs.push(FieldError.invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  const ref = s.paramRef;
  if (ref) {
    if (ref.name && ref.selector) errs.push(FieldError.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
    if (!ref.name && !ref.selector) errs.push(FieldError.required('spec.paramRef', 'one of name or selector must be specified'));
    if (ref.parameterNotFoundAction !== undefined && !['Allow', 'Deny'].includes(ref.parameterNotFoundAction)) errs.push(FieldError.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny']));
  }
  return errs;
}

