import { jobPodLabels, mirrorUpstreamKeys } from '@orch/api';
import { formatTime, labelSelectorFromObject } from '@orch/apimachinery';
import { isNotFound, objectKey, unwrapTombstone, type DeletedFinalStateUnknown } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { SLOW_START_INITIAL_BATCH_SIZE, slowStartBatch } from '../workload-common/batch';
import { claimObjects, recheckOwner } from '../workload-common/claim';
import { PodControl } from '../workload-common/pod-control';
import { controllerRefOf, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { UIDTrackingExpectations } from '../../framework/expectations';
import { findCondition, isPodActive, isPodTerminating, podFromTemplate } from '../workload-common/pods';
import { JOBS, PODS } from '../../framework/resources';
import type { Container, Job, JobStatus, Pod } from '../../framework/api';
import { canonicalJson } from '../workload-common/hash';
import { addCompletionIndexEnv, countIndexes, firstPendingIndexes, formatIndexes, JOB_COMPLETION_INDEX, type Interval } from './indexes';
import {
  activeDeadlineRemainingMs,
  activePodsForRemoval,
  backoffRemainingMs,
  ensureJobCondition,
  isIndexed,
  isJobFinished,
  JOB_REASON,
  JOB_TRACKING_FINALIZER,
  jobSelector,
  readyCount,
  wantActive,
  type BackoffRecord,
} from './job-util';
import { moveUncounted, trackFinishedPods } from './tracking';

/** upstream MaxPodCreateDeletePerSync. */
const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** Queue keys of pods whose tracking finalizer must go because their job is gone or finished. */
const ORPHAN_POD_PREFIX = 'pod:';

/** Why a job is ending: the interim condition set first, the terminal one once all pods are counted. */
interface Ending {
  interim: 'FailureTarget' | 'SuccessCriteriaMet';
  terminal: 'Failed' | 'Complete';
  reason: string;
  message: string;
}

/** The ending already recorded by an interim condition, if any. */
function recordedEnding(status: JobStatus): Ending | undefined {
  const failure = findCondition(status.conditions, 'FailureTarget');
  if (failure?.status === 'True') return { interim: 'FailureTarget', terminal: 'Failed', reason: failure.reason ?? '', message: failure.message ?? '' };
  const success = findCondition(status.conditions, 'SuccessCriteriaMet');
  if (success?.status === 'True') return { interim: 'SuccessCriteriaMet', terminal: 'Complete', reason: success.reason ?? '', message: success.message ?? '' };
  return undefined;
}

/**
 * The Job controller (upstream pkg/controller/job): runs pods until `completions` succeeded
 * (`parallelism` at a time; Indexed mode gives each pod a `batch.orch.io/job-completion-index`
 * annotation and label, hostname `<job>-<index>`), fails the job past backoffLimit or
 * activeDeadlineSeconds, and counts every finished pod exactly once with the
 * `batch.orch.io/job-tracking` finalizer and `status.uncountedTerminatedPods`. Like upstream
 * 1.32 the interim FailureTarget / SuccessCriteriaMet conditions come first; Failed /
 * Complete follow once no pod is left running or uncounted.
 */
export class JobController extends QueueController {
  private readonly cache = this.informersOf({ jobs: JOBS, pods: byController(PODS) });
  private readonly api = this.clientsOf({ jobs: JOBS, pods: PODS });
  private readonly podControl = new PodControl(this.api.pods, () => this.recorder);
  private readonly expectations = new UIDTrackingExpectations();
  /** Pods (uids) whose tracking finalizer we removed and the informer may still show. */
  private readonly released = new Set<string>();
  private readonly backoff = new Map<string, BackoffRecord>();

  constructor(ctx: ControllerContext) {
    super('job', ctx, { reportingController: 'job-controller' });
    this.enqueueOn(this.cache.jobs, objectKey);
    this.cache.pods.addEventHandler({
      onAdd: (pod) => this.podChanged(pod, true),
      onUpdate: (_old, cur) => this.podChanged(cur, false),
      onDelete: (obj) => this.podDeleted(obj),
    });
  }

  private jobOf(pod: Pod): Job | undefined {
    return resolveControllerRef(pod.metadata.namespace, controllerRefOf(pod), JOBS, this.cache.jobs);
  }

  private podChanged(pod: Pod, added: boolean): void {
    if (!pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER)) this.released.delete(pod.metadata.uid ?? '');
    const job = this.jobOf(pod);
    if (!job) {
      if (pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER)) this.queue.add(ORPHAN_POD_PREFIX + objectKey(pod));
      else if (!controllerRefOf(pod)) this.enqueueMatching(pod);
      return;
    }
    // A pod held by its finalizer is deleted once its deletionTimestamp is set.
    if (pod.metadata.deletionTimestamp) this.expectations.deletionObservedOf(objectKey(job), objectKey(pod));
    else if (added) this.expectations.creationObserved(objectKey(job));
    this.queue.add(objectKey(job));
  }

  private podDeleted(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = unwrapTombstone(obj);
    this.released.delete(pod.metadata.uid ?? '');
    const job = this.jobOf(pod);
    if (!job) return;
    this.expectations.deletionObservedOf(objectKey(job), objectKey(pod));
    this.queue.add(objectKey(job));
  }

  /** An orphan pod may be adopted by a job whose selector matches it. */
  private enqueueMatching(pod: Pod): void {
    for (const job of this.cache.jobs.listInNamespace(pod.metadata.namespace ?? '')) {
      if (labelSelectorFromObject(jobSelector(job)).matches(pod.metadata.labels)) this.queue.add(objectKey(job));
    }
  }

  async sync(key: string): Promise<void> {
    if (key.startsWith(ORPHAN_POD_PREFIX)) return this.releaseOrphanPod(key.slice(ORPHAN_POD_PREFIX.length));
    const cached = this.cache.jobs.get(key);
    if (!cached) {
      this.expectations.delete(key);
      this.backoff.delete(key);
      return;
    }
    const job = structuredClone(cached);
    const owned = await claimObjects(this.cache.pods.listInNamespace(job.metadata.namespace ?? ''), {
      owner: job,
      ownerType: JOBS,
      selector: labelSelectorFromObject(jobSelector(job)),
      client: this.api.pods,
      canAdopt: recheckOwner(this.api.jobs, job),
    });
    // A finished job counts nothing more, and a job being deleted lets its pods go.
    if (isJobFinished(job) || job.metadata.deletionTimestamp) {
      await this.releasePods(owned.filter((p) => p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER)));
      return;
    }
    const now = Date.now();
    const nowIso = formatTime(now);
    const status: JobStatus = structuredClone(job.status ?? {});
    status.uncountedTerminatedPods ??= {};
    if (!status.startTime && !job.spec.suspend) status.startTime = nowIso;
    const completions = job.spec.completions ?? 0;

    // Count finished pods exactly once: record them as uncounted, release them, then count them.
    const track = trackFinishedPods(job, owned, this.released);
    this.recordBackoff(key, track.newSucceeded, track.newFailed, now);
    if (track.needsFlush) {
      status.uncountedTerminatedPods = { succeeded: track.uncounted.succeeded, failed: track.uncounted.failed };
      if (isIndexed(job)) {
        status.completedIndexes = formatIndexes(track.succeededIndexes);
        status.succeeded = countIndexes(track.succeededIndexes);
      }
      job.status = status;
      Object.assign(job, await this.api.jobs.updateStatus(job));
    }
    await this.releasePods(track.release);
    const withFinalizer = new Set(owned.filter((p) => p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) && !this.released.has(p.metadata.uid ?? '')).map((p) => p.metadata.uid ?? ''));
    moveUncounted(status, withFinalizer);
    const uncountedLeft = (status.uncountedTerminatedPods?.succeeded?.length ?? 0) + (status.uncountedTerminatedPods?.failed?.length ?? 0);

    const active = owned.filter(isPodActive);
    const terminating = owned.filter(isPodTerminating).length;
    const succeeded = isIndexed(job) ? countIndexes(track.succeededIndexes) : (status.succeeded ?? 0) + (status.uncountedTerminatedPods?.succeeded?.length ?? 0);
    const failed = (status.failed ?? 0) + (status.uncountedTerminatedPods?.failed?.length ?? 0);
    status.ready = readyCount(active);
    status.terminating = terminating;

    let ending = recordedEnding(status);
    if (!ending && failed > (job.spec.backoffLimit ?? 6)) {
      ending = { interim: 'FailureTarget', terminal: 'Failed', reason: JOB_REASON.BackoffLimitExceeded, message: 'Job has reached the specified backoff limit' };
    }
    const deadline = activeDeadlineRemainingMs(job, now);
    if (!ending && deadline !== undefined) {
      if (deadline <= 0) ending = { interim: 'FailureTarget', terminal: 'Failed', reason: JOB_REASON.DeadlineExceeded, message: 'Job was active longer than specified deadline' };
      else this.queue.addAfter(key, deadline);
    }

    let activeCount = active.length;
    if (!ending) {
      if (this.expectations.satisfied(key)) activeCount = await this.manageJob(job, status, active, terminating, succeeded, track.succeededIndexes, now, nowIso);
      const complete = job.spec.completions === undefined || job.spec.completions === null ? succeeded > 0 && activeCount === 0 : succeeded >= completions && activeCount === 0;
      if (complete) ending = { interim: 'SuccessCriteriaMet', terminal: 'Complete', reason: JOB_REASON.CompletionsReached, message: 'Reached expected number of succeeded pods' };
    }
    if (ending) {
      if (ensureJobCondition(status, ending.interim, 'True', ending.reason, ending.message, nowIso) && ending.terminal === 'Failed') {
        this.recorder.event(job, 'Warning', ending.reason, 'Fail', ending.message);
      }
      if (activeCount > 0) {
        await this.deletePods(job, active);
        activeCount = 0;
      }
      // Terminal only once no pod of this round is left running, terminating or uncounted.
      if (active.length === 0 && terminating === 0 && uncountedLeft === 0) {
        ensureJobCondition(status, ending.terminal, 'True', ending.reason, ending.message, nowIso);
        if (ending.terminal === 'Complete') {
          status.completionTime = nowIso;
          this.recorder.event(job, 'Normal', 'Completed', 'Complete', 'Job completed');
        }
      }
    }
    status.active = activeCount;
    if (canonicalJson(status) !== canonicalJson(job.status ?? {})) await this.api.jobs.updateStatus({ ...job, status });
  }

  /** Counts failures since the last success for the pod-failure backoff. */
  private recordBackoff(key: string, newSucceeded: number, newFailed: number, now: number): void {
    if (newSucceeded > 0) this.backoff.delete(key);
    if (newFailed > 0) {
      const r = this.backoff.get(key) ?? { failuresAfterLastSuccess: 0, lastFailureMs: now };
      this.backoff.set(key, { failuresAfterLastSuccess: r.failuresAfterLastSuccess + newFailed, lastFailureMs: now });
    }
  }

  /**
   * upstream manageJob: deletes surplus active pods and creates missing ones (after the
   * failure backoff), suspends. Returns the active count it leads to.
   */
  private async manageJob(job: Job, status: JobStatus, active: Pod[], terminating: number, succeeded: number, succeededIndexes: Interval[], now: number, nowIso: string): Promise<number> {
    const key = objectKey(job);
    if (job.spec.suspend) {
      if (ensureJobCondition(status, 'Suspended', 'True', 'JobSuspended', 'Job suspended', nowIso)) this.recorder.event(job, 'Normal', 'Suspended', 'Suspend', 'Job suspended');
      if (active.length) await this.deletePods(job, active);
      return 0;
    }
    if (ensureJobCondition(status, 'Suspended', 'False', 'JobResumed', 'Job resumed', nowIso)) {
      status.startTime = nowIso;
      this.recorder.event(job, 'Normal', 'Resumed', 'Resume', 'Job resumed');
    }
    let want = wantActive(job, succeeded, active.length);
    if (job.spec.podReplacementPolicy === 'Failed') want = Math.max(0, want - terminating);
    const surplus = Math.max(0, active.length - want);
    const victims = activePodsForRemoval(job, active, surplus, succeededIndexes, now).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (victims.length) {
      await this.deletePods(job, victims);
      return active.length - victims.length;
    }
    if (active.length >= want) return active.length;
    const wait = backoffRemainingMs(this.backoff.get(key), now);
    if (wait > 0) {
      this.queue.addAfter(key, wait);
      return active.length;
    }
    let count = Math.min(want - active.length, MAX_POD_CREATE_DELETE_PER_SYNC);
    const indexes = isIndexed(job) ? firstPendingIndexes(active, succeededIndexes, count, job.spec.completions ?? 0) : [];
    if (isIndexed(job)) count = indexes.length;
    if (!count) return active.length;
    this.expectations.expectCreations(key, count);
    const ref = newControllerRef(job, JOBS);
    const { successes, error } = await slowStartBatch(count, SLOW_START_INITIAL_BATCH_SIZE, (i) => this.createPod(job, ref, isIndexed(job) ? indexes[i] : undefined));
    for (let i = successes; i < count; i++) this.expectations.creationObserved(key);
    if (error) throw error;
    return active.length + successes;
  }

  private async createPod(job: Job, ref: ReturnType<typeof newControllerRef>, index: number | undefined): Promise<void> {
    const twins = this.ctx.options.k8sCompatibility;
    const labels = jobPodLabels(job, twins);
    const annotations: Record<string, string> = {};
    let generateName: string | undefined;
    if (index !== undefined) {
      labels[JOB_COMPLETION_INDEX] = String(index);
      annotations[JOB_COMPLETION_INDEX] = String(index);
      mirrorUpstreamKeys(labels, twins);
      mirrorUpstreamKeys(annotations, twins);
      generateName = `${job.metadata.name}-${index}-`;
    }
    const pod = podFromTemplate(job.spec.template, job, ref, { labels, annotations, generateName, finalizers: [JOB_TRACKING_FINALIZER] });
    if (index !== undefined) {
      pod.spec.hostname = `${job.metadata.name}-${index}`;
      addCompletionIndexEnv(pod.spec.initContainers as Container[] | undefined);
      addCompletionIndexEnv(pod.spec.containers);
    }
    await this.podControl.create(job, pod);
  }

  private async deletePods(job: Job, pods: Pod[]): Promise<void> {
    const key = objectKey(job);
    this.expectations.expectDeletionsOf(key, pods.map((p) => objectKey(p)));
    await this.podControl.deleteAll(job, pods, this.expectations, key);
  }

  /**
   * Removes the tracking finalizer from pods: a JSON patch that tests the finalizer is still
   * at its index and removes it, so status writes by the node agent never conflict with it.
   */
  private async releasePods(pods: Pod[]): Promise<void> {
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        const at = (pod.metadata.finalizers ?? []).indexOf(JOB_TRACKING_FINALIZER);
        try {
          await this.api.pods.inNamespace(pod.metadata.namespace ?? '').patch(pod.metadata.name ?? '', 'json', [
            { op: 'test', path: '/metadata/uid', value: pod.metadata.uid },
            { op: 'test', path: `/metadata/finalizers/${at}`, value: JOB_TRACKING_FINALIZER },
            { op: 'remove', path: `/metadata/finalizers/${at}` },
          ]);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        this.released.add(pod.metadata.uid ?? '');
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** A pod holding the tracking finalizer whose job is gone or finished loses the finalizer. */
  private async releaseOrphanPod(podKey: string): Promise<void> {
    const pod = this.cache.pods.get(podKey);
    if (!pod?.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER)) return;
    const job = this.jobOf(pod);
    if (job && !isJobFinished(job)) return;
    await this.releasePods([pod]);
  }
}
