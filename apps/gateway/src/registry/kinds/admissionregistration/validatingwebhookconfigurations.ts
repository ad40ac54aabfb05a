import type { admissionregistrationV1 } from '@orch/api';
import { defineKind } from '../binding';
import { webhookStrategy } from './webhook-configurations';

/** admissionregistration.orch.io/v1 ValidatingWebhookConfigurations. */
export const validatingWebhookConfigurations = defineKind<admissionregistrationV1.ValidatingWebhookConfiguration>({
  group: 'admissionregistration.orch.io',
  resource: 'validatingwebhookconfigurations',
  strategy: webhookStrategy(false),
});
