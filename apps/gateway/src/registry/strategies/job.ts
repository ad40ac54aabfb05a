import { mirrorUpstreamKeys } from '@orch/api';
import { FieldError, labelSelectorFromObject, validateLabelSelectorObject, type KubeObject, type LabelSelectorObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { defaultStrategy, fieldsFrom } from './common';

/** Labels of a Job's pods that tie them to it (upstream batch.kubernetes.io/controller-uid, job-name). */
export const JOB_CONTROLLER_UID_LABEL = 'batch.orch.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.orch.io/job-name';
/** The unprefixed forms upstream still sets for compatibility. */
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';

interface JobLike extends KubeObject {
  spec?: { manualSelector?: boolean; selector?: LabelSelectorObject; template?: { metadata?: { labels?: Record<string, string> } } };
}

/**
 * upstream generateSelector: unless `spec.manualSelector` is true, the template gets the
 * job-name and controller-uid labels (unprefixed and `batch.orch.io/`, plus their
 * `batch.kubernetes.io/` twins when `upstreamTwins`; labels the user set are kept, a conflict
 * then fails validation) and the selector matches `batch.orch.io/controller-uid=<uid>`.
 * Mutates `job`; its uid must be set.
 */
export function generateJobSelector(job: JobLike, upstreamTwins: boolean): void {
  const spec = (job.spec ??= {});
  const template = (spec.template ??= {});
  const meta = (template.metadata ??= {});
  const generated: Record<string, string> = {
    [LEGACY_JOB_NAME_LABEL]: job.metadata.name ?? '',
    [JOB_NAME_LABEL]: job.metadata.name ?? '',
    [LEGACY_CONTROLLER_UID_LABEL]: job.metadata.uid ?? '',
    [JOB_CONTROLLER_UID_LABEL]: job.metadata.uid ?? '',
  };
  mirrorUpstreamKeys(generated, upstreamTwins);
  meta.labels = { ...generated, ...(meta.labels ?? {}) };
  const selector = (spec.selector ??= {});
  selector.matchLabels = { ...(selector.matchLabels ?? {}) };
  selector.matchLabels[JOB_CONTROLLER_UID_LABEL] ??= job.metadata.uid ?? '';
}

/** upstream validateJobSpec: the pod template has containers. */
export function validateJobTemplate(job: JobLike): FieldError[] {
  const containers = (job.spec?.template as { spec?: { containers?: unknown[] } } | undefined)?.spec?.containers;
  return containers?.length ? [] : [FieldError.required('spec.template.spec.containers', '')];
}

/** upstream validateJobSpec: a selector is required and must select the template's labels. */
export function validateJobSelector(job: JobLike): FieldError[] {
  const selector = job.spec?.selector;
  if (!selector) return [FieldError.required('spec.selector', '')];
  const errs = validateLabelSelectorObject(selector, 'spec.selector');
  if (errs.length) return errs;
  const labels = job.spec?.template?.metadata?.labels;
  if (!labelSelectorFromObject(selector).matches(labels ?? {})) {
    return [FieldError.invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`')];
  }
  return [];
}

/** batch/v1 Jobs: the generated selector on create, selector checks, `status.successful` field selector. */
export const jobStrategy = (upstreamTwins: boolean): Strategy => ({
  ...defaultStrategy,
  fieldAttributes: fieldsFrom(['status.successful']),
  prepareForCreate(obj) {
    const job = obj as JobLike;
    if (job.spec?.manualSelector !== true) generateJobSelector(job, upstreamTwins);
  },
  validate: (obj) => [...validateJobTemplate(obj as JobLike), ...validateJobSelector(obj as JobLike)],
  validateUpdate: (obj) => [...validateJobTemplate(obj as JobLike), ...validateJobSelector(obj as JobLike)],
});
