import type { KubeObject } from '@orch/apimachinery';
import {
  RateLimitingQueue,
  isNotFound,
  runWorkers,
  sleep,
  unwrapTombstone,
  type DeletedFinalStateUnknown,
  type EventRecorder,
  type GroupVersionResource,
  type InformerSelection,
  type SharedInformer,
} from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { Controller, ControllerContext } from './controller';
import { waitForInformers } from './informers';
import { registerQueueMetrics } from './metrics';

/** How a controller reports itself beyond its `--controllers` name. */
export interface QueueControllerOptions {
  /** `reportingController` of its events (default `orch.io/<name>-controller`). */
  reportingController?: string;
  /** Workers calling `sync` (default `ctx.options.workers`; 0 for a controller that only runs {@link QueueController.loops}). */
  workers?: number;
  /**
   * Start anyway, with a warning, when the caches have not synced after this long (the garbage
   * collector works with a partial graph rather than none). Default: wait until they synced.
   */
  cacheSyncTimeoutMs?: number;
}

/**
 * The skeleton every controller shares (upstream's `Run`): informers are obtained and
 * handlers registered in the constructor; handlers only enqueue string keys. `run()` waits
 * for the caches of every informer obtained through {@link informer} (or passed to
 * {@link waitFor}), then runs the workers calling `sync(key)` plus any {@link loops}, and
 * returns once the signal aborted and all of them stopped; the event recorder is flushed and
 * stopped then. A sync that throws is retried with the queue's per-key exponential backoff;
 * one that returns is forgotten. The queue is exported as `workqueue_*{name}` metrics when the
 * context has a registry.
 */
export abstract class QueueController implements Controller {
  protected readonly queue = new RateLimitingQueue<string>();
  protected readonly logger: Logger;
  private readonly synced: Pick<SharedInformer<KubeObject>, 'waitForSync'>[] = [];
  private recorderInstance?: EventRecorder;

  constructor(
    readonly name: string,
    protected readonly ctx: ControllerContext,
    private readonly options: QueueControllerOptions = {},
  ) {
    this.logger = ctx.logger.with({ controller: name });
    if (ctx.metrics) registerQueueMetrics(ctx.metrics, name, this.queue.metrics);
  }

  /** The shared informer of `gvr`; `run()` waits for its cache before syncing. */
  protected informer<T extends KubeObject>(gvr: GroupVersionResource, sel: InformerSelection = {}): SharedInformer<T> {
    const inf = this.ctx.informers.informerFor<T>(gvr, sel);
    this.waitFor(inf);
    return inf;
  }

  /** Informers (obtained otherwise) whose caches `run()` waits for before syncing. */
  protected waitFor(...informers: Pick<SharedInformer<KubeObject>, 'waitForSync'>[]): void {
    this.synced.push(...informers);
  }

  /** Registers add/update/delete handlers that enqueue `keyOf(obj)` (skipped when undefined). */
  protected enqueueOn<T extends KubeObject>(inf: SharedInformer<T>, keyOf: (obj: T) => string | undefined): void {
    const add = (obj: T) => {
      const key = keyOf(obj);
      if (key !== undefined) this.queue.add(key);
    };
    inf.addEventHandler({
      onAdd: add,
      onUpdate: (oldObj, newObj) => {
        add(oldObj);
        add(newObj);
      },
      onDelete: (obj: T | DeletedFinalStateUnknown<T>) => add(unwrapTombstone(obj)),
    });
  }

  /** The controller's event recorder (created on first use, stopped when run() ends). */
  protected get recorder(): EventRecorder {
    this.recorderInstance ??= this.ctx.recorder(this.options.reportingController ?? `orch.io/${this.name}-controller`);
    return this.recorderInstance;
  }

  /** Reconciles one key; level-triggered and idempotent. Throw to retry with backoff. */
  protected abstract sync(key: string): Promise<void>;

  /** Background loops (periodic passes, second queues) run beside the workers. */
  protected loops(_signal: AbortSignal): Promise<void>[] {
    return [];
  }

  async run(signal: AbortSignal): Promise<void> {
    try {
      const timeout = this.options.cacheSyncTimeoutMs;
      const synced = await waitForInformers(this.synced, timeout === undefined ? signal : AbortSignal.any([signal, AbortSignal.timeout(timeout)]));
      if (signal.aborted || (!synced && timeout === undefined)) return;
      if (synced) this.logger.info('caches synced, starting workers');
      else this.logger.warn(`caches not synced after ${timeout} ms; starting anyway`);
      const workers = this.options.workers ?? this.ctx.options.workers;
      await Promise.all([runWorkers(this.queue, workers, (key) => this.sync(key), { signal, logger: this.logger }), ...this.loops(signal)]);
    } finally {
      this.queue.shutDown();
      await this.recorderInstance?.stop();
    }
  }
}

/**
 * Calls `fn` now and then every `periodMs` until `signal` aborts (upstream wait.Until).
 * A failing pass is logged; the next one runs on schedule.
 */
export async function periodically(periodMs: number, signal: AbortSignal, logger: Logger, what: string, fn: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    try {
      await fn();
    } catch (err) {
      logger.warn(`${what} failed: ${(err as Error).message}`);
    }
    if (!(await sleep(periodMs, signal))) return;
  }
}

/** Resolves to undefined instead of rejecting when the object is already gone (404). */
export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
