import { sleep } from './backoff';
import { isNotFound } from './errors';
import type { RestClient, ResourceClient } from './rest';
import { formatMicroTime, type KubeObject } from '@orch/apimachinery';
import type { Logger, ObjectReference } from './types';
import { BucketRateLimiter } from './workqueue';

export type EventType = 'Normal' | 'Warning';

export interface EventSeries {
  count: number;
  /** MicroTime. */
  lastObservedTime: string;
}

/** `events.orch.io/v1` Event (SPEC "Event resource"); the deprecated* fields are never set. */
export interface ClusterEvent extends KubeObject {
  /** MicroTime of the first occurrence. */
  eventTime: string;
  series?: EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note?: string;
  type: EventType;
}

export const EVENTS = { group: 'events.orch.io', version: 'v1', resource: 'events' } as const;

export interface EventRecorderOptions {
  client: RestClient;
  /** The controller that emits, e.g. `orch.io/scheduler`. */
  reportingController: string;
  /** This instance of it, e.g. `orch-scheduler-<host>`. */
  reportingInstance: string;
  logger?: Logger;
  /** Writes per second to the gateway (default 10, burst 100). */
  qps?: number;
  burst?: number;
  /** Writes waiting beyond this are dropped with a log line (default 1000). */
  maxQueued?: number;
  /** Repeats within this window aggregate into one Event (default 6 min, upstream). */
  seriesWindowMs?: number;
  /** How often accumulated series counts are patched (default 30 s, upstream). */
  seriesFlushMs?: number;
}

/** Upstream's limit on `note`. */
const MAX_NOTE_BYTES = 1024;

interface Entry {
  name: string;
  namespace: string;
  event: ClusterEvent;
  count: number;
  lastObserved: number;
  /** Count changed since the last patch was queued. */
  dirty: boolean;
  /** A patch for this entry is queued and not yet sent (it sends the count current then). */
  patchQueued: boolean;
}

function toReference(obj: KubeObject | ObjectReference): ObjectReference {
  if (!('metadata' in obj)) return obj;
  const m = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion };
}

function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= MAX_NOTE_BYTES) return note;
  let out = note.slice(0, MAX_NOTE_BYTES);
  while (Buffer.byteLength(out) > MAX_NOTE_BYTES) out = out.slice(0, -1);
  return out;
}

/**
 * Records `events.orch.io/v1` Events, upstream events/v1 style:
 * - `event()` never blocks and never throws: writes go to a bounded queue sent by one
 *   background loop through a token bucket; failures are logged and dropped.
 * - Repeats of the same (regarding, type, reason, action, note) within the series window
 *   (6 min) aggregate into the first Event: the 2nd occurrence patches `series` at once;
 *   later ones bump the count locally and are patched every flush period (30 s). A series
 *   patch that finds the Event gone re-creates it with the series.
 * - `stop()` sends pending series counts and waits (bounded) for the queue.
 */
export class EventRecorder {
  private readonly events: ResourceClient<ClusterEvent>;
  private readonly logger: Logger;
  private readonly limiter: BucketRateLimiter<string>;
  private readonly entries = new Map<string, Entry>();
  private readonly ops: (() => Promise<void>)[] = [];
  private readonly windowMs: number;
  private readonly maxQueued: number;
  private readonly flushTimer: NodeJS.Timeout;
  private draining?: Promise<void>;
  private seq = 0;
  private stopped = false;
  /** Aborted when stop() gives up on the queue: cuts a rate-limit wait short. */
  private readonly halt = new AbortController();

  constructor(private readonly opts: EventRecorderOptions) {
    this.events = opts.client.resource<ClusterEvent>(EVENTS);
    this.logger = opts.logger ?? console;
    this.limiter = new BucketRateLimiter(opts.qps ?? 10, opts.burst ?? 100);
    this.windowMs = opts.seriesWindowMs ?? 6 * 60_000;
    this.maxQueued = opts.maxQueued ?? 1000;
    this.flushTimer = setInterval(() => this.tick(), opts.seriesFlushMs ?? 30_000);
    this.flushTimer.unref();
  }

