import { parseApiVersion } from '@orch/api';
import { formatTime, labelSelectorFromObject, type OwnerReference } from '@orch/apimachinery';
import { isConflict, objectKey, visitOnEvents } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController } from '../../framework/queue-controller';
import { controllerRefOf, resolveControllerRef } from '../../framework/controller-ref';
import { DEPLOYMENTS, POD_DISRUPTION_BUDGETS, PODS, REPLICA_SETS, REPLICATION_CONTROLLERS, STATEFUL_SETS } from '../../framework/resources';
import type { Pod, PodDisruptionBudget } from '../../framework/api';
import { canonicalJson } from '../workload-common/hash';
import { budgetStatus, countHealthy, expectedPodCount, failSafeStatus, pendingDisruptions } from './budget';

/** A pod's controller as far as budgets care: its uid and desired replicas. */
interface ControllerScale {
  uid: string;
  replicas: number;
}

/**
 * The disruption controller (upstream pkg/controller/disruption): keeps each
 * PodDisruptionBudget's status current (currentHealthy, desiredHealthy, expectedPods,
 * disruptionsAllowed, disruptedPods, observedGeneration and the DisruptionAllowed
 * condition). The eviction subresource in the gateway reads that status to refuse
 * evictions (429) and records its evictions in disruptedPods, which expire here after
 * two minutes if the pod was not deleted.
 */
export class DisruptionController extends QueueController {
  private readonly cache = this.informersOf({ budgets: POD_DISRUPTION_BUDGETS, pods: PODS, replicaSets: REPLICA_SETS, deployments: DEPLOYMENTS, statefulSets: STATEFUL_SETS, replicationControllers: REPLICATION_CONTROLLERS });
  private readonly api = this.clientsOf({ budgets: POD_DISRUPTION_BUDGETS });

  constructor(ctx: ControllerContext) {
    super('disruption', ctx, { reportingController: 'disruption-controller' });
    this.enqueueOn(this.cache.budgets, objectKey);
    // A pod whose labels changed may have left budgets: those are enqueued too.
    visitOnEvents(this.cache.pods, (pod) => this.enqueueBudgetsOf(pod), (old, cur) => JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {}));
  }

  /** upstream getPdbForPod: budgets in the pod's namespace whose selector matches it. */
  private enqueueBudgetsOf(pod: Pod): void {
    for (const pdb of this.cache.budgets.listInNamespace(pod.metadata.namespace ?? '')) {
      try {
        if (labelSelectorFromObject(pdb.spec.selector).matches(pod.metadata.labels)) this.queue.add(objectKey(pdb));
      } catch {
        // An invalid selector matches nothing.
      }
    }
  }

  async sync(key: string): Promise<void> {
    const pdb = this.cache.budgets.get(key);
    if (!pdb) return;
    const now = Date.now();
    const nowIso = formatTime(now);
    try {
      await this.trySync(pdb, now, nowIso);
    } catch (err) {
      if (isConflict(err)) throw err;
      this.ctx.logger.warn('disruption: failed to sync budget, disallowing disruptions', { pdb: key, err: (err as Error).message });
      await this.writeStatus(pdb, failSafeStatus(pdb, (err as Error).message, nowIso));
      throw err;
    }
  }

  /** upstream trySync. */
  private async trySync(pdb: PodDisruptionBudget, now: number, nowIso: string): Promise<void> {
    const selector = labelSelectorFromObject(pdb.spec.selector);
    const pods = this.cache.pods.listInNamespace(pdb.metadata.namespace ?? '').filter((p) => selector.matches(p.metadata.labels));
    if (!pods.length) this.recorder.event(pdb, 'Normal', 'NoPods', 'Sync', 'No matching pods found');
    const unmanaged: string[] = [];
    const { expected, desiredHealthy } = expectedPodCount(pdb, pods.length, () => this.controllerScale(pdb, pods, unmanaged));
    if (unmanaged.length) {
      this.recorder.event(
        pdb,
        'Warning',
        'UnmanagedPods',
        'Sync',
        `Pods selected by this PodDisruptionBudget (selector: ${selector.toString()}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const { disrupted, recheckAtMs } = pendingDisruptions(pdb, pods, now);
    const status = budgetStatus(pdb, countHealthy(pods, disrupted), desiredHealthy, expected, disrupted, nowIso);
    await this.writeStatus(pdb, status);
    if (recheckAtMs !== undefined) this.queue.addAfter(objectKey(pdb), recheckAtMs - now);
  }

  private async writeStatus(pdb: PodDisruptionBudget, status: NonNullable<PodDisruptionBudget['status']>): Promise<void> {
    if (canonicalJson(status) === canonicalJson(pdb.status ?? {})) return;
    await this.api.budgets.updateStatus({ ...pdb, status });
  }

  /**
   * upstream getExpectedScale: the sum of the desired replicas of the selected pods'
   * controllers, each counted once (pods of a Deployment's ReplicaSets count the
   * Deployment). Pods without a controller are `unmanaged`; a controller that cannot be
   * found is an error.
   */
  private controllerScale(pdb: PodDisruptionBudget, pods: Pod[], unmanaged: string[]): number {
    const scales = new Map<string, number>();
    const seenRefs = new Set<string>();
    for (const pod of pods) {
      const ref = controllerRefOf(pod);
      if (!ref) {
        unmanaged.push(pod.metadata.name ?? '');
        continue;
      }
      if (seenRefs.has(ref.uid)) continue;
      seenRefs.add(ref.uid);
      const found = this.findController(pdb.metadata.namespace ?? '', ref);
      if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
      scales.set(found.uid, found.replicas);
    }
    return [...scales.values()].reduce((a, b) => a + b, 0);
  }

  /** upstream finders: ReplicaSet (or its Deployment), ReplicationController, StatefulSet. */
  private findController(namespace: string, ref: OwnerReference): ControllerScale | undefined {
    const rs = resolveControllerRef(namespace, ref, REPLICA_SETS, this.cache.replicaSets);
    if (rs) {
      const d = resolveControllerRef(namespace, controllerRefOf(rs), DEPLOYMENTS, this.cache.deployments);
      return d ? { uid: d.metadata.uid ?? '', replicas: d.spec.replicas ?? 1 } : { uid: rs.metadata.uid ?? '', replicas: rs.spec.replicas ?? 1 };
    }
    const group = parseApiVersion(ref.apiVersion).group;
    const found =
      resolveControllerRef(namespace, ref, STATEFUL_SETS, this.cache.statefulSets) ??
      (group === '' ? resolveControllerRef(namespace, ref, REPLICATION_CONTROLLERS, this.cache.replicationControllers) : undefined);
    return found ? { uid: found.metadata.uid ?? '', replicas: found.spec.replicas ?? 1 } : undefined;
  }
}
