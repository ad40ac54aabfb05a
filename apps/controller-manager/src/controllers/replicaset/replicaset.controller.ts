import { labelSelectorFromObject } from '@orch/apimachinery';
import { objectKey, splitObjectKey, unwrapTombstone, type DeletedFinalStateUnknown } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { SLOW_START_INITIAL_BATCH_SIZE, slowStartBatch } from '../workload-common/batch';
import { claimObjects, recheckOwner } from '../workload-common/claim';
import { PodControl } from '../workload-common/pod-control';
import { controllerRefOf, controllersSelecting, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { UIDTrackingExpectations } from '../../framework/expectations';
import { isPodActive, isPodReady, podFromTemplate } from '../workload-common/pods';
import { PODS, REPLICA_SETS } from '../../framework/resources';
import { CONTROLLER_UID_INDEX, keyOf } from '../../framework/informers';
import type { Pod, ReplicaSet } from '../../framework/api';
import { podsToDelete } from './ranking';
import { calculateReplicaSetStatus, replicaSetStatusChanged } from './status';

/** upstream BurstReplicas: creations or deletions per sync at most. */
export const BURST_REPLICAS = 500;

/**
 * The ReplicaSet controller (upstream pkg/controller/replicaset): keeps `spec.replicas`
 * active pods per set, adopting matching orphans and releasing pods that stopped matching,
 * and reports counts in `status`. Creations and deletions in flight are tracked with
 * expectations: a set is not managed again until the informer saw them (or 5 min passed).
 */
export class ReplicaSetController extends QueueController {
  private readonly cache = this.informersOf({ sets: REPLICA_SETS, pods: byController(PODS) });
  private readonly api = this.clientsOf({ sets: REPLICA_SETS, pods: PODS });
  private readonly podControl = new PodControl(this.api.pods, () => this.recorder);
  private readonly expectations = new UIDTrackingExpectations();

  constructor(ctx: ControllerContext) {
    super('replicaset', ctx, { reportingController: 'replicaset-controller' });
    this.cache.sets.addEventHandler({
      onAdd: (rs) => this.queue.add(objectKey(rs)),
      onUpdate: (old, cur) => {
        if (old.metadata.uid !== cur.metadata.uid) this.expectations.delete(objectKey(old));
        this.queue.add(objectKey(cur));
      },
      onDelete: (obj) => {
        const key = keyOf(obj);
        this.expectations.delete(key);
        this.queue.add(key);
      },
    });
    this.cache.pods.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (old, cur) => this.updatePod(old, cur),
      onDelete: (obj) => this.deletePod(obj),
    });
  }

  private setOf(pod: Pod, ref = controllerRefOf(pod)): ReplicaSet | undefined {
    return resolveControllerRef(pod.metadata.namespace, ref, REPLICA_SETS, this.cache.sets);
  }

  /** Sets whose (non-empty) selector matches the pod's labels: candidates to adopt an orphan. */
  private setsMatching(pod: Pod): ReplicaSet[] {
    return controllersSelecting(this.cache.sets, pod);
  }

  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      // A pod already being deleted (e.g. seen at restart) is no creation observation.
      this.deletePod(pod);
      return;
    }
    const ref = controllerRefOf(pod);
    if (ref) {
      const rs = this.setOf(pod, ref);
      if (!rs) return;
      this.expectations.creationObserved(objectKey(rs));
      this.queue.add(objectKey(rs));
      return;
    }
    for (const rs of this.setsMatching(pod)) this.queue.add(objectKey(rs));
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
    if (cur.metadata.deletionTimestamp) {
      // Graceful deletion started: replace the pod now rather than when it is gone.
      this.deletePod(cur);
      if (labelsChanged) this.deletePod(old);
      return;
    }
    const curRef = controllerRefOf(cur);
    const oldRef = controllerRefOf(old);
    const refChanged = JSON.stringify(curRef) !== JSON.stringify(oldRef);
    if (refChanged && oldRef) {
      const oldSet = this.setOf(old, oldRef);
      if (oldSet) this.queue.add(objectKey(oldSet));
    }
    if (curRef) {
      const rs = this.setOf(cur, curRef);
      if (!rs) return;
      this.queue.add(objectKey(rs));
      const minReady = rs.spec.minReadySeconds ?? 0;
      // Became ready: availability changes after minReadySeconds (+1 s against clock skew).
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.queue.addAfter(objectKey(rs), minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const rs of this.setsMatching(cur)) this.queue.add(objectKey(rs));
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = unwrapTombstone(obj);
    const rs = this.setOf(pod);
    if (!rs) return;
    const key = objectKey(rs);
    this.expectations.deletionObservedOf(key, objectKey(pod));
    this.queue.add(key);
  }

  /** upstream syncReplicaSet: claim pods, create or delete toward spec.replicas, update status. */
  async sync(key: string): Promise<void> {
    const cached = this.cache.sets.get(key);
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const needsSync = this.expectations.satisfied(key);
    const selector = labelSelectorFromObject(cached.spec.selector);
    const { namespace } = splitObjectKey(key);
    const active = this.cache.pods.listInNamespace(namespace ?? '').filter(isPodActive);
    const pods = await claimObjects(active, {
      owner: cached,
      ownerType: REPLICA_SETS,
      selector,
      client: this.api.pods,
      canAdopt: recheckOwner(this.api.sets, cached),
    });
    let manageError: Error | undefined;
    if (needsSync && !cached.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(pods, cached);
      } catch (err) {
        manageError = err as Error;
      }
    }
    const status = calculateReplicaSetStatus(cached, pods, manageError, Date.now());
    const updated = await this.updateStatus(cached, status);
    const minReady = updated.spec.minReadySeconds ?? 0;
    const replicas = updated.spec.replicas ?? 1;
    if (!manageError && minReady > 0 && updated.status?.readyReplicas === replicas && updated.status?.availableReplicas !== replicas) {
      this.queue.addAfter(key, minReady * 1000);
    }
    if (manageError) throw manageError;
  }

  private async manageReplicas(pods: Pod[], rs: ReplicaSet): Promise<void> {
    const key = objectKey(rs);
    const diff = pods.length - (rs.spec.replicas ?? 1);
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, count);
      const ref = newControllerRef(rs, REPLICA_SETS);
      const { successes, error } = await slowStartBatch(count, SLOW_START_INITIAL_BATCH_SIZE, () => this.createPod(rs, ref));
      // Creations never attempted will never be observed.
      for (let i = successes; i < count; i++) this.expectations.creationObserved(key);
      if (error) throw error;
    } else if (diff > 0) {
      const count = Math.min(diff, BURST_REPLICAS);
      const victims = podsToDelete(pods, this.relatedPods(rs), count, Date.now());
      this.expectations.expectDeletionsOf(key, victims.map((p) => objectKey(p)));
      await this.podControl.deleteAll(rs, victims, this.expectations, key);
    }
  }

  private async createPod(rs: ReplicaSet, ref: ReturnType<typeof newControllerRef>): Promise<void> {
    const pod = podFromTemplate(rs.spec.template, rs, ref);
    if (!Object.keys(pod.metadata.labels ?? {}).length) throw new Error('unable to create pods, no labels');
    await this.podControl.create(rs, pod);
  }

  /** upstream getIndirectlyRelatedPods: pods of every set with the same controller as `rs`. */
  private relatedPods(rs: ReplicaSet): Pod[] {
    const ref = controllerRefOf(rs);
    const family = ref
      ? this.cache.sets.listInNamespace(rs.metadata.namespace ?? '').filter((s) => controllerRefOf(s)?.uid === ref.uid)
      : [rs];
    const seen = new Set<string>();
    const out: Pod[] = [];
    for (const s of family) {
      for (const pod of this.cache.pods.byIndex(CONTROLLER_UID_INDEX, s.metadata.uid ?? '')) {
        if (seen.has(pod.metadata.uid ?? '')) continue;
        seen.add(pod.metadata.uid ?? '');
        out.push(pod);
      }
    }
    return out;
  }

  /** upstream updateReplicaSetStatus: writes when changed; on failure re-reads once and retries. */
  private async updateStatus(rs: ReplicaSet, status: NonNullable<ReplicaSet['status']>): Promise<ReplicaSet> {
    if (!replicaSetStatusChanged(rs, status)) return rs;
    let current = rs;
    for (let attempt = 0; ; attempt++) {
      const next: ReplicaSet = { ...structuredClone(current), status: { ...status, observedGeneration: current.metadata.generation } };
      try {
        return await this.api.sets.updateStatus(next);
      } catch (err) {
        if (attempt >= 1) throw err;
        current = await this.api.sets.inNamespace(rs.metadata.namespace ?? '').get(rs.metadata.name ?? '');
      }
    }
  }
}

