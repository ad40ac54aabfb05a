import type { Job, JobStatus, Pod } from '../../framework/api';
import { completionIndexOf, hasIndex, parseIndexes, withIndexes, type Interval } from './indexes';
import { isIndexed, isPodFailed, JOB_TRACKING_FINALIZER } from './job-util';

/** What counting finished pods found (upstream trackJobStatusAndRemoveFinalizers, before writes). */
export interface TrackResult {
  /** `status.uncountedTerminatedPods` with the newly finished pods added. */
  uncounted: { succeeded: string[]; failed: string[] };
  /** Indexes that succeeded, including new ones (Indexed jobs). */
  succeededIndexes: Interval[];
  /** Pods whose tracking finalizer may be removed once `uncounted` is written. */
  release: Pod[];
  newSucceeded: number;
  newFailed: number;
  /** `uncounted` or `succeededIndexes` changed: write status before removing finalizers. */
  needsFlush: boolean;
}

/**
 * Counts the job's finished pods exactly once (upstream job tracking with finalizers).
 * Pods still holding the tracking finalizer that succeeded or failed (a deleted pod that did
 * not succeed counts as failed, see isPodFailed) are added to `uncountedTerminatedPods`
 * (Indexed jobs: a success adds its index instead); they are released only after that
 * status is written, and moved into the counts once their finalizer is gone
 * ({@link moveUncounted}). `released` holds pods whose finalizer removal is in flight.
 */
export function trackFinishedPods(job: Job, pods: readonly Pod[], released: ReadonlySet<string>): TrackResult {
  const indexed = isIndexed(job);
  const completions = job.spec.completions ?? 0;
  const prev = job.status?.uncountedTerminatedPods ?? {};
  const succeeded = new Set(prev.succeeded ?? []);
  const failed = new Set(prev.failed ?? []);
  const prevIndexes = indexed ? parseIndexes(job.status?.completedIndexes, completions) : [];
  const newIndexes: number[] = [];
  const release: Pod[] = [];
  let newSucceeded = 0;
  let newFailed = 0;
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? '';
    if (!pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) || released.has(uid)) continue;
    if (succeeded.has(uid) || failed.has(uid)) {
      release.push(pod);
      continue;
    }
    const ix = completionIndexOf(pod);
    const validIndex = !indexed || (ix !== undefined && ix < completions);
    if (pod.status?.phase === 'Succeeded') {
      release.push(pod);
      if (indexed) {
        if (validIndex && !hasIndex(prevIndexes, ix as number) && !newIndexes.includes(ix as number)) {
          newIndexes.push(ix as number);
          newSucceeded++;
        }
      } else {
        succeeded.add(uid);
        newSucceeded++;
      }
    } else if (isPodFailed(pod, job)) {
      release.push(pod);
      if (validIndex) {
        failed.add(uid);
        newFailed++;
      }
    }
  }
  return {
    uncounted: { succeeded: [...succeeded], failed: [...failed] },
    succeededIndexes: withIndexes(prevIndexes, newIndexes),
    release,
    newSucceeded,
    newFailed,
    needsFlush: newSucceeded + newFailed > 0,
  };
}

/**
 * upstream cleanUncountedPodsWithoutFinalizers (mutates `status`): uncounted pods that no
 * longer hold the finalizer (`withFinalizer` lacks them) move into succeeded / failed.
 * Returns whether anything moved.
 */
export function moveUncounted(status: JobStatus, withFinalizer: ReadonlySet<string>): boolean {
  const u = status.uncountedTerminatedPods ?? {};
  const keptSucceeded = (u.succeeded ?? []).filter((uid) => withFinalizer.has(uid));
  const keptFailed = (u.failed ?? []).filter((uid) => withFinalizer.has(uid));
  const movedSucceeded = (u.succeeded ?? []).length - keptSucceeded.length;
  const movedFailed = (u.failed ?? []).length - keptFailed.length;
  if (!movedSucceeded && !movedFailed) return false;
  status.succeeded = (status.succeeded ?? 0) + movedSucceeded;
  status.failed = (status.failed ?? 0) + movedFailed;
  status.uncountedTerminatedPods = { ...(keptSucceeded.length ? { succeeded: keptSucceeded } : {}), ...(keptFailed.length ? { failed: keptFailed } : {}) };
  return true;
}
