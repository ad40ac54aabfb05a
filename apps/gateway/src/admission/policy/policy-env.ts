import type { CelEnvironment } from '@orch/cel';
import { admissionEnvironment } from '../admission-request';
import { POLICY_VARIABLES } from './policy-types';

/** The one environment of policy expressions (every policy declares the same variables). */
let policyEnvironment: CelEnvironment | undefined;
export function policyEnv(): CelEnvironment {
  return (policyEnvironment ??= admissionEnvironment(POLICY_VARIABLES));
}
