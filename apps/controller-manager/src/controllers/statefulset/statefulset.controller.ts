import { labelSelectorFromObject, type KubeObject } from '@orch/apimachinery';
import { isAlreadyExists, isNotFound, objectKey, visitOnEvents } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { claimObjects, recheckOwner } from '../workload-common/claim';
import { controllerRefOf, controllersSelecting, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { CONTROLLER_REVISIONS, PERSISTENT_VOLUME_CLAIMS, PODS, STATEFUL_SETS } from '../../framework/resources';
import { newRevision, nextRevisionNumber, revisionDecision, revisionsToPrune, templateOf } from '../workload-common/revisions';
import { CONTROLLER_UID_INDEX } from '../../framework/informers';
import type { ControllerRevision, StatefulSet } from '../../framework/api';
import { canonicalJson } from '../workload-common/hash';
import { isMemberOf, podClaims, podRevision, POD_INDEX_LABEL, POD_NAME_LABEL } from './identity';
import { planStatefulSet, type RevisionInfo, type SetAction } from './plan';

/**
 * The StatefulSet controller (upstream pkg/controller/statefulset): pods `<set>-<ordinal>`
 * with stable identity (`statefulset.orch.io/pod-name` label, hostname, subdomain, claims
 * from volumeClaimTemplates), created in order and removed in reverse order (OrderedReady)
 * or all at once (Parallel); RollingUpdate (with partition) or OnDelete updates tracked
 * with ControllerRevisions (currentRevision / updateRevision).
 */
export class StatefulSetController extends QueueController {
  private readonly cache = this.informersOf({ sets: STATEFUL_SETS, pods: byController(PODS), revisions: byController(CONTROLLER_REVISIONS) });
  private readonly api = this.clientsOf({ sets: STATEFUL_SETS, pods: PODS, revisions: CONTROLLER_REVISIONS, claims: PERSISTENT_VOLUME_CLAIMS });

  constructor(ctx: ControllerContext) {
    super('statefulset', ctx, { reportingController: 'statefulset-controller' });
    this.enqueueOn(this.cache.sets, objectKey);
    visitOnEvents(this.cache.pods, (pod) => this.enqueueFor(pod), (old, cur) => controllerRefOf(old)?.uid !== controllerRefOf(cur)?.uid);
    visitOnEvents(this.cache.revisions, (r) => this.enqueueFor(r), () => false);
  }

  /** The owning set, or for an orphan pod every set whose selector matches it. */
  private enqueueFor(obj: KubeObject): void {
    const ref = controllerRefOf(obj);
    if (ref) {
      const set = resolveControllerRef(obj.metadata.namespace, ref, STATEFUL_SETS, this.cache.sets);
      if (set) this.queue.add(objectKey(set));
      return;
    }
    if (obj.kind === 'ControllerRevision') return;
    for (const set of controllersSelecting(this.cache.sets, obj)) this.queue.add(objectKey(set));
  }

  /** upstream StatefulSetController.sync + defaultStatefulSetControl.UpdateStatefulSet. */
  async sync(key: string): Promise<void> {
    const cached = this.cache.sets.get(key);
    if (!cached) return;
    const set = structuredClone(cached);
    const pods = await claimObjects(this.cache.pods.listInNamespace(set.metadata.namespace ?? ''), {
      owner: set,
      ownerType: STATEFUL_SETS,
      selector: labelSelectorFromObject(set.spec.selector),
      client: this.api.pods,
      canAdopt: recheckOwner(this.api.sets, set),
      filter: (pod) => isMemberOf(set, pod),
    });
    const owned = this.cache.revisions.byIndex(CONTROLLER_UID_INDEX, set.metadata.uid ?? '');
    const { current, update, collisionCount } = await this.syncRevisions(set, owned);
    const ref = newControllerRef(set, STATEFUL_SETS);
    const plan = planStatefulSet(set, pods, current, update, ref, Date.now(), set.status?.currentReplicas ?? 0);
    for (const action of plan.actions) await this.apply(set, action);

    const status: NonNullable<StatefulSet['status']> = { replicas: 0, ...set.status };
    Object.assign(status, plan.status, { observedGeneration: set.metadata.generation, currentRevision: current.name, updateRevision: update.name });
    if (collisionCount !== undefined) status.collisionCount = collisionCount;
    // upstream completeRollingUpdate: once every pod is updated and ready the update is current.
    if ((set.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = status.updateRevision;
    }
    if (canonicalJson(status) !== canonicalJson(set.status ?? {})) await this.api.sets.updateStatus({ ...set, status });

    const live = new Set([current.name, update.name, status.currentRevision ?? '', ...pods.map((p) => podRevision(p) ?? '')]);
    for (const old of revisionsToPrune(owned, live, set.spec.revisionHistoryLimit ?? 10)) {
      await this.api.revisions.inNamespace(old.metadata.namespace ?? '').delete(old.metadata.name ?? '').catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    if (plan.requeueAfterMs) this.queue.addAfter(key, plan.requeueAfterMs);
  }

  /** upstream getStatefulSetRevisions: the current and update revisions, creating or bumping as needed. */
  private async syncRevisions(set: StatefulSet, owned: ControllerRevision[]): Promise<{ current: RevisionInfo; update: RevisionInfo; collisionCount?: number }> {
    let collisionCount = set.status?.collisionCount;
    const candidate = newRevision(set, STATEFUL_SETS, set.spec.template, nextRevisionNumber(owned), collisionCount);
    const decision = revisionDecision(owned, candidate);
    let update: ControllerRevision;
    if (decision.action === 'reuse') update = decision.revision;
    else if (decision.action === 'bump') update = await this.api.revisions.update({ ...structuredClone(decision.revision), revision: candidate.revision });
    else {
      for (let created: ControllerRevision | undefined; ; ) {
        const attempt = newRevision(set, STATEFUL_SETS, set.spec.template, candidate.revision, collisionCount);
        try {
          created = await this.api.revisions.create(attempt);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          const existing = await this.api.revisions.inNamespace(set.metadata.namespace ?? '').get(attempt.metadata.name ?? '');
          if (JSON.stringify(existing.data) === JSON.stringify(attempt.data) && controllerRefOf(existing)?.uid === set.metadata.uid) created = existing;
          else collisionCount = (collisionCount ?? 0) + 1;
        }
        if (created) {
          update = created;
          break;
        }
      }
    }
    const currentRevision = owned.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
    const info = (r: ControllerRevision): RevisionInfo => ({ name: r.metadata.name ?? '', template: templateOf(r) ?? set.spec.template });
    return { current: info(currentRevision), update: info(update), collisionCount };
  }

  private async apply(set: StatefulSet, action: SetAction): Promise<void> {
    const pod = action.pod;
    const name = pod.metadata.name ?? '';
    const pods = this.api.pods.inNamespace(set.metadata.namespace ?? '');
    switch (action.type) {
      case 'create':
        for (const claim of podClaims(set, name)) {
          await this.api.claims.inNamespace(set.metadata.namespace ?? '').create(claim).catch((err: unknown) => {
            if (!isAlreadyExists(err)) throw err;
          });
        }
        try {
          await pods.create(pod);
          this.recorder.event(set, 'Normal', 'SuccessfulCreate', 'Create', `create Pod ${name} in StatefulSet ${set.metadata.name} successful`);
        } catch (err) {
          if (isAlreadyExists(err)) return;
          this.recorder.event(set, 'Warning', 'FailedCreate', 'Create', `create Pod ${name} in StatefulSet ${set.metadata.name} failed error: ${(err as Error).message}`);
          throw err;
        }
        return;
      case 'delete':
        try {
          await pods.delete(name, { preconditions: { uid: pod.metadata.uid } });
          this.recorder.event(set, 'Normal', 'SuccessfulDelete', 'Delete', `delete Pod ${name} in StatefulSet ${set.metadata.name} successful`);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        return;
      case 'fixIdentity': {
        const ordinal = /-(\d+)$/.exec(name)?.[1] ?? '';
        await pods.patch(name, 'merge', { metadata: { resourceVersion: pod.metadata.resourceVersion, labels: { [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: ordinal } } });
        return;
      }
    }
  }
}
