import { labelSelectorFromObject, type KubeObject } from '@orch/apimachinery';
import { isAlreadyExists, isNotFound, objectKey, unwrapTombstone, type DeletedFinalStateUnknown } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController, byController } from '../../framework/queue-controller';
import { SLOW_START_INITIAL_BATCH_SIZE, slowStartBatch } from '../workload-common/batch';
import { claimObjects, recheckOwner } from '../workload-common/claim';
import { PodControl } from '../workload-common/pod-control';
import { controllerRefOf, controllersSelecting, newControllerRef, resolveControllerRef } from '../../framework/controller-ref';
import { UIDTrackingExpectations } from '../../framework/expectations';
import { CONTROLLER_REVISIONS, DAEMON_SETS, NODES, PODS } from '../../framework/resources';
import { CONTROLLER_REVISION_HASH_LABEL, byRevisionNumber, nextRevisionNumber, templatePatch } from '../workload-common/revisions';
import { CONTROLLER_UID_INDEX, keyOf } from '../../framework/informers';
import type { ControllerRevision, DaemonSet, Node, Pod } from '../../framework/api';
import { canonicalJson, computeHash } from '../workload-common/hash';
import { daemonPodFor, targetNodeName } from './placement';
import { daemonSetCounts, planDaemonPods, planRollingUpdate } from './plan';

/** upstream BurstReplicas. */
const BURST_REPLICAS = 250;

/**
 * The DaemonSet controller (upstream pkg/controller/daemon): one pod on every node whose
 * labels match the template's node selector / required node affinity and whose NoSchedule /
 * NoExecute taints the pod tolerates; each pod targets its node through node affinity on
 * `metadata.name` (the scheduler binds it). Template changes roll out with RollingUpdate
 * (maxUnavailable) or OnDelete; revisions are kept as ControllerRevisions `<ds>-<hash>`,
 * pods carry `controller-revision-hash`.
 */
export class DaemonSetController extends QueueController {
  private readonly cache = this.informersOf({ sets: DAEMON_SETS, pods: byController(PODS), nodes: NODES, revisions: byController(CONTROLLER_REVISIONS) });
  private readonly api = this.clientsOf({ sets: DAEMON_SETS, pods: PODS, revisions: CONTROLLER_REVISIONS });
  private readonly podControl = new PodControl(this.api.pods, () => this.recorder);
  private readonly expectations = new UIDTrackingExpectations();

  constructor(ctx: ControllerContext) {
    super('daemonset', ctx, { reportingController: 'daemonset-controller' });
    // A deleted set's expectations go before its key is enqueued.
    this.cache.sets.addEventHandler({ onDelete: (obj) => this.expectations.delete(keyOf(obj)) });
    this.enqueueOn(this.cache.sets, objectKey);
    this.cache.pods.addEventHandler({
      onAdd: (pod) => {
        const ds = this.ownerOf(pod);
        if (ds && !pod.metadata.deletionTimestamp) this.expectations.creationObserved(objectKey(ds));
        this.enqueueFor(pod);
      },
      onUpdate: (old, cur) => {
        if (controllerRefOf(old)?.uid !== controllerRefOf(cur)?.uid) this.enqueueFor(old);
        const ds = this.ownerOf(cur);
        if (ds && cur.metadata.deletionTimestamp) this.expectations.deletionObservedOf(objectKey(ds), objectKey(cur));
        this.enqueueFor(cur);
      },
      onDelete: (obj: Pod | DeletedFinalStateUnknown<Pod>) => {
        const pod = unwrapTombstone(obj);
        const ds = this.ownerOf(pod);
        if (ds) this.expectations.deletionObservedOf(objectKey(ds), objectKey(pod));
        this.enqueueFor(pod);
      },
    });
    const allSets = () => {
      for (const ds of this.cache.sets.list()) this.queue.add(objectKey(ds));
    };
    this.cache.nodes.addEventHandler({
      onAdd: allSets,
      onUpdate: (old, cur) => {
        const relevant = (n: Node) => JSON.stringify([n.metadata.labels, n.spec?.taints, n.spec?.unschedulable]);
        if (relevant(old) !== relevant(cur)) allSets();
      },
      onDelete: allSets,
    });
  }

  private ownerOf(obj: KubeObject): DaemonSet | undefined {
    return resolveControllerRef(obj.metadata.namespace, controllerRefOf(obj), DAEMON_SETS, this.cache.sets);
  }

  private enqueueFor(pod: Pod): void {
    const ds = this.ownerOf(pod);
    if (ds) {
      this.queue.add(objectKey(ds));
      return;
    }
    if (controllerRefOf(pod)) return;
    for (const set of controllersSelecting(this.cache.sets, pod)) this.queue.add(objectKey(set));
  }

