import type { admissionregistrationV1alpha1 } from '@orch/api';
import { validateMutatingBinding } from '../../../admission/policy/policy-validation';
import type { MutatingAdmissionPolicyBinding } from '../../../admission/policy/policy-types';
import { defineKind, validatedBy } from '../binding';

const check = (b: admissionregistrationV1alpha1.MutatingAdmissionPolicyBinding) => validateMutatingBinding(b as MutatingAdmissionPolicyBinding);

/** admissionregistration.orch.io/v1alpha1 MutatingAdmissionPolicyBindings: a policy name, one of paramRef name or selector. */
export const mutatingAdmissionPolicyBindings = defineKind<admissionregistrationV1alpha1.MutatingAdmissionPolicyBinding>({
  group: 'admissionregistration.orch.io',
  resource: 'mutatingadmissionpolicybindings',
  strategy: validatedBy(check),
});
