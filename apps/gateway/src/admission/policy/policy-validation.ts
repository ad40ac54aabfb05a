import { FieldError } from '@orch/apimachinery';
import { analyseObjectLiterals } from '@orch/cel';
import { mutatingPolicyEnv, policyEnv } from './policy-env';
import type { PolicyObject } from './policy-source';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './policy-types';

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

/** What validating and mutating policies check alike: resourceRules, failurePolicy, matchConditions and variables that compile. */
export function validatePolicyCommon(p: PolicyObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = p.spec ?? {};
  if (!s.matchConstraints?.resourceRules?.length) errs.push(FieldError.required('spec.matchConstraints.resourceRules', ''));
  if (s.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(s.failurePolicy)) errs.push(FieldError.notSupported('spec.failurePolicy', s.failurePolicy, ['Fail', 'Ignore']));
  const shared = [
    ...(s.matchConditions ?? []).map((c, i) => ({ fieldRef: `spec.matchConditions[${i}].expression`, expression: c.expression, resultTypes: ['bool'] as string[] | undefined })),
    ...(s.variables ?? []).map((v, i) => ({ fieldRef: `spec.variables[${i}].expression`, expression: v.expression, resultTypes: undefined })),
  ];
  errs.push(...compileErrors(shared));
  return errs;
}

function compileErrors(list: { fieldRef: string; expression: string; resultTypes?: string[] }[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const e of list) {
    try {
      policyEnv().compile(e.expression, e.resultTypes ? { resultTypes: e.resultTypes } : {});
    } catch (err) {
      errs.push(FieldError.invalid(e.fieldRef, e.expression, `compilation failed: ${(err as Error).message}`));
    }
  }
  return errs;
}

/**
 * The expressions of a policy that do not compile at all (refused when the policy is written,
 * 422 naming the field).
 */
