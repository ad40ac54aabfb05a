import type { admissionregistrationV1 } from '@orch/api';
import { validatePolicy } from '../../../admission/policy/policy-validation';
import type { ValidatingAdmissionPolicy } from '../../../admission/policy/policy-types';
import { defineKind, validatedWithStatus } from '../binding';

const check = (p: admissionregistrationV1.ValidatingAdmissionPolicy) => validatePolicy(p as ValidatingAdmissionPolicy);

/** admissionregistration.orch.io/v1 ValidatingAdmissionPolicies: expressions that compile, validations or audit annotations present. */
export const validatingAdmissionPolicies = defineKind<admissionregistrationV1.ValidatingAdmissionPolicy>({
  group: 'admissionregistration.orch.io',
  resource: 'validatingadmissionpolicies',
  ...validatedWithStatus(check),
});
