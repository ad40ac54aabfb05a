import type { admissionregistrationV1 } from '@orch/api';
import { validateBinding } from '../../../admission/policy/policy-validation';
import type { ValidatingAdmissionPolicyBinding } from '../../../admission/policy/policy-types';
import { defineKind, validatedBy } from '../binding';

const check = (b: admissionregistrationV1.ValidatingAdmissionPolicyBinding) => validateBinding(b as ValidatingAdmissionPolicyBinding);

/** admissionregistration.orch.io/v1 ValidatingAdmissionPolicyBindings: a policy name, validation actions, one of paramRef name or selector. */
export const validatingAdmissionPolicyBindings = defineKind<admissionregistrationV1.ValidatingAdmissionPolicyBinding>({
  group: 'admissionregistration.orch.io',
  resource: 'validatingadmissionpolicybindings',
  strategy: validatedBy(check),
});
