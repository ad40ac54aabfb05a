import { JOB_CONTROLLER_UID_LABEL, jobPodLabels, type batchV1 } from '@orch/api';
import { FieldError, humanDuration, labelSelectorFromObject, parseTime, validateLabelSelectorObject, type LabelSelectorObject } from '@orch/apimachinery';
import type { Served, Strategy } from '../../strategy';
import { STATUS, col, defaultStrategy, defineKind } from '../binding';
import { age, containerCells, selectorText } from '../table-cells';

type Job = Served<batchV1.Job>;

/**
 * upstream generateSelector: unless `spec.manualSelector` is true, the template gets the
 * job-name and controller-uid labels (unprefixed and `batch.orch.io/`, plus their
 * `batch.kubernetes.io/` twins when `upstreamTwins`; labels the user set are kept, a conflict
 * then fails validation) and the selector matches `batch.orch.io/controller-uid=<uid>`.
 * Mutates `job`; its uid must be set.
 */
export function generateJobSelector(job: Job, upstreamTwins: boolean): void {
  const spec = (job.spec ??= {} as batchV1.JobSpec);
  const template = (spec.template ??= {});
  const meta = (template.metadata ??= {});
  meta.labels = { ...jobPodLabels(job, upstreamTwins), ...(meta.labels ?? {}) };
  const selector = (spec.selector ??= {});
  selector.matchLabels = { ...(selector.matchLabels ?? {}) };
  selector.matchLabels[JOB_CONTROLLER_UID_LABEL] ??= job.metadata.uid ?? '';
}

/** upstream validateJobSpec: the pod template has containers. */
export function validateJobTemplate(job: Job): FieldError[] {
  const containers = job.spec?.template?.spec?.containers;
  return containers?.length ? [] : [FieldError.required('spec.template.spec.containers', '')];
}

/** upstream validateJobSpec: a selector is required and must select the template's labels. */
export function validateJobSelector(job: Job): FieldError[] {
  const selector = job.spec?.selector;
  if (!selector) return [FieldError.required('spec.selector', '')];
  const errs = validateLabelSelectorObject(selector as LabelSelectorObject, 'spec.selector');
  if (errs.length) return errs;
  const labels = job.spec?.template?.metadata?.labels;
  if (!labelSelectorFromObject(selector as LabelSelectorObject).matches(labels ?? {})) {
    return [FieldError.invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`')];
  }
  return [];
}

/** batch/v1 Jobs: the generated selector on create, selector checks. */
export const jobStrategy = (upstreamTwins: boolean): Strategy<Job> => ({
  ...defaultStrategy,
  prepareForCreate(job) {
    if (job.spec?.manualSelector !== true) generateJobSelector(job, upstreamTwins);
  },
  validate: (job) => [...validateJobTemplate(job), ...validateJobSelector(job)],
  validateUpdate: (job) => [...validateJobTemplate(job), ...validateJobSelector(job)],
});

function jobStatus(job: Job): string {
  const conds = job.status?.conditions ?? [];
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobDuration(job: Job): string {
  const start = job.status?.startTime && parseTime(job.status.startTime);
  if (!start) return '';
  const end = job.status?.completionTime ? parseTime(job.status.completionTime)! : Date.now();
  return humanDuration(end - start);
}

/** batch/v1 Jobs. */
export const jobs = defineKind<batchV1.Job>({
  group: 'batch',
  resource: 'jobs',
  strategy: (deps) => jobStrategy(deps.k8sCompatibility),
  fields: ['status.successful'],
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Status'), col('Completions'), col('Duration'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (j) => {
      const completions = j.spec?.completions !== undefined ? `${j.status?.succeeded ?? 0}/${j.spec.completions}` : `${j.status?.succeeded ?? 0}/1 of ${j.spec?.parallelism ?? 1}`;
      return [j.metadata.name, jobStatus(j), completions, jobDuration(j), age(j.metadata.creationTimestamp), ...containerCells(j.spec?.template?.spec), selectorText(j.spec?.selector)];
    },
  },
});
