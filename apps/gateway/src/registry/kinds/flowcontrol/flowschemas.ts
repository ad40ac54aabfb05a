import type { flowcontrolV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Served } from '../../strategy';
import { defineKind, validatedWithStatus } from '../binding';

type FlowSchema = Served<flowcontrolV1.FlowSchema>;

const SUBJECT_KINDS = ['User', 'Group', 'ServiceAccount'];

/**
 * upstream ValidateFlowSchema, the parts the classifier relies on: a priority level named,
 * matchingPrecedence 1-10000, and every subject of a known kind naming its user, group or
 * service account (name and namespace).
 */
export function validateFlowSchema(fs: FlowSchema): FieldError[] {
  const errs: FieldError[] = [];
  if (!fs.spec?.priorityLevelConfiguration?.name) errs.push(FieldError.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  const precedence = fs.spec?.matchingPrecedence;
  if (precedence !== undefined && (!Number.isInteger(precedence) || precedence < 1 || precedence > 10_000)) {
    errs.push(FieldError.invalid('spec.matchingPrecedence', precedence, 'must be between 1 and 10000 inclusively'));
  }
  (fs.spec?.rules ?? []).forEach((rule, i) =>
    (rule?.subjects ?? []).forEach((s, j) => {
      const at = `spec.rules[${i}].subjects[${j}]`;
      if (!s || !SUBJECT_KINDS.includes(String(s.kind))) return void errs.push(FieldError.notSupported(`${at}.kind`, s?.kind, SUBJECT_KINDS));
      if (s.kind === 'User' && !s.user?.name) errs.push(FieldError.required(`${at}.user.name`, 'user is required when subject kind is User'));
      if (s.kind === 'Group' && !s.group?.name) errs.push(FieldError.required(`${at}.group.name`, 'group is required when subject kind is Group'));
      if (s.kind === 'ServiceAccount') {
        if (!s.serviceAccount?.name) errs.push(FieldError.required(`${at}.serviceAccount.name`, 'serviceAccount is required when subject kind is ServiceAccount'));
        if (!s.serviceAccount?.namespace) errs.push(FieldError.required(`${at}.serviceAccount.namespace`, ''));
      }
    }),
  );
  return errs;
}

/** flowcontrol.apiserver.orch.io/v1 FlowSchemas (flowcontrol/ classifies requests by them). */
export const flowSchemas = defineKind<flowcontrolV1.FlowSchema>({
  group: 'flowcontrol.apiserver.orch.io',
  resource: 'flowschemas',
  ...validatedWithStatus(validateFlowSchema),
});

