import type { admissionregistrationV1 } from '@orch/api';
import { defineKind } from '../binding';
import { webhookStrategy } from './webhook-configurations';

/** admissionregistration.orch.io/v1 MutatingWebhookConfigurations (reinvocationPolicy checked too). */
export const mutatingWebhookConfigurations = defineKind<admissionregistrationV1.MutatingWebhookConfiguration>({
  group: 'admissionregistration.orch.io',
  resource: 'mutatingwebhookconfigurations',
  strategy: webhookStrategy(true),
});
