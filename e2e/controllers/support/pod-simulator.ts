import { formatTime, type KubeObject } from '@orch/apimachinery';
import { isNotFound, type RestClient } from '@orch/client';

interface SimPod extends KubeObject {
  spec: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

export interface PodSimulatorOptions {
  client: RestClient;
  namespace: string;
  /** Poll interval (default 100 ms). */
  intervalMs?: number;
  /** Whether a pending pod may start running and become Ready now (default: always). */
  ready?: (pod: SimPod) => boolean;
  /** Phase a running pod finishes with now, if any (job pods: `Succeeded`). */
  finish?: (pod: SimPod) => 'Succeeded' | 'Failed' | undefined;
}

const PODS = { group: '', version: 'v1', resource: 'pods' };

/**
 * Stands in for the node agent in controller e2e tests: pods start Running and Ready
 * (status written through `pods/status` with a merge patch), optionally finish, and pods
 * being deleted from a node are removed (grace period 0) as a kubelet would once their
 * containers stopped. Pods without a node are deleted by the gateway at once. Replace with
 * the real node agent when it exists.
 */
export class PodSimulator {
  private readonly stopped = new AbortController();
  private loop?: Promise<void>;
  /** Pods made ready, by name. */
  readonly started = new Set<string>();

  constructor(private readonly opts: PodSimulatorOptions) {}

  start(): this {
    this.loop = this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const pods = this.opts.client.resource<SimPod>(PODS, this.opts.namespace);
    while (!this.stopped.signal.aborted) {
      try {
        const list = await pods.list({}, this.stopped.signal);
        for (const pod of list.items) await this.step(pod);
      } catch (err) {
        if (this.stopped.signal.aborted) break;
        if (!isNotFound(err)) console.warn(`pod simulator: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, this.opts.intervalMs ?? 100));
    }
  }

  private async step(pod: SimPod): Promise<void> {
    const pods = this.opts.client.resource<SimPod>(PODS, this.opts.namespace);
    const name = pod.metadata.name ?? '';
    const phase = pod.status?.phase;
    try {
      if (pod.metadata.deletionTimestamp) {
        if (pod.spec.nodeName) await pods.delete(name, { gracePeriodSeconds: 0 });
        return;
      }
      if (phase === 'Pending' || phase === undefined) {
        if (!(this.opts.ready?.(pod) ?? true)) return;
        const now = formatTime(Date.now());
        await pods.patch(name, 'merge', { status: { phase: 'Running', startTime: now, conditions: [
          { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
          { type: 'Ready', status: 'True', lastTransitionTime: now },
        ] } }, { subresource: 'status' });
        this.started.add(name);
        return;
      }
      if (phase === 'Running') {
        const end = this.opts.finish?.(pod);
        if (!end) return;
        const now = formatTime(Date.now());
        await pods.patch(name, 'merge', { status: { phase: end, conditions: [
          { type: 'ContainersReady', status: 'False', lastTransitionTime: now, reason: 'PodCompleted' },
          { type: 'Ready', status: 'False', lastTransitionTime: now, reason: 'PodCompleted' },
        ] } }, { subresource: 'status' });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
