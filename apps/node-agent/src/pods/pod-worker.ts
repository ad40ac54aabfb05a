import { isConflict, isNotFound, ItemExponentialFailureRateLimiter, RateLimitingQueue, runWorkers, unwrapTombstone, type ResourceClient, type RestClient, type SharedInformer } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { Counter } from 'prom-client';
import { DEFAULT_TERMINATION_GRACE_SECONDS, PODS, type Pod, type PodCondition, type PodStatus } from '../api/types';
import { isTerminal, podKey, type Runtime } from '../runtime/runtime';
import { OWNED_CONDITIONS, computePodStatus } from './pod-status';

/**
 * The keys (`namespace/name`) of pods waiting for a sync: added by the informer's handlers, the
 * periodic resync and the runtime's own changes (a process exited, a probe result); taken by
 * the pod workers. Failed syncs retry after 100 ms, doubling up to 30 s.
 */
export class PodQueue extends RateLimitingQueue<string> {
  constructor() {
    super(new ItemExponentialFailureRateLimiter<string>(100, 30_000));
  }
}

export interface PodWorkerOptions {
  client: RestClient;
  queue: PodQueue;
  runtime: Runtime;
  /** Pods bound to the agent's node(s) (field selector on spec.nodeName). */
  informer: SharedInformer<Pod>;
  /** Whether a node name is one this agent serves (the simulated runtime serves many). */
  isMine(nodeName: string | undefined): boolean;
  workers: number;
  /** Every pod is synced at least this often. */
  resyncMs: number;
  logger: Logger;
  /** Counts status writes (a metric). */
  statusWrites?: Counter;
  /** Called once the informer first synced, with the pods bound here, before any sync. */
  onSynced?(pods: Pod[]): Promise<void>;
}

/** Grace period for pods removed from the API without passing through graceful deletion. */
const FORCED_GRACE_SECONDS = 2;

/**
 * Drives the runtime from the API (upstream kubelet pod workers + status manager): informer
 * handlers enqueue pod keys; `sync(key)` is level-triggered and idempotent:
 * - a pod being deleted is stopped gracefully (grace period, then SIGKILL), its final status
 *   written, and then deleted with gracePeriodSeconds=0 (uid precondition);
 * - a pod gone from the API (or replaced by one with another uid) is stopped and forgotten;
 * - a pod in a terminal phase is left alone;
 * - any other pod is synced by the runtime and its status written through `pods/status`
 *   (JSON merge patch) when it differs from the last status written.
 * The runtime's own changes come back through the shared {@link PodQueue}.
 */
export class PodWorker {
  private readonly queue: PodQueue;
  private readonly pods: ResourceClient<Pod>;
  /** Runtime pods by key (a key may have an old uid still stopping). */
  private readonly uidsByKey = new Map<string, Set<string>>();
  /** Last status written per uid. */
  private readonly written = new Map<string, { json: string; status: PodStatus }>();

  constructor(private readonly opts: PodWorkerOptions) {
    this.pods = opts.client.resource<Pod>(PODS);
    this.queue = opts.queue;
  }

  /** Queues a pod key for a sync. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Runs handlers, periodic resync and workers until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const inf = this.opts.informer;
    const mine = (p: Pod) => this.opts.isMine(p.spec.nodeName);
    const remove = inf.addEventHandler({
      onAdd: (p) => mine(p) && this.enqueue(podKey(p)),
      onUpdate: (_o, p) => mine(p) && this.enqueue(podKey(p)),
      onDelete: (p) => this.enqueue(podKey(unwrapTombstone(p))),
    });
    try {
      if (!(await inf.waitForSync(signal))) return;
      await this.opts.onSynced?.(inf.list().filter(mine));
      const resync = setInterval(() => {
        for (const p of inf.list()) if (mine(p)) this.enqueue(podKey(p));
      }, this.opts.resyncMs);
      resync.unref();
      try {
        await runWorkers(this.queue, this.opts.workers, (key) => this.sync(key), { signal, logger: { info: (m) => this.opts.logger.info(m), warn: (m) => this.opts.logger.warn(m), error: (m) => this.opts.logger.error(m) } });
      } finally {
        clearInterval(resync);
      }
    } finally {
      remove();
    }
  }

  /** One level-triggered sync of the pod with this key. */
  async sync(key: string): Promise<void> {
    const pod = this.opts.informer.get(key);
    const live = pod && this.opts.isMine(pod.spec.nodeName) ? pod : undefined;
    for (const uid of [...(this.uidsByKey.get(key) ?? [])]) {
      if (uid !== live?.metadata.uid) await this.forget(key, uid);
    }
    if (!live) return;
    const uid = live.metadata.uid ?? '';
    if (live.metadata.deletionTimestamp) {
      this.track(key, uid); // forgotten (its directory removed) once it is gone from the API
      await this.terminate(live, uid);
      return;
    }
    if (isTerminal(live.status?.phase) && !this.opts.runtime.podState(uid)) return;
    this.track(key, uid);
    const res = await this.opts.runtime.syncPod(live);
    await this.writeStatus(live, false);
    if (res.requeueAfterMs !== undefined) this.queue.addAfter(key, Math.max(50, res.requeueAfterMs));
  }

  private track(key: string, uid: string): void {
    let set = this.uidsByKey.get(key);
    if (!set) this.uidsByKey.set(key, (set = new Set()));
    set.add(uid);
  }

  /** Stops and forgets a runtime pod no longer in the API under this key. */
  private async forget(key: string, uid: string): Promise<void> {
    if (!(await this.opts.runtime.killPod(uid, FORCED_GRACE_SECONDS))) return; // its exit requeues the key
    await this.opts.runtime.removePod(uid);
    this.written.delete(uid);
    const set = this.uidsByKey.get(key);
    set?.delete(uid);
    if (set?.size === 0) this.uidsByKey.delete(key);
  }

  /** Graceful deletion: stop, report the final status, then delete the pod for good. */
  private async terminate(pod: Pod, uid: string): Promise<void> {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS;
    const stopped = await this.opts.runtime.killPod(uid, grace);
    if (!stopped) {
      await this.writeStatus(pod, true);
      return; // the containers' exits requeue the key
    }
    await this.writeStatus(pod, true);
    try {
      await this.pods.inNamespace(pod.metadata.namespace ?? '').delete(pod.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
    this.opts.logger.info('pod stopped and deleted', { pod: podKey(pod) });
  }

  /** Writes the pod's status when it differs from what was last written. */
  private async writeStatus(pod: Pod, deleting: boolean): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const state = this.opts.runtime.podState(uid);
    if (!state) return;
    const last = this.written.get(uid);
    const known = pod.status?.conditions ?? [];
    const owned = (last?.status.conditions ?? known).filter((c: PodCondition) => OWNED_CONDITIONS.includes(c.type));
    const previous = [...known.filter((c) => !OWNED_CONDITIONS.includes(c.type)), ...owned];
    const status = computePodStatus({ ...pod, status: { ...pod.status, conditions: previous } }, state, new Date(), deleting);
    const json = JSON.stringify(status);
    if (last?.json === json) return;
    try {
      await this.pods.inNamespace(pod.metadata.namespace ?? '').patch(pod.metadata.name ?? '', 'merge', { metadata: { uid }, status }, { subresource: 'status' });
    } catch (err) {
      // Gone, or replaced by a pod of the same name (the uid precondition failed): the informer brings the news.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
    this.opts.statusWrites?.inc();
    this.written.set(uid, { json, status });
  }
}
