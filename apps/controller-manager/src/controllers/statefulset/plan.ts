/**
 * The StatefulSet update algorithm (upstream defaultStatefulSetControl.updateStatefulSet)
 * as a pure plan: which pods to create, delete or relabel this round, and the status that
 * results. OrderedReady ("monotonic") sets do one thing per round and never act past an
 * unhealthy pod: pods are created in ordinal order, each after its predecessors are
 * Running and Ready, and removed from the highest ordinal down. Parallel sets act on all
 * pods at once. RollingUpdate replaces pods from the highest ordinal down to the partition,
 * one at a time, waiting for each to be healthy.
 */
import type { OwnerReference } from '@orch/apimachinery';
import { isPodAvailable, isPodReady } from '../workload-common/pods';
import type { Pod, PodTemplateSpec, StatefulSet } from '../../framework/api';
import { identityMatches, newStatefulPod, parentAndOrdinal, podRevision, startOrdinal } from './identity';

export interface RevisionInfo {
  name: string;
  template: PodTemplateSpec;
}

export type SetAction = { type: 'create'; pod: Pod } | { type: 'delete'; pod: Pod } | { type: 'fixIdentity'; pod: Pod };

export interface SetStatusCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
}

export interface SetPlan {
  actions: SetAction[];
  status: SetStatusCounts;
  /** Check again after this many ms (a pod becoming available after minReadySeconds). */
  requeueAfterMs?: number;
}

function isCreated(pod: Pod): boolean {
  return !!pod.metadata.uid;
}

function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

function isTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

function isHealthy(pod: Pod): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod);
}

/**
 * upstream newVersionedStatefulSetPod's choice of revision: with a rollingUpdate partition,
 * ordinals below it keep the current revision; a RollingUpdate set without rollingUpdate
 * keeps it below its current replica count; everything else gets the update revision.
 */
function revisionFor(set: StatefulSet, ordinal: number, current: RevisionInfo, update: RevisionInfo, currentReplicas: number): RevisionInfo {
  const strategy = set.spec.updateStrategy;
  const ru = strategy?.rollingUpdate;
  const start = startOrdinal(set);
  const rolling = (strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  if ((rolling && !ru && ordinal < start + currentReplicas) || (ru && ordinal < start + (ru.partition ?? 0))) return current;
  return update;
}

/** Plans one round for `set` given its pods (members only) and revisions. */
export function planStatefulSet(set: StatefulSet, pods: readonly Pod[], current: RevisionInfo, update: RevisionInfo, ref: OwnerReference, nowMs: number, priorCurrentReplicas: number): SetPlan {
  const replicaCount = set.spec.replicas ?? 1;
  const start = startOrdinal(set);
  const minReady = set.spec.minReadySeconds ?? 0;
  const monotonic = (set.spec.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
  const status: SetStatusCounts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  const replicas: (Pod | undefined)[] = new Array(replicaCount).fill(undefined);
  const condemned: Pod[] = [];
  for (const pod of pods) {
    status.replicas++;
    if (isRunningAndReady(pod)) {
      status.readyReplicas++;
      if (isPodAvailable(pod, minReady, nowMs)) status.availableReplicas++;
    }
    if (!isTerminating(pod)) {
      if (podRevision(pod) === current.name) status.currentReplicas++;
      if (podRevision(pod) === update.name) status.updatedReplicas++;
    }
    const ordinal = parentAndOrdinal(pod)?.ordinal ?? -1;
    if (ordinal >= start && ordinal < start + replicaCount) replicas[ordinal - start] = pod;
    else condemned.push(pod);
  }
  const fresh = (i: number): Pod => {
    const rev = revisionFor(set, start + i, current, update, priorCurrentReplicas);
    return newStatefulPod(set, rev.template, start + i, rev.name, ref);
  };
  const slots: Pod[] = replicas.map((p, i) => p ?? fresh(i));
  condemned.sort((a, b) => (parentAndOrdinal(a)?.ordinal ?? 0) - (parentAndOrdinal(b)?.ordinal ?? 0));
  const actions: SetAction[] = [];
  const done = (requeueAfterMs?: number): SetPlan => ({ actions, status, requeueAfterMs });
  const counted = (pod: Pod, delta: number) => {
    status.replicas += delta;
    if (podRevision(pod) === current.name) status.currentReplicas += delta;
    if (podRevision(pod) === update.name) status.updatedReplicas += delta;
  };
  const firstUnhealthy = [...slots.filter(isCreated), ...condemned].find((p) => !isHealthy(p));
  if (set.metadata.deletionTimestamp) return done();

  for (let i = 0; i < slots.length; i++) {
    let pod = slots[i];
    if (isCreated(pod) && pod.status?.phase === 'Failed' && !isTerminating(pod)) {
      actions.push({ type: 'delete', pod });
      counted(pod, -1);
      pod = slots[i] = fresh(i);
    }
    if (!isCreated(pod)) {
      actions.push({ type: 'create', pod });
      counted(pod, +1);
      if (monotonic) return done();
      continue;
    }
    if (isTerminating(pod) && monotonic) return done();
    if (!isRunningAndReady(pod) && monotonic) return done();
    if (!isPodAvailable(pod, minReady, nowMs) && monotonic) return done(minReady * 1000);
    if (!identityMatches(set, pod)) actions.push({ type: 'fixIdentity', pod });
  }

  for (let t = condemned.length - 1; t >= 0; t--) {
    const pod = condemned[t];
    if (isTerminating(pod)) {
      if (monotonic) return done();
      continue;
    }
    if (!isRunningAndReady(pod) && monotonic && pod !== firstUnhealthy) return done();
    actions.push({ type: 'delete', pod });
    counted(pod, -1);
    if (monotonic) return done();
  }

  if ((set.spec.updateStrategy?.type ?? 'RollingUpdate') === 'OnDelete') return done();
  const updateMin = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  for (let t = slots.length - 1; t >= updateMin; t--) {
    const pod = slots[t];
    if (podRevision(pod) !== update.name && !isTerminating(pod)) {
      actions.push({ type: 'delete', pod });
      if (podRevision(pod) === current.name) status.currentReplicas--;
      return done();
    }
    if (!isHealthy(pod)) return done();
  }
  return done();
}
