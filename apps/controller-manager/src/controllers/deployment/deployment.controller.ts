import { mirrorUpstreamKeys, readWellKnown, upstreamKeysMissing } from '@orch/api';
import { formatTime, labelSelectorFromObject } from '@orch/apimachinery';
import { isAlreadyExists, isNotFound, objectKey, splitObjectKey, unwrapTombstone, type DeletedFinalStateUnknown } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { claimObjects, recheckOwner } from '../workload-common/claim';
import { controllerRefOf, controllersSelecting, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { findCondition } from '../workload-common/pods';
import { DEPLOYMENTS, PODS, REPLICA_SETS } from '../../framework/resources';
import { CONTROLLER_UID_INDEX } from '../../framework/informers';
import type { Deployment, Pod, ReplicaSet } from '../../framework/api';
import {
  activeSets,
  calculateDeploymentStatus,
  deploymentComplete,
  desiredReplicasAnnotation,
  equalIgnoreHash,
  findNewReplicaSet,
  findOldReplicaSets,
  hasProgressDeadline,
  maxRevision,
  maxSurge,
  newDeploymentCondition,
  newRSNewReplicas,
  planOldReplicaSetScaleDown,
  planProportionalScale,
  POD_TEMPLATE_HASH_LABEL,
  REASON,
  REVISION_ANNOTATION,
  replicasAnnotationsNeedUpdate,
  replicaSetsToCleanUp,
  rolloutStatus,
  sameStatus,
  setDeploymentCondition,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  specReplicas,
  stuckRecheckAfterMs,
  templateHash,
} from './util';

/** The deployment being synced; `d` is replaced by the API's answer after each status write. */
interface SyncState {
  d: Deployment;
  /** A revision annotation to write to the deployment before its status. */
  revision?: string;
}

/**
 * The Deployment controller (upstream pkg/controller/deployment): owns ReplicaSets named
 * `<deployment>-<pod-template-hash>`, rolls the template out with RollingUpdate (maxSurge /
 * maxUnavailable) or Recreate, keeps revisionHistoryLimit old sets, scales proportionally
 * on scaling events and while paused, and reports status with the Available and
 * Progressing conditions (progressDeadlineSeconds). A rollback is a template change back to
 * an older one: the matching old ReplicaSet is reused and gets the next revision.
 */
export class DeploymentController extends QueueController {
  private readonly cache = this.informersOf({ deployments: DEPLOYMENTS, sets: byController(REPLICA_SETS), pods: byController(PODS) });
  private readonly api = this.clientsOf({ deployments: DEPLOYMENTS, sets: REPLICA_SETS });
  /** Write the `deployment.kubernetes.io/*` twins kubectl rollout reads (compatibility option). */
  private readonly upstreamTwins: boolean;

  constructor(ctx: ControllerContext) {
    super('deployment', ctx, { reportingController: 'deployment-controller' });
    this.upstreamTwins = ctx.options.k8sCompatibility;
    this.enqueueOn(this.cache.deployments, objectKey);
    this.cache.sets.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (old, cur) => this.updateReplicaSet(old, cur),
      onDelete: (obj) => this.enqueueOwner(unwrapTombstone(obj)),
    });
    this.cache.pods.addEventHandler({ onDelete: (obj) => this.deletePod(obj) });
  }

  private ownerOf(rs: ReplicaSet, ref = controllerRefOf(rs)): Deployment | undefined {
    return resolveControllerRef(rs.metadata.namespace, ref, DEPLOYMENTS, this.cache.deployments);
  }

  private enqueueOwner(rs: ReplicaSet): void {
    const d = this.ownerOf(rs);
    if (d) this.queue.add(objectKey(d));
  }

  /** Deployments whose non-empty selector matches an orphan set: they may adopt it. */
  private enqueueMatching(rs: ReplicaSet): void {
    for (const d of controllersSelecting(this.cache.deployments, rs)) this.queue.add(objectKey(d));
  }

  private addReplicaSet(rs: ReplicaSet): void {
    if (controllerRefOf(rs)) this.enqueueOwner(rs);
    else if (!rs.metadata.deletionTimestamp) this.enqueueMatching(rs);
  }

  private updateReplicaSet(old: ReplicaSet, cur: ReplicaSet): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const oldRef = controllerRefOf(old);
    const curRef = controllerRefOf(cur);
    const refChanged = JSON.stringify(oldRef) !== JSON.stringify(curRef);
    if (refChanged && oldRef) this.enqueueOwner(old);
    if (curRef) {
      this.enqueueOwner(cur);
      return;
    }
    const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
    if (labelsChanged || refChanged) this.enqueueMatching(cur);
  }

  /** A Recreate rollout waits for old pods to go: a pod deletion may let it continue. */
  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = unwrapTombstone(obj);
    const rs = resolveControllerRef(pod.metadata.namespace, controllerRefOf(pod), REPLICA_SETS, this.cache.sets);
    const d = rs && this.ownerOf(rs);
    if (d && d.spec.strategy?.type === 'Recreate') this.queue.add(objectKey(d));
  }

  /** upstream syncDeployment. */
  async sync(key: string): Promise<void> {
    const cached = this.cache.deployments.get(key);
    if (!cached) return;
    const state: SyncState = { d: structuredClone(cached) };
    const d = state.d;
    const sel = d.spec.selector ?? {};
    if (!sel.matchLabels && !sel.matchExpressions) {
      this.recorder.event(d, 'Warning', 'SelectingAll', 'Sync', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        await this.writeStatus(state, { ...(d.status ?? {}), observedGeneration: d.metadata.generation });
      }
      return;
    }
    const sets = await this.replicaSetsFor(d);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(state, sets);
    await this.checkPausedConditions(state);
    if (state.d.spec.paused) return this.syncScale(state, sets);
    if (await this.isScalingEvent(state, sets)) return this.syncScale(state, sets);
    if (state.d.spec.strategy?.type === 'Recreate') return this.rolloutRecreate(state, sets);
    return this.rolloutRolling(state, sets);
  }

  /** upstream getReplicaSetsForDeployment: claim (adopt / release) sets by the selector. */
  private async replicaSetsFor(d: Deployment): Promise<ReplicaSet[]> {
    const { namespace } = splitObjectKey(objectKey(d));
    return claimObjects(this.cache.sets.listInNamespace(namespace ?? ''), {
      owner: d,
      ownerType: DEPLOYMENTS,
      selector: labelSelectorFromObject(d.spec.selector),
      client: this.api.sets,
      canAdopt: recheckOwner(this.api.deployments, d),
    });
  }

  private async writeStatus(state: SyncState, status: Deployment['status']): Promise<void> {
    state.d = await this.api.deployments.updateStatus({ ...state.d, status });
  }

  /**
   * upstream getAllReplicaSetsAndSyncRevision: the new set (created when asked and missing)
   * with its revision synced, and every old set.
   */
  private async allReplicaSets(state: SyncState, sets: ReplicaSet[], create: boolean): Promise<{ newRS?: ReplicaSet; oldSets: ReplicaSet[] }> {
    const { all: oldSets } = findOldReplicaSets(state.d, sets);
    const newRS = await this.newReplicaSet(state, sets, oldSets, create);
    return { newRS, oldSets };
  }

  /** upstream getNewReplicaSet. */
  private async newReplicaSet(state: SyncState, sets: ReplicaSet[], oldSets: ReplicaSet[], create: boolean): Promise<ReplicaSet | undefined> {
    const d = state.d;
    const existing = findNewReplicaSet(d, sets);
    const newRevision = maxRevision(oldSets) + 1;
    const nowIso = formatTime(Date.now());
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true, this.upstreamTwins);
      const minReadyChanged = (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
      if (annotationsChanged || minReadyChanged) {
        copy.spec.minReadySeconds = d.spec.minReadySeconds;
        return this.api.sets.update(copy);
      }
      const status = structuredClone(d.status ?? {});
      this.recordRevision(state, readWellKnown(copy.metadata.annotations, REVISION_ANNOTATION));
      let needsUpdate = false;
      if (hasProgressDeadline(d) && !findCondition(status.conditions, 'Progressing')) {
        setDeploymentCondition(status, newDeploymentCondition('Progressing', 'True', REASON.FoundNewRS, `Found new replica set "${copy.metadata.name}"`, nowIso));
        needsUpdate = true;
      }
      if (needsUpdate) await this.writeStatus(state, status);
      return copy;
    }
    if (!create) return undefined;

    const hash = templateHash(d.spec.template, d.status?.collisionCount);
    const template = structuredClone(d.spec.template);
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } };
    const selector = structuredClone(d.spec.selector);
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const rs: ReplicaSet = {
      apiVersion: REPLICA_SETS.apiVersion,
      kind: REPLICA_SETS.kind,
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        ownerReferences: [newControllerRef(d, DEPLOYMENTS)],
        labels: template.metadata.labels,
      },
      spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds, selector, template },
    };
    rs.spec.replicas = newRSNewReplicas(d, [...oldSets, rs], rs);
    setNewReplicaSetAnnotations(d, rs, newRevision, false, this.upstreamTwins);
    let created: ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await this.api.sets.create(rs);
    } catch (err) {
      if (isAlreadyExists(err)) {
        const found = await this.api.sets.inNamespace(d.metadata.namespace ?? '').get(rs.metadata.name ?? '');
        if (controllerRefOf(found)?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, found.spec.template)) {
          created = found;
          alreadyExisted = true;
        } else {
          // A hash collision: a new collisionCount gives a new name on the next sync.
          await this.writeStatus(state, { ...(state.d.status ?? {}), collisionCount: (state.d.status?.collisionCount ?? 0) + 1 });
          throw err;
        }
      } else {
        const msg = `Failed to create new replica set "${rs.metadata.name}": ${(err as Error).message}`;
        if (hasProgressDeadline(d)) {
          const status = structuredClone(d.status ?? {});
          setDeploymentCondition(status, newDeploymentCondition('Progressing', 'False', REASON.FailedRSCreate, msg, nowIso));
          await this.writeStatus(state, status).catch(() => undefined);
        }
        this.recorder.event(d, 'Warning', 'FailedCreate', 'Create', msg);
        throw err;
      }
    }
    if (!alreadyExisted && specReplicas(created) > 0) {
      this.recorder.event(d, 'Normal', 'ScalingReplicaSet', 'Scale', `Scaled up replica set ${created.metadata.name} to ${specReplicas(created)}`);
    }
    const status = structuredClone(state.d.status ?? {});
    this.recordRevision(state, String(newRevision));
    let needsUpdate = false;
    if (!alreadyExisted && hasProgressDeadline(d)) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'True', REASON.NewReplicaSet, `Created new replica set "${created.metadata.name}"`, nowIso));
      needsUpdate = true;
    }
    if (needsUpdate) await this.writeStatus(state, status);
    return created;
  }

  /**
   * upstream SetDeploymentRevision: the deployment's revision annotation follows its new set.
   * Metadata is not written through status here, so the change waits in `state` until
   * {@link flushRevision} patches it, before the status write.
   */
  private recordRevision(state: SyncState, revision: string | undefined): void {
    const ann = state.d.metadata.annotations;
    if (revision && (ann?.[REVISION_ANNOTATION] !== revision || upstreamKeysMissing(ann, this.upstreamTwins))) state.revision = revision;
  }

  /** Writes the deployment's revision annotation when it changed during the sync. */
  private async flushRevision(state: SyncState): Promise<void> {
    const revision = state.revision;
    if (revision === undefined) return;
    state.revision = undefined;
    const annotations = { [REVISION_ANNOTATION]: revision };
    mirrorUpstreamKeys(annotations, this.upstreamTwins);
    state.d = await this.api.deployments.inNamespace(state.d.metadata.namespace ?? '').patch(state.d.metadata.name ?? '', 'merge', {
      metadata: { resourceVersion: state.d.metadata.resourceVersion, annotations },
    });
  }

  /** upstream checkPausedConditions: Progressing Unknown with DeploymentPaused / DeploymentResumed. */
  private async checkPausedConditions(state: SyncState): Promise<void> {
    const d = state.d;
    if (!hasProgressDeadline(d)) return;
    const cond = findCondition(d.status?.conditions, 'Progressing');
    if (cond?.reason === REASON.TimedOut) return;
    const pausedCond = cond?.reason === REASON.PausedDeploy;
    const nowIso = formatTime(Date.now());
    const status = structuredClone(d.status ?? {});
    if (d.spec.paused && !pausedCond) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'Unknown', REASON.PausedDeploy, 'Deployment is paused', nowIso));
    } else if (!d.spec.paused && pausedCond) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'Unknown', REASON.ResumedDeploy, 'Deployment is resumed', nowIso));
    } else {
      return;
    }
    await this.writeStatus(state, status);
  }

  /** upstream isScalingEvent: an active set's desired-replicas annotation differs from spec.replicas. */
  private async isScalingEvent(state: SyncState, sets: ReplicaSet[]): Promise<boolean> {
    const { newRS, oldSets } = await this.allReplicaSets(state, sets, false);
    return activeSets([...oldSets, newRS]).some((rs) => {
      const desired = desiredReplicasAnnotation(rs);
      return desired !== undefined && desired !== specReplicas(state.d);
    });
  }

  /** upstream sync: scale (paused or scaling event), clean up when paused, write status. */
  private async syncScale(state: SyncState, sets: ReplicaSet[]): Promise<void> {
    const { newRS, oldSets } = await this.allReplicaSets(state, sets, false);
    const { steps, operation, proportional } = planProportionalScale(state.d, newRS, oldSets);
    const updated = new Map<string, ReplicaSet>();
    for (const step of steps) {
      const res = proportional ? await this.scaleReplicaSet(step.rs, step.replicas, state.d, operation) : await this.scaleAndRecord(step.rs, step.replicas, state.d);
      updated.set(step.rs.metadata.uid ?? '', res.rs);
    }
    const latest = (rs: ReplicaSet) => updated.get(rs.metadata.uid ?? '') ?? rs;
    const olds = oldSets.map(latest);
    const fresh = newRS && latest(newRS);
    if (state.d.spec.paused) await this.cleanup(state.d, olds);
    await this.syncDeploymentStatus(state, [...olds, fresh], fresh);
  }

  private async syncStatusOnly(state: SyncState, sets: ReplicaSet[]): Promise<void> {
    const { newRS, oldSets } = await this.allReplicaSets(state, sets, false);
    await this.syncDeploymentStatus(state, [...oldSets, newRS], newRS);
  }

  private async syncDeploymentStatus(state: SyncState, all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
    await this.flushRevision(state);
    const status = calculateDeploymentStatus(all, newRS, state.d, formatTime(Date.now()));
    if (sameStatus(state.d.status, status)) return;
    await this.writeStatus(state, status);
  }

  /** upstream rolloutRolling. */
  private async rolloutRolling(state: SyncState, sets: ReplicaSet[]): Promise<void> {
    const found = await this.allReplicaSets(state, sets, true);
    let newRS = found.newRS as ReplicaSet;
    let oldSets = found.oldSets;
    const d = state.d;
    // Scale up, if we can.
    if (specReplicas(newRS) !== specReplicas(d)) {
      const target = specReplicas(newRS) > specReplicas(d) ? specReplicas(d) : newRSNewReplicas(d, [...oldSets, newRS], newRS);
      const res = await this.scaleAndRecord(newRS, target, d);
      newRS = res.rs;
      if (res.scaled) return this.syncRolloutStatus(state, [...oldSets, newRS], newRS);
    }
    // Scale down, if we can.
    const steps = planOldReplicaSetScaleDown(d, [...oldSets, newRS], activeSets(oldSets), newRS);
    if (steps.length) {
      const byUid = new Map<string, ReplicaSet>();
      for (const step of steps) byUid.set(step.rs.metadata.uid ?? '', (await this.scaleAndRecord(step.rs, step.replicas, d)).rs);
      oldSets = oldSets.map((rs) => byUid.get(rs.metadata.uid ?? '') ?? rs);
      return this.syncRolloutStatus(state, [...oldSets, newRS], newRS);
    }
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(d, oldSets);
    return this.syncRolloutStatus(state, [...oldSets, newRS], newRS);
  }

  /** upstream rolloutRecreate: all old pods gone before the new set scales up. */
  private async rolloutRecreate(state: SyncState, sets: ReplicaSet[]): Promise<void> {
    let { newRS, oldSets } = await this.allReplicaSets(state, sets, false);
    const d = state.d;
    let scaledDown = false;
    const byUid = new Map<string, ReplicaSet>();
    for (const rs of activeSets(oldSets)) {
      const res = await this.scaleAndRecord(rs, 0, d);
      byUid.set(rs.metadata.uid ?? '', res.rs);
      scaledDown ||= res.scaled;
    }
    oldSets = oldSets.map((rs) => byUid.get(rs.metadata.uid ?? '') ?? rs);
    if (scaledDown || this.oldPodsRunning(newRS, oldSets)) return this.syncRolloutStatus(state, [...oldSets, newRS], newRS);
    if (!newRS) ({ newRS, oldSets } = await this.allReplicaSets(state, sets, true));
    const res = await this.scaleAndRecord(newRS as ReplicaSet, specReplicas(d), d);
    newRS = res.rs;
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(d, oldSets);
    return this.syncRolloutStatus(state, [...oldSets, newRS], newRS);
  }

  /** upstream oldPodsRunning: old sets still report pods, or unfinished pods of old sets exist. */
  private oldPodsRunning(newRS: ReplicaSet | undefined, oldSets: ReplicaSet[]): boolean {
    if (oldSets.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
    return oldSets.some((rs) =>
      rs.metadata.uid !== newRS?.metadata.uid &&
      this.cache.pods.byIndex(CONTROLLER_UID_INDEX, rs.metadata.uid ?? '').some((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'),
    );
  }

  /** upstream syncRolloutStatus: writes the rollout status; rechecks a stuck rollout at its deadline. */
  private async syncRolloutStatus(state: SyncState, all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
    await this.flushRevision(state);
    const now = Date.now();
    const status = rolloutStatus(all, newRS, state.d, now, formatTime(now));
    if (sameStatus(state.d.status, status)) {
      const after = stuckRecheckAfterMs(state.d, status, now);
      if (after === 0) this.queue.addRateLimited(objectKey(state.d));
      else if (after !== undefined) this.queue.addAfter(objectKey(state.d), after);
      return;
    }
    await this.writeStatus(state, status);
  }

  /** upstream scaleReplicaSetAndRecordEvent: no-op when the size is already right. */
  private async scaleAndRecord(rs: ReplicaSet, replicas: number, d: Deployment): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    if (specReplicas(rs) === replicas) return { scaled: false, rs };
    return this.scaleReplicaSet(rs, replicas, d, specReplicas(rs) < replicas ? 'up' : 'down');
  }

  /** upstream scaleReplicaSet: writes the size and the desired/max annotations when either changed. */
  private async scaleReplicaSet(rs: ReplicaSet, replicas: number, d: Deployment, operation: string): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    const sizeChanged = specReplicas(rs) !== replicas;
    const max = specReplicas(d) + maxSurge(d);
    if (!sizeChanged && !replicasAnnotationsNeedUpdate(rs, specReplicas(d), max, this.upstreamTwins)) return { scaled: false, rs };
    const copy = structuredClone(rs);
    copy.spec.replicas = replicas;
    setReplicasAnnotations(copy, specReplicas(d), max, this.upstreamTwins);
    const updated = await this.api.sets.update(copy);
    if (sizeChanged) {
      this.recorder.event(d, 'Normal', 'ScalingReplicaSet', 'Scale', `Scaled ${operation} replica set ${rs.metadata.name} from ${specReplicas(rs)} to ${replicas}`);
    }
    return { scaled: sizeChanged, rs: updated };
  }

  /** upstream cleanupDeployment: deletes old sets beyond revisionHistoryLimit. */
  private async cleanup(d: Deployment, oldSets: ReplicaSet[]): Promise<void> {
    for (const rs of replicaSetsToCleanUp(d, oldSets)) {
      try {
        await this.api.sets.inNamespace(rs.metadata.namespace ?? '').delete(rs.metadata.name ?? '', { preconditions: { uid: rs.metadata.uid } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}
