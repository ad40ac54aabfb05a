import { formatTime, parseTime } from '@orch/apimachinery';
import { isAlreadyExists, isNotFound, objectKey } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { controllerRefOf, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { CRON_JOBS, JOBS } from '../../framework/resources';
import { CONTROLLER_UID_INDEX } from '../../framework/informers';
import type { CronJob, Job } from '../../framework/api';
import { finishedType, jobFromTemplate, jobNameFor, jobsBeyondHistory, mostRecentScheduleTime, nextScheduleDelayMs, scheduleWithZone } from './cronjob-util';
import { checkTimeZone, parseSchedule, ScheduleError, type Schedule } from './schedule';

type ActiveRef = NonNullable<NonNullable<CronJob['status']>['active']>[number];

/** Result of one pass: requeue after this many ms, and whether status must be written. */
interface Pass {
  requeueAfterMs?: number;
  updateStatus: boolean;
}

/**
 * The CronJob controller (upstream pkg/controller/cronjob, ControllerV2): creates one job
 * per due activation of `spec.schedule` (in `spec.timeZone` or a `TZ=` prefix, else the
 * controller's zone), named `<cronjob>-<minutes since epoch>` so an activation never
 * creates two jobs; honours suspend, startingDeadlineSeconds (missed runs) and
 * concurrencyPolicy (Allow, Forbid, Replace); tracks active jobs, lastScheduleTime and
 * lastSuccessfulTime; deletes finished jobs beyond the history limits; and requeues itself
 * for the next activation.
 */
export class CronJobController extends QueueController {
  private readonly cache = this.informersOf({ cronJobs: CRON_JOBS, jobs: byController(JOBS) });
  private readonly api = this.clientsOf({ cronJobs: CRON_JOBS, jobs: JOBS });

  /** `now` is the clock schedules are evaluated on (tests pass a fixed one). */
  constructor(
    ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    super('cronjob', ctx, { reportingController: 'cronjob-controller' });
    this.enqueueOn(this.cache.cronJobs, objectKey);
    // A job's cronjob; an update enqueues the old version's too (its controller may have changed).
    this.enqueueOn(this.cache.jobs, (job) => this.ownerKey(job));
  }

  private ownerKey(job: Job): string | undefined {
    const cj = resolveControllerRef(job.metadata.namespace, controllerRefOf(job), CRON_JOBS, this.cache.cronJobs);
    return cj && objectKey(cj);
  }

  /** upstream ControllerV2.sync. */
  async sync(key: string): Promise<void> {
    const cached = this.cache.cronJobs.get(key);
    if (!cached) return;
    const cj = structuredClone(cached);
    const jobs = this.cache.jobs.byIndex(CONTROLLER_UID_INDEX, cj.metadata.uid ?? '').filter((j) => j.metadata.namespace === cj.metadata.namespace);
    const pass = await this.syncCronJob(cj, jobs);
    if (await this.cleanupFinishedJobs(cj, jobs)) pass.updateStatus = true;
    if (pass.updateStatus) await this.api.cronJobs.updateStatus(cj);
    if (pass.requeueAfterMs !== undefined) this.queue.addAfter(key, Math.max(0, pass.requeueAfterMs));
  }

  /** upstream syncCronJob: reconcile the active list, then start the due activation if any. */
  private async syncCronJob(cj: CronJob, jobs: Job[]): Promise<Pass> {
    const reconciled = await this.reconcileActive(cj, jobs);
    if (cj.metadata.deletionTimestamp) return { updateStatus: reconciled };
    const due = this.dueActivation(cj, this.now());
    if (due.scheduled === undefined) return { requeueAfterMs: due.requeueAfterMs, updateStatus: reconciled };
    const replaced = await this.replaceActive(cj);
    if (await this.startJob(cj, due.scheduled)) return { requeueAfterMs: due.requeueAfterMs, updateStatus: true };
    return { updateStatus: reconciled || replaced };
  }

  /**
   * Brings `status.active` and `lastSuccessfulTime` in line with the jobs the cronjob
   * controls: finished jobs leave the active list, jobs that no longer exist (checked live:
   * the cache may lag) too. True when the status changed.
   */
  private async reconcileActive(cj: CronJob, jobs: Job[]): Promise<boolean> {
    const status = (cj.status ??= {});
    let changed = false;
    const children = new Set<string>();
    for (const job of jobs) {
      const uid = job.metadata.uid ?? '';
      children.add(uid);
      const inActive = (status.active ?? []).some((r) => r.uid === uid);
      const finished = finishedType(job);
      if (!inActive && !finished) {
        this.recorder.event(cj, 'Warning', 'UnexpectedJob', 'Sync', `Saw a job that the controller did not create or forgot: ${job.metadata.name}`);
      } else if (inActive && finished) {
        status.active = status.active?.filter((r) => r.uid !== uid);
        this.recorder.event(cj, 'Normal', 'SawCompletedJob', 'Sync', `Saw completed job: ${job.metadata.name}, condition: ${finished}`);
        changed = true;
      }
      const completed = job.status?.completionTime;
      if (finished === 'Complete' && completed && (!status.lastSuccessfulTime || parseTime(completed) > parseTime(status.lastSuccessfulTime))) {
        status.lastSuccessfulTime = completed;
        changed = true;
      }
    }
    for (const ref of [...(status.active ?? [])]) {
      if (children.has(ref.uid ?? '')) continue;
      try {
        await this.api.jobs.inNamespace(ref.namespace ?? cj.metadata.namespace ?? '').get(ref.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.recorder.event(cj, 'Normal', 'MissingJob', 'Sync', `Active job went missing: ${ref.name}`);
        status.active = status.active?.filter((r) => r.uid !== ref.uid);
        changed = true;
      }
    }
    return changed;
  }

  /** False (with a Warning event) when `spec.timeZone` names no known zone. */
  private knownTimeZone(cj: CronJob): boolean {
    if (!cj.spec.timeZone) return true;
    try {
      checkTimeZone(cj.spec.timeZone);
      return true;
    } catch (err) {
      this.recorder.event(cj, 'Warning', 'UnknownTimeZone', 'Sync', `invalid timeZone: "${cj.spec.timeZone}": ${(err as Error).message}`);
      return false;
    }
  }

  /** The cronjob's schedule in its zone; undefined (with a Warning event) when it does not parse. */
  private scheduleOf(cj: CronJob): Schedule | undefined {
    if (cj.spec.schedule.includes('TZ')) {
      this.recorder.event(cj, 'Warning', 'UnsupportedSchedule', 'Sync', `CRON_TZ or TZ used in schedule "${cj.spec.schedule}" is not officially supported, use spec.timeZone`);
    }
    try {
      return parseSchedule(scheduleWithZone(cj));
    } catch (err) {
      this.recorder.event(cj, 'Warning', 'UnparseableSchedule', 'Sync', `unparseable schedule: "${cj.spec.schedule}" : ${(err as Error).message}`);
      return undefined;
    }
  }

  /**
   * The activation to start now (`scheduled`, ms since epoch), if any, and when to look again
   * (`requeueAfterMs`: the next activation; undefined when the cronjob is suspended or its
   * schedule is invalid). None when the latest activation is past its starting deadline,
   * already started, or would run beside an active job under concurrencyPolicy Forbid.
   */
  private dueActivation(cj: CronJob, now: number): { scheduled?: number; requeueAfterMs?: number } {
    if (!this.knownTimeZone(cj) || cj.spec.suspend) return {};
    const schedule = this.scheduleOf(cj);
    if (!schedule) return {};
    let scheduled: number | undefined;
    try {
      const recent = mostRecentScheduleTime(cj, now, schedule, true);
      if (recent.missed === 'many') {
        this.recorder.event(cj, 'Warning', 'TooManyMissedTimes', 'Sync', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
      }
      scheduled = recent.mostRecent;
    } catch (err) {
      if (!(err instanceof ScheduleError)) throw err;
      this.recorder.event(cj, 'Warning', 'InvalidSchedule', 'Sync', `invalid schedule: ${cj.spec.schedule} : ${err.message}`);
      return {};
    }
    const requeueAfterMs = nextScheduleDelayMs(cj, now, schedule);
    if (scheduled === undefined) return { requeueAfterMs };
    const sds = cj.spec.startingDeadlineSeconds;
    if (sds !== undefined && sds !== null && scheduled + sds * 1000 < now) {
      this.recorder.event(cj, 'Warning', 'MissSchedule', 'Sync', `Missed scheduled time to start a job: ${formatTime(scheduled)}`);
      return { requeueAfterMs };
    }
    const status = cj.status ?? {};
    const name = jobNameFor(cj, scheduled);
    if ((status.active ?? []).some((r) => r.name === name) || (status.lastScheduleTime && parseTime(status.lastScheduleTime) === scheduled)) return { requeueAfterMs };
    if (cj.spec.concurrencyPolicy === 'Forbid' && (status.active ?? []).length > 0) {
      this.recorder.event(cj, 'Normal', 'JobAlreadyActive', 'Sync', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return { requeueAfterMs };
    }
    return { scheduled, requeueAfterMs };
  }

  /** concurrencyPolicy Replace: deletes every active job before a new one starts. True when there were any. */
  private async replaceActive(cj: CronJob): Promise<boolean> {
    if (cj.spec.concurrencyPolicy !== 'Replace') return false;
    const active = [...(cj.status?.active ?? [])];
    for (const ref of active) await this.deleteJob(cj, ref.namespace ?? cj.metadata.namespace ?? '', ref.name ?? '', ref.uid);
    return active.length > 0;
  }

  /**
   * Creates the job of activation `scheduled` and records it as active and as the last
   * schedule time: true then. False when a job of that name exists that another owner
   * controls, or that is already in the active list.
   */
  private async startJob(cj: CronJob, scheduled: number): Promise<boolean> {
    const status = (cj.status ??= {});
    const request = jobFromTemplate(cj, scheduled);
    request.metadata.ownerReferences = [newControllerRef(cj, CRON_JOBS)];
    let created: Job;
    try {
      created = await this.api.jobs.create(request);
      this.recorder.event(cj, 'Normal', 'SuccessfulCreate', 'Create', `Created job ${created.metadata.name}`);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        this.recorder.event(cj, 'Warning', 'FailedCreate', 'Create', `Error creating job: ${(err as Error).message}`);
        throw err;
      }
      created = await this.api.jobs.inNamespace(cj.metadata.namespace ?? '').get(jobNameFor(cj, scheduled));
      // Created by someone else: assume they keep the status.
      if (controllerRefOf(created)?.uid !== cj.metadata.uid) return false;
      if ((status.active ?? []).some((r) => r.uid === created.metadata.uid)) return false;
    }
    const ref: ActiveRef = {
      apiVersion: JOBS.apiVersion,
      kind: JOBS.kind,
      name: created.metadata.name,
      namespace: created.metadata.namespace,
      uid: created.metadata.uid,
      resourceVersion: created.metadata.resourceVersion,
    };
    status.active = [...(status.active ?? []), ref];
    status.lastScheduleTime = formatTime(scheduled);
    return true;
  }

  /** upstream cleanupFinishedJobs: deletes finished jobs beyond the history limits. */
  private async cleanupFinishedJobs(cj: CronJob, jobs: Job[]): Promise<boolean> {
    let changed = false;
    for (const job of jobsBeyondHistory(cj, jobs)) {
      if (await this.deleteJob(cj, job.metadata.namespace ?? '', job.metadata.name ?? '', job.metadata.uid)) changed = true;
    }
    return changed;
  }

  /** upstream deleteJob: background deletion, then out of the active list. */
  private async deleteJob(cj: CronJob, namespace: string, name: string, uid: string | undefined): Promise<boolean> {
    try {
      await this.api.jobs.inNamespace(namespace).delete(name, { propagationPolicy: 'Background' });
    } catch (err) {
      if (!isNotFound(err)) {
        this.recorder.event(cj, 'Warning', 'FailedDelete', 'Delete', `Deleted job: ${(err as Error).message}`);
        return false;
      }
    }
    if (cj.status?.active) cj.status.active = cj.status.active.filter((r) => r.uid !== uid);
    this.recorder.event(cj, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted job ${name}`);
    return true;
  }
}