  /** upstream syncDaemonSet. */
  async sync(key: string): Promise<void> {
    const cached = this.cache.sets.get(key);
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const ds = structuredClone(cached);
    const hash = computeHash(ds.spec.template, ds.status?.collisionCount);
    const nodes = this.cache.nodes.list();
    const pods = await claimObjects(this.cache.pods.listInNamespace(ds.metadata.namespace ?? ''), {
      owner: ds,
      ownerType: DAEMON_SETS,
      selector: labelSelectorFromObject(ds.spec.selector),
      client: this.api.pods,
      canAdopt: recheckOwner(this.api.sets, ds),
    });
    const byNode = podsByNode(pods);
    let observed = false;
    if (!ds.metadata.deletionTimestamp) {
      await this.syncHistory(ds, hash, pods);
      if (this.expectations.satisfied(key)) {
        observed = true;
        const plan = planDaemonPods(ds, nodes, byNode);
        const victims = [...plan.delete];
        if (this.expectations.satisfied(key) && (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
          for (const p of planRollingUpdate(ds, nodes, byNode, hash, Date.now())) if (!victims.includes(p)) victims.push(p);
        }
        await this.syncNodes(ds, plan.create, victims, hash);
      }
    }
    const counts = daemonSetCounts(ds, nodes, byNode, hash, Date.now());
    const status = { ...(ds.status ?? {}), ...counts };
    if (observed) status.observedGeneration = ds.metadata.generation;
    if (canonicalJson(status) !== canonicalJson(ds.status ?? {})) await this.api.sets.updateStatus({ ...ds, status });
    const minReady = ds.spec.minReadySeconds ?? 0;
    if (minReady > 0 && counts.numberReady !== counts.numberAvailable) this.queue.addAfter(key, minReady * 1000);
  }

  /** upstream syncNodes: deletes, then creates in slow-start batches, with expectations. */
  private async syncNodes(ds: DaemonSet, create: string[], remove: Pod[], hash: string): Promise<void> {
    const key = objectKey(ds);
    const toCreate = create.slice(0, BURST_REPLICAS);
    const toDelete = remove.slice(0, BURST_REPLICAS);
    this.expectations.expectDeletionsOf(key, toDelete.map((p) => objectKey(p)), toCreate.length);
    const errors: Error[] = [];
    const ref = newControllerRef(ds, DAEMON_SETS);
    const { successes, error } = await slowStartBatch(toCreate.length, SLOW_START_INITIAL_BATCH_SIZE, (i) => this.podControl.create(ds, daemonPodFor(ds, toCreate[i], hash, ref)));
    for (let i = successes; i < toCreate.length; i++) this.expectations.creationObserved(key);
    if (error) errors.push(error);
    await this.podControl.deleteAll(ds, toDelete, this.expectations, key).catch((err: Error) => errors.push(err));
    if (errors.length) throw errors[0];
  }

  /**
   * upstream constructHistory + cleanupHistory: the revision `<ds>-<hash>` exists and is the
   * newest; revisions no pod uses beyond revisionHistoryLimit are deleted.
   */
  private async syncHistory(ds: DaemonSet, hash: string, pods: Pod[]): Promise<void> {
    const owned = this.cache.revisions.byIndex(CONTROLLER_UID_INDEX, ds.metadata.uid ?? '').sort(byRevisionNumber);
    const name = `${ds.metadata.name}-${hash}`;
    const next = nextRevisionNumber(owned);
    const current = owned.find((r) => r.metadata.name === name);
    if (!current) {
      const revision: ControllerRevision = {
        apiVersion: CONTROLLER_REVISIONS.apiVersion,
        kind: CONTROLLER_REVISIONS.kind,
        metadata: {
          name,
          namespace: ds.metadata.namespace,
          labels: { ...(ds.spec.template.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
          ownerReferences: [newControllerRef(ds, DAEMON_SETS)],
        },
        data: templatePatch(ds.spec.template),
        revision: next,
      };
      await this.api.revisions.create(revision).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    } else if (owned[owned.length - 1] !== current) {
      await this.api.revisions.update({ ...structuredClone(current), revision: next });
    }
    const live = new Set([hash, ...pods.map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '')]);
    const historic = owned.filter((r) => !live.has(r.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
    const excess = historic.length - (ds.spec.revisionHistoryLimit ?? 10);
    for (const r of historic.slice(0, Math.max(0, excess))) {
      await this.api.revisions.inNamespace(r.metadata.namespace ?? '').delete(r.metadata.name ?? '').catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }
}

/** Daemon pods grouped by the node they are (or will be) on. */
function podsByNode(pods: Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const pod of pods) {
    const node = targetNodeName(pod);
    if (!node) continue;
    out.set(node, [...(out.get(node) ?? []), pod]);
  }
  return out;
}