  /** Records one occurrence. Invalid input is logged and dropped. */
  event(regarding: KubeObject | ObjectReference, type: EventType, reason: string, action: string, note = '', related?: KubeObject | ObjectReference): void {
    if (this.stopped) return;
    if (type !== 'Normal' && type !== 'Warning') {
      this.logger.error(`event dropped: type must be Normal or Warning, got ${JSON.stringify(type)}`);
      return;
    }
    if (!reason || !action) {
      this.logger.error(`event dropped: reason and action are required (reason ${JSON.stringify(reason)}, action ${JSON.stringify(action)})`);
      return;
    }
    const ref = toReference(regarding);
    if (!ref.name) {
      this.logger.error(`event dropped: regarding object has no name (reason ${reason})`);
      return;
    }
    const text = truncateNote(note);
    const key = JSON.stringify([ref.apiVersion, ref.kind, ref.namespace, ref.name, ref.uid, ref.fieldPath, type, reason, action, text]);
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.lastObserved <= this.windowMs) {
      entry.count++;
      entry.lastObserved = now;
      if (entry.count === 2) this.queuePatch(entry);
      else entry.dirty = true;
      return;
    }
    const namespace = ref.namespace || 'default';
    const name = `${ref.name}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`;
    const event: ClusterEvent = {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: formatMicroTime(now * 1000),
      reportingController: this.opts.reportingController,
      reportingInstance: this.opts.reportingInstance,
      action,
      reason,
      regarding: ref,
      type,
    };
    if (text) event.note = text;
    if (related) event.related = toReference(related);
    const created: Entry = { name, namespace, event, count: 1, lastObserved: now, dirty: false, patchQueued: false };
    this.entries.set(key, created);
    this.enqueue(() => this.create(created, undefined));
  }

  /** Queues patches for pending series counts and resolves when every queued write was tried. */
  async flush(): Promise<void> {
    for (const e of this.entries.values()) if (e.dirty) this.queuePatch(e);
    while (this.draining) await this.draining;
  }

  /**
   * Stops recording: later `event()` calls are ignored, pending counts are sent, and writes
   * still queued after `timeoutMs` (default 5 s) are dropped.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.flushTimer);
    const ac = new AbortController();
    const finished = await Promise.race([this.flush().then(() => true), sleep(timeoutMs, ac.signal).then(() => false)]);
    ac.abort();
    if (!finished) {
      this.logger.warn(`event recorder: dropped ${this.ops.length} unsent event writes on stop`);
      this.ops.length = 0;
      this.halt.abort();
    }
  }

  private tick(): void {
    const now = Date.now();
    for (const [key, e] of this.entries) {
      if (e.dirty) this.queuePatch(e);
      else if (!e.patchQueued && now - e.lastObserved > this.windowMs) this.entries.delete(key);
    }
  }

  private queuePatch(entry: Entry): void {
    entry.dirty = false;
    if (entry.patchQueued) return;
    entry.patchQueued = true;
    this.enqueue(() => this.patchSeries(entry));
  }

  private enqueue(op: () => Promise<void>): void {
    if (this.ops.length >= this.maxQueued) {
      this.logger.warn(`event recorder: queue full (${this.maxQueued}), dropping an event write`);
      return;
    }
    this.ops.push(op);
    if (!this.draining) this.draining = this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    for (let op = this.ops.shift(); op; op = this.ops.shift()) {
      const delay = this.limiter.when();
      if (delay > 0 && !(await sleep(delay, this.halt.signal))) return;
      try {
        await op();
      } catch (err) {
        this.logger.warn(`event recorder: ${(err as Error).message}`);
      }
    }
  }

  private series(entry: Entry): EventSeries {
    return { count: entry.count, lastObservedTime: formatMicroTime(entry.lastObserved * 1000) };
  }

  private async create(entry: Entry, series: EventSeries | undefined): Promise<void> {
    const body: ClusterEvent = series ? { ...entry.event, series } : entry.event;
    try {
      await this.events.inNamespace(entry.namespace).create(body);
    } catch (err) {
      throw new Error(`could not create event ${entry.namespace}/${entry.name} (${entry.event.reason}): ${(err as Error).message}`);
    }
  }

  private async patchSeries(entry: Entry): Promise<void> {
    entry.patchQueued = false;
    const series = this.series(entry);
    try {
      await this.events.inNamespace(entry.namespace).patch(entry.name, 'merge', { series });
    } catch (err) {
      if (isNotFound(err)) return this.create(entry, series);
      throw new Error(`could not update event series ${entry.namespace}/${entry.name} (${entry.event.reason}): ${(err as Error).message}`);
    }
  }
}
