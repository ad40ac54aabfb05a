import type { KubeObject } from '@orch/apimachinery';
import {
  RateLimitingQueue,
  enqueueOnEvents,
  isNotFound,
  runWorkers,
  sleep,
  type EventRecorder,
  type GroupVersionResource,
  type InformerSelection,
  type ResourceClient,
  type SharedInformer,
} from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { Controller, ControllerContext } from './controller';
import { waitForInformers, withControllerIndex } from './informers';
import { registerQueueMetrics } from './metrics';
import type { ControllerResource, ObjectOf } from './resources';

/** An entry of {@link QueueController.informersOf}: a resource, or one with its informer's selection and controller index. */
export type InformerSpec = ControllerResource<any> | SelectedInformer<ControllerResource<any>>;
interface SelectedInformer<R> {
  source: R;
  selection?: InformerSelection;
  /** Add CONTROLLER_UID_INDEX (objects by their controller's uid). */
  byController?: boolean;
}
type SpecObject<S> = S extends SelectedInformer<infer R> ? ObjectOf<R> : ObjectOf<S>;

/** `source`'s informer indexed by its objects' controller (CONTROLLER_UID_INDEX): pods and revisions their owners look up. */
export function byController<R extends ControllerResource<any>>(source: R): SelectedInformer<R> {
  return { source, byController: true };
}

/** `source`'s informer of the objects `selection` picks (labels, fields). */
export function selected<R extends ControllerResource<any>>(source: R, selection: InformerSelection): SelectedInformer<R> {
  return { source, selection };
}

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

  /**
   * The shared informers of `specs` by name, each holding its resource's type; `run()` waits
   * for their caches. Declare them as a field: `private readonly cache = this.informersOf({ sets:
   * REPLICA_SETS, pods: byController(PODS) })`.
   */
  protected informersOf<S extends Record<string, InformerSpec>>(specs: S): { readonly [K in keyof S]: SharedInformer<SpecObject<S[K]>> } {
    const out: Record<string, SharedInformer<KubeObject>> = {};
    for (const [name, spec] of Object.entries(specs)) {
      const { source, selection, byController }: SelectedInformer<ControllerResource<any>> = 'source' in spec ? spec : { source: spec };
      const inf = this.informer(source, selection);
      out[name] = byController ? withControllerIndex(inf) : inf;
    }
    return out as unknown as { readonly [K in keyof S]: SharedInformer<SpecObject<S[K]>> };
  }

  /** Clients of `resources` by name, each typed by its resource (`private readonly api = this.clientsOf({ pods: PODS })`). */
  protected clientsOf<S extends Record<string, ControllerResource<any>>>(resources: S): { readonly [K in keyof S]: ResourceClient<ObjectOf<S[K]>> } {
    const out: Record<string, ResourceClient> = {};
    for (const [name, resource] of Object.entries(resources)) out[name] = this.ctx.client.resource(resource);
    return out as unknown as { readonly [K in keyof S]: ResourceClient<ObjectOf<S[K]>> };
  }

  /** Informers (obtained otherwise) whose caches `run()` waits for before syncing. */
  protected waitFor(...informers: Pick<SharedInformer<KubeObject>, 'waitForSync'>[]): void {
    this.synced.push(...informers);
  }

  /** Registers add/update/delete handlers that enqueue `keyOf(obj)` (skipped when undefined). */
  protected enqueueOn<T extends KubeObject>(inf: SharedInformer<T>, keyOf: (obj: T) => string | undefined): void {
    enqueueOnEvents(inf, this.queue, keyOf);
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
