import { formatTime } from '@orch/apimachinery';
import { objectKey } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { ignoreNotFound, periodically, QueueController } from '../../framework/queue-controller';
import { NODES, PODS } from '../../framework/resources';
import type { Pod, PodCondition } from '../../framework/api';
import { failedStatus, missingNodes, outOfServicePodsToDelete, terminatedPodsToDelete, unscheduledTerminatingPods } from './gc';

export interface PodGcTimings {
  /** Time between passes (upstream gcCheckPeriod, 20 s). */
  periodMs: number;
  /** How long a node must be missing before its pods are orphans (upstream quarantineTime, 40 s). */
  quarantineMs: number;
}

const DEFAULT_TIMINGS: PodGcTimings = { periodMs: 20_000, quarantineMs: 40_000 };

/**
 * Pod garbage collector (upstream pod-garbage-collector). Every pass deletes, with grace 0:
 * terminated pods beyond `--terminated-pod-gc-threshold` (evicted and oldest first);
 * terminating pods on not-Ready nodes tainted out-of-service; pods bound to a node that has
 * been missing for the quarantine time and is confirmed gone by the gateway (marked Failed
 * with DisruptionTarget `DeletionByPodGC` first); terminating pods that were never scheduled.
 */
export class PodGcController extends QueueController {
  private readonly cache = this.informersOf({ pods: PODS, nodes: NODES });
  private readonly api = this.clientsOf({ pods: PODS, nodes: NODES });
  /** Nodes pods are bound to but not in the cache, with the time first noticed. */
  private readonly missingSince = new Map<string, number>();

  constructor(
    ctx: ControllerContext,
    private readonly timings: PodGcTimings = DEFAULT_TIMINGS,
  ) {
    super('podgc', ctx, { workers: 0 });
  }

  /** No keys: pod GC works in periodic passes over the caches (upstream gcCheckPeriod). */
  protected async sync(): Promise<void> {}

  protected override loops(signal: AbortSignal): Promise<void>[] {
    return [periodically(this.timings.periodMs, signal, this.logger, 'pod gc pass', () => this.gc())];
  }

  /** One pass (upstream PodGCController.gc). */
  async gc(): Promise<void> {
    const pods = this.cache.pods.list();
    for (const pod of terminatedPodsToDelete(pods, this.ctx.options.terminatedPodGcThreshold)) await this.deletePod(pod, 'terminated pods above threshold');
    for (const pod of outOfServicePodsToDelete(pods, (n) => this.cache.nodes.get(n))) await this.deletePod(pod, 'terminating on an out-of-service node');
    const gone = await this.deletedNodes(pods);
    for (const pod of pods) {
      if (!pod.spec?.nodeName || !gone.has(pod.spec.nodeName)) continue;
      await this.deletePod(pod, 'node no longer exists', {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
        lastTransitionTime: formatTime(Date.now()),
      });
    }
    for (const pod of unscheduledTerminatingPods(pods)) await this.deletePod(pod, 'unscheduled and terminating');
  }

  /** Nodes missing for the quarantine time and confirmed absent (404) by the gateway. */
  private async deletedNodes(pods: readonly Pod[]): Promise<Set<string>> {
    const now = Date.now();
    const missing = missingNodes(pods, (n) => this.cache.nodes.get(n) !== undefined);
    for (const n of [...this.missingSince.keys()]) if (!missing.has(n)) this.missingSince.delete(n);
    const gone = new Set<string>();
    for (const n of missing) {
      const since = this.missingSince.get(n) ?? now;
      this.missingSince.set(n, since);
      if (now - since < this.timings.quarantineMs) continue;
      if ((await ignoreNotFound(this.api.nodes.get(n))) === undefined) gone.add(n);
    }
    return gone;
  }

  /** upstream markFailedAndDeletePodWithCondition; failures are logged, the pass goes on. */
  private async deletePod(pod: Pod, why: string, condition?: PodCondition): Promise<void> {
    const client = this.api.pods.inNamespace(pod.metadata.namespace ?? '');
    try {
      const status = failedStatus(pod, condition);
      if (status && !(await ignoreNotFound(client.updateStatus({ ...structuredClone(pod), status })))) return;
      this.logger.info('deleting pod', { pod: objectKey(pod), reason: why });
      await ignoreNotFound(client.delete(pod.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }));
    } catch (err) {
      this.logger.warn('pod gc could not delete pod', { pod: objectKey(pod), error: (err as Error).message });
    }
  }
}

export const podGcController: ControllerDescriptor = { name: 'podgc', serviceAccount: 'pod-garbage-collector', create: (ctx) => new PodGcController(ctx) };
