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
import type { Controller, ControllerContext } from '../../controller';

/**
 * The skeleton every cluster controller shares (upstream's `Run`): informers are obtained and
 * handlers registered in the constructor; handlers only enqueue string keys. `run()` waits
 * for the caches of every informer obtained through {@link informer}, then runs
 * `options.workers` workers calling `sync(key)` plus any {@link loops}, and returns once the
 * signal aborted and all of them stopped. A sync that throws is retried with the queue's
 * per-key exponential backoff; one that returns is forgotten.
 */
export abstract class QueueController implements Controller {
  protected readonly queue = new RateLimitingQueue<string>();
  protected readonly logger: Logger;
  private readonly waitFor: SharedInformer<KubeObject>[] = [];
  private recorderInstance?: EventRecorder;

  constructor(
    readonly name: string,
    protected readonly ctx: ControllerContext,
  ) {
    this.logger = ctx.logger.with({ controller: name });
  }

  /** The shared informer of `gvr`; `run()` waits for its cache before syncing. */
  protected informer<T extends KubeObject>(gvr: GroupVersionResource, sel: InformerSelection = {}): SharedInformer<T> {
    const inf = this.ctx.informers.informerFor<T>(gvr, sel);
    this.waitFor.push(inf as unknown as SharedInformer<KubeObject>);
    return inf;
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
    this.recorderInstance ??= this.ctx.recorder(`orch.io/${this.name}-controller`);
    return this.recorderInstance;
  }

  /** Reconciles one key; level-triggered and idempotent. Throw to retry with backoff. */
  protected abstract sync(key: string): Promise<void>;

  /** Background loops (periodic passes, second queues) run beside the workers. */
  protected loops(_signal: AbortSignal): Promise<void>[] {
    return [];
  }

  async run(signal: AbortSignal): Promise<void> {
    const synced = await Promise.all(this.waitFor.map((inf) => inf.waitForSync(signal)));
    if (!synced.every(Boolean)) {
      this.queue.shutDown();
      return;
    }
    this.logger.info('caches synced, starting workers');
    try {
      await Promise.all([runWorkers(this.queue, this.ctx.options.workers, (key) => this.sync(key), { signal, logger: this.logger }), ...this.loops(signal)]);
    } finally {
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
