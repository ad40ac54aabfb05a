import { CelEnvironment } from '@orch/cel';
import { admissionVariables, resolveBuiltinRef } from '../admission-request';
import { admissionEnvironment } from '../admission-request';
import { POLICY_VARIABLES } from './policy-types';

/** The one environment of policy expressions (every policy declares the same variables). */
let policyEnvironment: CelEnvironment | undefined;
export function policyEnv(): CelEnvironment {
  return (policyEnvironment ??= admissionEnvironment(POLICY_VARIABLES));
}

/** The environment of mutating policies' mutations: policy variables, `Object{...}` / `JSONPatch{...}` construction and `jsonpatch`. */
let mutatingEnvironment: CelEnvironment | undefined;
export function mutatingPolicyEnv(): CelEnvironment {
  return (mutatingEnvironment ??= new CelEnvironment({ variables: admissionVariables(POLICY_VARIABLES), authorizer: true, resolveRef: resolveBuiltinRef, objectLiterals: true }));
}
