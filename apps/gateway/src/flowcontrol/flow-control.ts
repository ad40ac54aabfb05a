import { BoundedMap, StatusError } from '@orch/apimachinery';
import type { Logger } from '@orch/server-common';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ObjectCache } from '../admission/object-cache';
import type { GenericStore } from '../registry/generic-store';
import { nowTime } from '../registry/object-meta';
import type { RequestContext } from '../registry/strategy';
import { AUTOUPDATE_ANNOTATIONS, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap';
import { classify, flowKey, orderFlowSchemas } from './classifier';
import { QueueSet, RequestRejected, type OnGone, type QueueSetConfig } from './queue-set';
import type { FlowSchema, PriorityLevelConfiguration, RequestDigest } from './types';

export interface FlowControlOptions {
  /** Seats of the whole server: --max-requests-inflight + --max-mutating-requests-inflight (upstream). */
  serverConcurrency: number;
  /** Longest wait in a queue before a 429 (upstream: a quarter of the request timeout). */
  queueWaitMs: number;
}

export interface FlowControlDeps {
  flowSchemas: ObjectCache<FlowSchema>;
  priorityLevels: ObjectCache<PriorityLevelConfiguration>;
  flowSchemaStore: () => GenericStore;
  priorityLevelStore: () => GenericStore;
  systemContext: () => RequestContext;
  metrics: Registry;
  logger: Logger;
  options: FlowControlOptions;
  /** Objects stored of a resource (all namespaces), for the cost of its lists; undefined when unknown. */
  objectCount?: (apiGroup: string, resource: string) => number | undefined;
}

/** upstream's list work estimator: a seat per 100 objects a list goes through, 1 to 10 seats. */
const OBJECTS_PER_SEAT = 100;
const MAX_LIST_SEATS = 10;
const MAX_SEATS_SHARE = 0.15;

/**
 * The most seats one request of a level may take (upstream's max seats of a priority level):
 * 15% of its seats, and no more than its seats divided by the hand size when it queues (a flow's
 * hand of queues cannot hold more than its fair part), between 1 and 10. A big list then waits
 * for a few seats, never for the whole level: the requests of other flows keep being dispatched
 * beside it.
 */
export function levelMaxSeats(seats: number, handSize: number | undefined): number {
  const byShare = Math.ceil(seats * MAX_SEATS_SHARE);
  const byHand = handSize ? Math.ceil(seats / handSize) : byShare;
  return Math.max(1, Math.min(MAX_LIST_SEATS, byShare, byHand));
}

/**
 * Seats a request takes (upstream WorkEstimator): a list one per 100 of the `stored` objects of
 * its resource (at most `limit` of them when it pages), between 1 and `maxSeats` (its level's,
 * levelMaxSeats); anything else one.
 */
export function requestSeats(d: RequestDigest, stored: number | undefined, maxSeats = MAX_LIST_SEATS): number {
  if (d.verb !== 'list' || !d.isResourceRequest || d.subresource || stored === undefined) return 1;
  const objects = d.limit && d.limit > 0 ? Math.min(d.limit, stored) : stored;
  return Math.min(maxSeats, Math.max(1, Math.ceil(objects / OBJECTS_PER_SEAT)));
}

/** What a request was classified to, and its seat (release when it is done; a no-op when none was taken). */
export interface Admitted {
  flowSchema: FlowSchema;
  priorityLevel: PriorityLevelConfiguration;
  /** False for exempt levels and long-running requests: `release` does nothing. */
  holdsSeat: boolean;
  release(): void;
}

interface Level {
  plc: PriorityLevelConfiguration;
  /** Absent for exempt levels (never limited). */
  queues?: QueueSet;
  /** The most seats one request of the level takes (levelMaxSeats). */
  maxSeats: number;
}

/** A level whose requests queue for seats (not exempt). */
type QueuedLevel = Level & { queues: QueueSet };

const NO_RELEASE = () => undefined;

/** The answer to a rejected request, made once: a rejection is the cheap path under a flood (no stack captured per request). */
const TOO_MANY_REQUESTS = StatusError.tooManyRequests('Too many requests, please try again later.', 1);

const MAX_CLASSIFIED = 4096;
const MAX_CLASSIFICATION_KEY = 1024;

/**
 * What classification reads of a request (classifier.ts: user name and groups, resource or
 * non-resource, verb, group, resource, subresource, namespace; the path of a non-resource
 * request), each part length-prefixed so that no two requests share a key; undefined when it
 * would be longer than MAX_CLASSIFICATION_KEY (classified every time).
 */
export function classificationKey(d: RequestDigest): string | undefined {
  const part = (s: string) => `${s.length}:${s}`;
  let key = `${part(d.user.username)}${d.user.groups.length}`;
  for (const g of d.user.groups) key += part(g);
  key += d.isResourceRequest ? `r${part(d.verb)}${part(d.apiGroup)}${part(d.resource)}${part(d.subresource)}${part(d.namespace)}` : `n${part(d.verb)}${part(d.path)}`;
  return key.length > MAX_CLASSIFICATION_KEY ? undefined : key;
}

/** A priority level's queuing, from its spec and the seats its shares give it. */
function queueConfig(plc: PriorityLevelConfiguration, seats: number): QueueSetConfig {
  const response = plc.spec.limited?.limitResponse;
  const q = response?.type === 'Queue' ? response.queuing : undefined;
  return { concurrency: seats, queues: q ? (q.queues ?? 64) : 0, handSize: q?.handSize ?? 8, queueLengthLimit: q?.queueLengthLimit ?? 50 };
}

/** The mandatory objects stand in for any the cluster does not have (yet). */
function withMandatory<T extends FlowSchema | PriorityLevelConfiguration>(objects: readonly T[], mandatory: readonly T[]): T[] {
  const names = new Set(objects.map((o) => o.metadata.name));
  return [...objects, ...mandatory.filter((m) => !names.has(m.metadata.name))];
}

/**
 * API Priority and Fairness of one gateway replica (upstream apiserver/pkg/util/flowcontrol):
 * classifies every request by FlowSchema to a priority level, admits it to one of the level's
 * seats (fair queuing by flow; 429 with Retry-After when its queue is full or the wait is too
 * long), and keeps the configuration: the mandatory and suggested objects are created at start,
 * the levels follow the FlowSchemas and PriorityLevelConfigurations of the watch cache (seats
 * from each level's share of the server's concurrency), FlowSchemas report Dangling.
 */
export class FlowControl {
  private ordered: FlowSchema[] = [];
  /** Dispatches not yet added to apiserver_flowcontrol_dispatched_requests_total, by FlowSchema and priority level. */
  private readonly dispatched = new Map<string, Map<string, { labels: { flow_schema: string; priority_level: string }; n: number }>>();
  /** Classifications of the current configuration by classificationKey. */
  private readonly classified = new BoundedMap<string, FlowSchema>(MAX_CLASSIFIED);
  private levels = new Map<string, Level>();
  private readonly unsubscribe: (() => void)[] = [];
  private statusTimer?: NodeJS.Timeout;
  private readonly m: {
    rejected: Counter<'flow_schema' | 'priority_level' | 'reason'>;
    dispatched: Counter<'flow_schema' | 'priority_level'>;
    wait: Histogram<'flow_schema' | 'priority_level' | 'execute'>;
    inQueue: Gauge<'priority_level'>;
    executing: Gauge<'priority_level'>;
    nominal: Gauge<'priority_level'>;
  };

  constructor(private readonly deps: FlowControlDeps) {
    const registers = [deps.metrics];
    this.m = {
      rejected: new Counter({ name: 'apiserver_flowcontrol_rejected_requests_total', help: 'Number of requests rejected by API Priority and Fairness subsystem', labelNames: ['flow_schema', 'priority_level', 'reason'], registers }),
      dispatched: new Counter({
        name: 'apiserver_flowcontrol_dispatched_requests_total',
        help: 'Number of requests executed by API Priority and Fairness subsystem',
        labelNames: ['flow_schema', 'priority_level'],
        registers,
        collect: () => this.flushDispatched(),
      }),
      wait: new Histogram({
        name: 'apiserver_flowcontrol_request_wait_duration_seconds',
        help: 'Length of time a request spent waiting in its queue',
        labelNames: ['flow_schema', 'priority_level', 'execute'],
        buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
        registers,
      }),
      inQueue: new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames: ['priority_level'], registers, collect: () => this.collectGauges() }),
      executing: new Gauge({ name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames: ['priority_level'], registers }),
      nominal: new Gauge({ name: 'apiserver_flowcontrol_nominal_limit_seats', help: 'Nominal number of execution seats configured for each priority level', labelNames: ['priority_level'], registers }),
    };
    this.rebuild();
  }

  /** Creates the bootstrap configuration (idempotent) and follows the cached objects. */
  async start(): Promise<void> {
    this.unsubscribe.push(this.deps.flowSchemas.onChange(() => this.onChange()), this.deps.priorityLevels.onChange(() => this.onChange()));
    await this.ensureBootstrap();
    this.rebuild();
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    clearTimeout(this.statusTimer);
  }

  /**
   * Classifies the request and waits for a seat of its level. Long-running requests (watches,
   * streams) are classified but never hold a seat. A request that holds no seat (exempt level,
   * long-running) is admitted at once, without a promise; one that waits for a seat gets a
   * promise, rejected with a 429 StatusError when the request is rejected.
   */
  admit(d: RequestDigest, longRunning: boolean, onGone?: OnGone): Admitted | Promise<Admitted> {
    const flowSchema = this.classify(d);
    const plName = flowSchema.spec.priorityLevelConfiguration.name;
    const level = this.levels.get(plName) ?? this.levels.get('catch-all')!;
    const labels = { flow_schema: flowSchema.metadata.name!, priority_level: level.plc.metadata.name! };
    if (!level.queues || longRunning) {
      this.countDispatched(labels);
      return { flowSchema, priorityLevel: level.plc, holdsSeat: false, release: NO_RELEASE };
    }
    // level.queues is set here: the level is a QueuedLevel.
    return this.seatOf(flowSchema, level as QueuedLevel, labels, d, onGone);
  }

  /** Waits for a seat of `level` (admit's queued path: a level with queues). */
  private async seatOf(flowSchema: FlowSchema, level: QueuedLevel, labels: { flow_schema: string; priority_level: string }, d: RequestDigest, onGone?: OnGone): Promise<Admitted> {
    try {
      const seat = await level.queues.acquire(flowKey(flowSchema, d), this.deps.options.queueWaitMs, onGone, this.seats(d, level.maxSeats));
      this.m.wait.observe({ ...labels, execute: 'true' }, seat.waitedMs / 1000);
      this.countDispatched(labels);
      return { flowSchema, priorityLevel: level.plc, holdsSeat: true, release: () => seat.release() };
    } catch (err) {
      if (!(err instanceof RequestRejected)) throw err;
      this.m.rejected.inc({ ...labels, reason: err.reason });
      this.m.wait.observe({ ...labels, execute: 'false' }, 0);
      throw TOO_MANY_REQUESTS;
    }
  }

  /**
   * The FlowSchema of a request, remembered by everything classification looks at
   * (classificationKey) until the configuration changes (rebuild empties it); at most
   * MAX_CLASSIFIED kept (emptied when full).
   */
  private classify(d: RequestDigest): FlowSchema {
    const key = classificationKey(d);
    const make = () => classify(this.ordered, d, (fs) => this.levels.has(fs.spec?.priorityLevelConfiguration?.name ?? '')) ?? MANDATORY_FLOW_SCHEMAS[1];
    return key === undefined ? make() : this.classified.get(key, make);
  }

  /** Counts a dispatched request in plain numbers; the counter gets them when it is collected (prom-client hashes the labels of every `inc`). */
  private countDispatched(labels: { flow_schema: string; priority_level: string }): void {
    let byLevel = this.dispatched.get(labels.flow_schema);
    if (!byLevel) this.dispatched.set(labels.flow_schema, (byLevel = new Map()));
    const pending = byLevel.get(labels.priority_level);
    if (pending) pending.n++;
    else byLevel.set(labels.priority_level, { labels, n: 1 });
  }

  private flushDispatched(): void {
    for (const byLevel of this.dispatched.values()) for (const p of byLevel.values()) if (p.n > 0) this.m.dispatched.inc(p.labels, p.n);
    this.dispatched.clear();
  }

  private seats(d: RequestDigest, maxSeats: number): number {
    return requestSeats(d, d.verb === 'list' ? this.deps.objectCount?.(d.apiGroup, d.resource) : undefined, maxSeats);
  }

  private collectGauges(): void {
    for (const [name, level] of this.levels) {
      this.m.inQueue.set({ priority_level: name }, level.queues?.queuedRequests ?? 0);
      this.m.executing.set({ priority_level: name }, level.queues?.executingRequests ?? 0);
      this.m.nominal.set({ priority_level: name }, level.queues?.concurrency ?? 0);
    }
  }

  private onChange(): void {
    this.rebuild();
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => void this.maintain(), 100);
    this.statusTimer.unref?.();
  }

  /** Levels and their seats from the current objects (queues kept for levels that stay). */
  private rebuild(): void {
    const plcs = withMandatory(this.deps.priorityLevels.list(), MANDATORY_PRIORITY_LEVELS);
    const shares = (p: PriorityLevelConfiguration) => (p.spec.type === 'Exempt' ? (p.spec.exempt?.nominalConcurrencyShares ?? 0) : (p.spec.limited?.nominalConcurrencyShares ?? 30));
    const total = plcs.reduce((n, p) => n + shares(p), 0) || 1;
    const next = new Map<string, Level>();
    for (const plc of plcs) {
      const name = plc.metadata.name!;
      if (plc.spec.type === 'Exempt') {
        next.set(name, { plc, maxSeats: MAX_LIST_SEATS });
        continue;
      }
      const seats = Math.max(1, Math.ceil((this.deps.options.serverConcurrency * shares(plc)) / total));
      const config = queueConfig(plc, seats);
      const queues = this.levels.get(name)?.queues;
      if (queues) queues.setConfig(config);
      next.set(name, { plc, queues: queues ?? new QueueSet(config), maxSeats: levelMaxSeats(seats, config.queues ? config.handSize : undefined) });
    }
    this.levels = next;
    this.ordered = orderFlowSchemas(withMandatory(this.deps.flowSchemas.list(), MANDATORY_FLOW_SCHEMAS));
    this.classified.clear();
  }

  /** Mandatory objects created and kept; suggested ones created when missing. Conflicts with other replicas are fine. */
  private async ensureBootstrap(): Promise<void> {
    const ensure = async (store: GenericStore, obj: FlowSchema | PriorityLevelConfiguration, mandatory: boolean) => {
      const ctx = this.deps.systemContext();
      try {
        const current = (await store.get('', obj.metadata.name!)) as FlowSchema | PriorityLevelConfiguration;
        const autoupdate = AUTOUPDATE_ANNOTATIONS.every((a) => current.metadata.annotations?.[a] !== 'false');
        if (mandatory && autoupdate && JSON.stringify(current.spec) !== JSON.stringify(obj.spec)) {
          await store.update('', obj.metadata.name!, { ...current, spec: obj.spec } as FlowSchema, ctx);
        }
      } catch (err) {
        if (!(err instanceof StatusError) || err.code !== 404) throw err;
        const created = { ...structuredClone(obj), metadata: { ...obj.metadata, annotations: { [AUTOUPDATE_ANNOTATIONS[0]]: 'true' } } };
        await store.create('', created, ctx).catch((e: unknown) => {
          if (!(e instanceof StatusError && e.code === 409)) throw e;
        });
      }
    };
    try {
      for (const p of MANDATORY_PRIORITY_LEVELS) await ensure(this.deps.priorityLevelStore(), p, true);
      for (const p of SUGGESTED_PRIORITY_LEVELS) await ensure(this.deps.priorityLevelStore(), p, false);
      for (const f of MANDATORY_FLOW_SCHEMAS) await ensure(this.deps.flowSchemaStore(), f, true);
      for (const f of SUGGESTED_FLOW_SCHEMAS) await ensure(this.deps.flowSchemaStore(), f, false);
    } catch (err) {
      this.deps.logger.warn(`priority and fairness: could not write the bootstrap configuration: ${(err as Error).message}`);
    }
  }

  /** Mandatory objects deleted by someone come back; every FlowSchema's Dangling condition is kept true. */
  private async maintain(): Promise<void> {
    const names = new Set([...this.deps.priorityLevels.list().map((p) => p.metadata.name), ...this.deps.flowSchemas.list().map((f) => f.metadata.name)]);
    if ([...MANDATORY_PRIORITY_LEVELS, ...MANDATORY_FLOW_SCHEMAS].some((o) => !names.has(o.metadata.name))) await this.ensureBootstrap();
    const levels = new Set(this.deps.priorityLevels.list().map((p) => p.metadata.name));
    for (const fs of this.deps.flowSchemas.list()) {
      const pl = fs.spec.priorityLevelConfiguration.name;
      const dangling = !levels.has(pl);
      const want = dangling
        ? { type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${pl}" but there is no such object` }
        : { type: 'Dangling', status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${pl}" and it exists` };
      const have = fs.status?.conditions?.find((c) => c.type === 'Dangling');
      if (have?.status === want.status && have.reason === want.reason && have.message === want.message) continue;
      const conditions = [...(fs.status?.conditions ?? []).filter((c) => c.type !== 'Dangling'), { ...want, lastTransitionTime: nowTime() }];
      try {
        await this.deps.flowSchemaStore().update('', fs.metadata.name!, { ...structuredClone(fs), status: { ...(fs.status ?? {}), conditions } } as FlowSchema, this.deps.systemContext(), 'status');
      } catch (err) {
        // Another replica wrote it first, or the object went away: the next change looks again.
        if (!(err instanceof StatusError) || (err.code !== 409 && err.code !== 404)) this.deps.logger.warn(`priority and fairness: status of FlowSchema ${fs.metadata.name}: ${(err as Error).message}`);
      }
    }
  }
}
