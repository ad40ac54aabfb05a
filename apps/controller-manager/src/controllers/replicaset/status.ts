import { formatTime, labelSelectorFromSet } from '@orch/apimachinery';
import { findCondition, isPodAvailable, isPodReady } from '../workload-common/pods';
import type { Pod, ReplicaSet } from '../../framework/api';

type ReplicaSetStatus = NonNullable<ReplicaSet['status']>;

/**
 * upstream calculateStatus: counts of the active pods the set controls (all, fully
 * labelled, ready, available after minReadySeconds), and the ReplicaFailure condition set
 * when manageReplicas failed (FailedCreate / FailedDelete) and removed once it succeeds.
 * observedGeneration is left as it was (the update sets it).
 */
export function calculateReplicaSetStatus(rs: ReplicaSet, pods: readonly Pod[], manageError: Error | undefined, nowMs: number): ReplicaSetStatus {
  const status: ReplicaSetStatus = structuredClone(rs.status ?? { replicas: 0 });
  const templateLabels = labelSelectorFromSet(rs.spec.template?.metadata?.labels);
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of pods) {
    if (templateLabels.matches(pod.metadata.labels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, rs.spec.minReadySeconds ?? 0, nowMs)) available++;
    }
  }
  const failure = findCondition(status.conditions, 'ReplicaFailure');
  if (manageError && !failure) {
    const diff = pods.length - (rs.spec.replicas ?? 1);
    const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
    status.conditions = [
      ...(status.conditions ?? []),
      { type: 'ReplicaFailure', status: 'True', lastTransitionTime: formatTime(nowMs), reason, message: manageError.message },
    ];
  } else if (!manageError && failure) {
    status.conditions = status.conditions?.filter((c) => c.type !== 'ReplicaFailure');
    if (!status.conditions?.length) delete status.conditions;
  }
  status.replicas = pods.length;
  status.fullyLabeledReplicas = fullyLabeled;
  status.readyReplicas = ready;
  status.availableReplicas = available;
  return status;
}

/** True when `status` differs from the set's current status or generation was not observed yet. */
export function replicaSetStatusChanged(rs: ReplicaSet, status: ReplicaSetStatus): boolean {
  const cur: Partial<ReplicaSetStatus> = rs.status ?? {};
  return (
    (cur.replicas ?? 0) !== (status.replicas ?? 0) ||
    (cur.fullyLabeledReplicas ?? 0) !== (status.fullyLabeledReplicas ?? 0) ||
    (cur.readyReplicas ?? 0) !== (status.readyReplicas ?? 0) ||
    (cur.availableReplicas ?? 0) !== (status.availableReplicas ?? 0) ||
    cur.observedGeneration !== rs.metadata.generation ||
    JSON.stringify(cur.conditions ?? []) !== JSON.stringify(status.conditions ?? [])
  );
}
