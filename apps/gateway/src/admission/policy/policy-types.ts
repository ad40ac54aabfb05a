import type { KubeObject, LabelSelectorObject } from '@orch/apimachinery';
import type { CelVariable } from '@orch/cel';
import type { Rule } from '../matching';
import type { BindingObject, PolicyObject } from './policy-source';

/** admissionregistration.orch.io/v1 MatchResources. */
export interface MatchResources {
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  resourceRules?: Rule[];
  excludeResourceRules?: Rule[];
  matchPolicy?: 'Exact' | 'Equivalent';
}

export interface ValidatingAdmissionPolicy extends KubeObject {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string };
    matchConstraints?: MatchResources;
    validations?: { expression: string; message?: string; messageExpression?: string; reason?: string }[];
    failurePolicy?: 'Fail' | 'Ignore';
    auditAnnotations?: { key: string; valueExpression: string }[];
    matchConditions?: { name: string; expression: string }[];
    variables?: { name: string; expression: string }[];
  };
  status?: {
    observedGeneration?: number;
    typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] };
    conditions?: unknown[];
  };
}

export interface ValidatingAdmissionPolicyBinding extends KubeObject {
  spec?: {
    policyName?: string;
    paramRef?: { name?: string; namespace?: string; selector?: LabelSelectorObject; parameterNotFoundAction?: 'Allow' | 'Deny' };
    matchResources?: MatchResources;
    validationActions?: ('Deny' | 'Warn' | 'Audit')[];
  };
}

/** The variables of policy expressions besides the request's (SPEC: typed request, dynamic object). */
export const POLICY_VARIABLES: readonly CelVariable[] = [{ name: 'params' }, { name: 'namespaceObject' }, { name: 'variables' }];

/** admissionregistration.orch.io/v1alpha1 MutatingAdmissionPolicy. */
export interface MutatingAdmissionPolicy extends PolicyObject {
  spec?: PolicyObject['spec'] & {
    mutations?: { patchType?: string; applyConfiguration?: { expression?: string }; jsonPatch?: { expression?: string } }[];
    reinvocationPolicy?: 'Never' | 'IfNeeded';
  };
}

/** admissionregistration.orch.io/v1alpha1 MutatingAdmissionPolicyBinding. */
export type MutatingAdmissionPolicyBinding = BindingObject;
