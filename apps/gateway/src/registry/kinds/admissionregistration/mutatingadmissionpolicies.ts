import type { admissionregistrationV1alpha1 } from '@orch/api';
import { validateMutatingPolicy } from '../../../admission/policy/policy-validation';
import type { MutatingAdmissionPolicy } from '../../../admission/policy/policy-types';
import { defineKind, validatedBy } from '../binding';

const check = (p: admissionregistrationV1alpha1.MutatingAdmissionPolicy) => validateMutatingPolicy(p as MutatingAdmissionPolicy);

/** admissionregistration.orch.io/v1alpha1 MutatingAdmissionPolicies: mutations with their patch type, a reinvocationPolicy, expressions that compile. */
export const mutatingAdmissionPolicies = defineKind<admissionregistrationV1alpha1.MutatingAdmissionPolicy>({
  group: 'admissionregistration.orch.io',
  resource: 'mutatingadmissionpolicies',
  strategy: validatedBy(check),
});
