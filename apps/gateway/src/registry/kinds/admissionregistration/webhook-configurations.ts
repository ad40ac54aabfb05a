import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import { admissionEnvironment } from '../../../admission/admission-request';
import type { Strategy } from '../../strategy';
import { validatedBy } from '../binding';

// The rules both webhook configuration kinds share (their bindings: validatingwebhookconfigurations.ts, mutatingwebhookconfigurations.ts).

type Obj = KubeObject & { webhooks?: any[] };

const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/**
 * admissionregistration.orch.io/v1 webhook configurations (SPEC Versioning 1.22 row): names
 * unique, sideEffects None or NoneOnDryRun, admissionReviewVersions required, failurePolicy,
 * matchPolicy and timeoutSeconds in range, exactly one of url or service, matchConditions that
 * compile.
 */
export function validateWebhookConfiguration(cfg: Obj, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (cfg.webhooks ?? []).forEach((w: any, i: number) => {
    const at = `webhooks[${i}]`;
    if (!w.name) errs.push(FieldError.required(`${at}.name`, ''));
    else if (seen.has(w.name)) errs.push(FieldError.duplicate(`${at}.name`, w.name));
    else if (w.name.split('.').length < 3) errs.push(FieldError.invalid(`${at}.name`, w.name, 'should be a domain with at least three segments separated by dots'));
    seen.add(w.name);
    if (w.sideEffects === undefined) errs.push(FieldError.required(`${at}.sideEffects`, `must specify one of ${SIDE_EFFECTS.map((s) => `"${s}"`).join(', ')}`));
    else if (!SIDE_EFFECTS.includes(w.sideEffects)) errs.push(FieldError.notSupported(`${at}.sideEffects`, w.sideEffects, SIDE_EFFECTS));
    const versions: unknown[] = w.admissionReviewVersions ?? [];
    if (versions.length === 0) errs.push(FieldError.required(`${at}.admissionReviewVersions`, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
    else if (!versions.some((v) => REVIEW_VERSIONS.includes(v as string))) errs.push(FieldError.invalid(`${at}.admissionReviewVersions`, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
    if (w.failurePolicy !== undefined && !['Ignore', 'Fail'].includes(w.failurePolicy)) errs.push(FieldError.notSupported(`${at}.failurePolicy`, w.failurePolicy, ['Ignore', 'Fail']));
    if (w.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(w.matchPolicy)) errs.push(FieldError.notSupported(`${at}.matchPolicy`, w.matchPolicy, ['Exact', 'Equivalent']));
    if (w.timeoutSeconds !== undefined && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) errs.push(FieldError.invalid(`${at}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    if (mutating && w.reinvocationPolicy !== undefined && !['Never', 'IfNeeded'].includes(w.reinvocationPolicy)) errs.push(FieldError.notSupported(`${at}.reinvocationPolicy`, w.reinvocationPolicy, ['Never', 'IfNeeded']));
    (w.matchConditions ?? []).forEach((c: { name?: string; expression?: string }, j: number) => {
      if (!c.expression) return;
      try {
        admissionEnvironment().compile(c.expression, { resultTypes: ['bool'] });
      } catch (e) {
        errs.push(FieldError.invalid(`${at}.matchConditions[${j}].expression`, c.expression, `compilation failed: ${(e as Error).message}`));
      }
    });
    const cc = w.clientConfig ?? {};
    if ((cc.url === undefined) === (cc.service === undefined)) errs.push(FieldError.required(`${at}.clientConfig`, 'exactly one of url or service is required'));
    else if (cc.url !== undefined && !/^https:\/\//.test(cc.url)) errs.push(FieldError.invalid(`${at}.clientConfig.url`, cc.url, "'https' is the only allowed URL scheme"));
  });
  return errs;
}

/** Validating and mutating webhook configurations: the webhooks validated. */
export const webhookStrategy = (mutating: boolean): Strategy<Obj> => validatedBy((cfg) => validateWebhookConfiguration(cfg, mutating));