export function validatePolicy(p: ValidatingAdmissionPolicy): FieldError[] {
  const s = p.spec ?? {};
  const errs = validatePolicyCommon(p);
  if (!s.validations?.length && !s.auditAnnotations?.length) errs.unshift(FieldError.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  errs.push(...compileErrors(expressions(p).filter((e) => !e.fieldRef.startsWith('spec.matchConditions') && !e.fieldRef.startsWith('spec.variables'))));
  return errs;
}

/** A binding's spec.paramRef: a name or a selector (not both), parameterNotFoundAction Allow or Deny. */
function paramRefErrors(ref: NonNullable<NonNullable<ValidatingAdmissionPolicyBinding['spec']>['paramRef']>): FieldError[] {
  const errs: FieldError[] = [];
  if (ref.name && ref.selector) errs.push(FieldError.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
  if (!ref.name && !ref.selector) errs.push(FieldError.required('spec.paramRef', 'one of name or selector must be specified'));
  if (ref.parameterNotFoundAction !== undefined && !['Allow', 'Deny'].includes(ref.parameterNotFoundAction)) errs.push(FieldError.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny']));
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
  if (s.paramRef) errs.push(...paramRefErrors(s.paramRef));
  return errs;
}


/** Every expression of a mutating policy with its field path and patch type. */
type MutationExpression = { fieldRef: string; expression: string; patchType: 'ApplyConfiguration' | 'JSONPatch' };
function mutationExpressions(p: MutatingAdmissionPolicy): MutationExpression[] {
  return (p.spec?.mutations ?? []).flatMap((m, i): MutationExpression[] => {
    if (m.patchType === 'ApplyConfiguration' && m.applyConfiguration) return [{ fieldRef: `spec.mutations[${i}].applyConfiguration.expression`, expression: m.applyConfiguration.expression ?? '', patchType: 'ApplyConfiguration' }];
    if (m.patchType === 'JSONPatch' && m.jsonPatch) return [{ fieldRef: `spec.mutations[${i}].jsonPatch.expression`, expression: m.jsonPatch.expression ?? '', patchType: 'JSONPatch' }];
    return [];
  });
}

/** A checker type in upstream's notation (`map(string, int)`). */
const celTypeText = (t: string) => t.replace(/</g, '(').replace(/>/g, ')');

/**
 * Why a compiled mutation cannot give what its patch type needs (upstream's return types): an
 * ApplyConfiguration an `Object` (`Object{...}`, or a dynamic value), a JSONPatch a list of
 * `JSONPatch` (a list, or a dynamic value); undefined when it can.
 */
export function mutationResultError(patchType: 'ApplyConfiguration' | 'JSONPatch', expression: string, resultType: string): string | undefined {
  const { root } = analyseObjectLiterals(expression);
  if (patchType === 'ApplyConfiguration') {
    if (root !== undefined) return root === 'Object' ? undefined : `must evaluate to Object but got ${root}`;
    return resultType === 'dyn' ? undefined : `must evaluate to Object but got ${celTypeText(resultType)}`;
  }
  if (root !== undefined) return `must evaluate to list(JSONPatch) but got ${root}`;
  return resultType === 'dyn' || resultType === 'list' || resultType.startsWith('list<') ? undefined : `must evaluate to list(JSONPatch) but got ${celTypeText(resultType)}`;
}

/**
 * MutatingAdmissionPolicy validation (upstream 1.32 v1alpha1): matchConstraints with
 * resourceRules, at least one mutation, each with a patchType and exactly its own field, a
 * reinvocationPolicy, and expressions that compile to what their patch type needs (422 naming
 * the field). As upstream, the fields of `Object{...}` are not checked against the kind here
 * (its object types are dynamic): a field the kind lacks or a value of the wrong type fails the
 * mutation when it runs (see MutatingAdmissionPolicyPlugin); v1alpha1 has no status, so there
 * is no status.typeChecking either.
 */
export function validateMutatingPolicy(p: MutatingAdmissionPolicy): FieldError[] {
  const s = p.spec ?? {};
  const errs = validatePolicyCommon(p);
  if (!s.mutations?.length) errs.push(FieldError.required('spec.mutations', 'mutations must contain at least one item'));
  (s.mutations ?? []).forEach((m, i) => {
    const at = `spec.mutations[${i}]`;
    if (!m.patchType) errs.push(FieldError.required(`${at}.patchType`, ''));
    else if (m.patchType !== 'ApplyConfiguration' && m.patchType !== 'JSONPatch') errs.push(FieldError.notSupported(`${at}.patchType`, m.patchType, ['ApplyConfiguration', 'JSONPatch']));
    else {
      const field = m.patchType === 'ApplyConfiguration' ? 'applyConfiguration' : 'jsonPatch';
      const other = m.patchType === 'ApplyConfiguration' ? 'jsonPatch' : 'applyConfiguration';
      if (!m[field]) errs.push(FieldError.required(`${at}.${field}`, `${field} is required when patchType is ${m.patchType}`));
      else if (!m[field]?.expression) errs.push(FieldError.required(`${at}.${field}.expression`, ''));
      if (m[other]) errs.push(FieldError.forbidden(`${at}.${other}`, `must not be set when patchType is ${m.patchType}`));
    }
  });
  if (s.reinvocationPolicy === undefined) errs.push(FieldError.required('spec.reinvocationPolicy', ''));
  else if (!['Never', 'IfNeeded'].includes(s.reinvocationPolicy)) errs.push(FieldError.notSupported('spec.reinvocationPolicy', s.reinvocationPolicy, ['Never', 'IfNeeded']));
  for (const e of mutationExpressions(p)) {
    if (!e.expression) continue;
    let resultType: string;
    try {
      resultType = mutatingPolicyEnv().compile(e.expression).resultType;
    } catch (err) {
      errs.push(FieldError.invalid(e.fieldRef, e.expression, `compilation failed: ${(err as Error).message}`));
      continue;
    }
    const wrong = mutationResultError(e.patchType, e.expression, resultType);
    if (wrong) errs.push(FieldError.invalid(e.fieldRef, e.expression, wrong));
  }
  return errs;
}

/** MutatingAdmissionPolicyBinding validation: a policy name, one of paramRef name or selector. */
export function validateMutatingBinding(b: MutatingAdmissionPolicyBinding): FieldError[] {
  const errs: FieldError[] = [];
  const s = b.spec ?? {};
  if (!s.policyName) errs.push(FieldError.required('spec.policyName', ''));
  if (s.paramRef) errs.push(...paramRefErrors(s.paramRef));
  return errs;
}
