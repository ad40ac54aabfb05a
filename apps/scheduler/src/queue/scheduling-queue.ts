import { DEFAULT_SCHEDULER_NAME, podKey, type Pod } from '../framework/api';
import { realClock, type Clock } from '../framework/clock';
import { assignedPodUpdateEvent, eventMatches, Events, isWildcard, type ClusterEvent } from '../framework/events';
import type { PluginEvent } from '../framework/framework';
import { PodInfo, type QueuedPodInfo } from '../framework/types';
import { Heap } from './heap';
import { Nominator } from './nominator';

export const DEFAULT_INITIAL_BACKOFF_MS = 1000;
export const DEFAULT_MAX_BACKOFF_MS = 10_000;
/** Pods stay in unschedulablePods at most this long before a retry (upstream podMaxInUnschedulablePodsDuration). */
export const DEFAULT_MAX_IN_UNSCHEDULABLE_MS = 5 * 60 * 1000;
const BACKOFF_FLUSH_MS = 1000;
const UNSCHEDULABLE_FLUSH_MS = 30_000;

export type QueueName = 'active' | 'backoff' | 'unschedulable';

export interface SchedulingQueueOptions {
  /** activeQ order: the QueueSort plugin's less. */
  less: (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;
  clock?: Clock;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  maxInUnschedulableMs?: number;
  /** The events the plugins of a profile registered (by scheduler name). */
  eventsFor?: (schedulerName: string) => readonly PluginEvent[];
  /** Called when a pod enters a queue, for metrics. */
  onIncoming?: (queue: QueueName, event: string) => void;
  /** Shared with the frameworks that filter with nominated pods; a new one by default. */
  nominator?: Nominator;
}

interface InFlight {
  /** The newest object seen while the pod was being scheduled. */
  updated?: Pod;
  deleted?: boolean;
}

/**
 * The scheduling queue (upstream PriorityQueue): activeQ (a heap in QueueSort order) feeds
 * `pop`; pods that failed wait in backoffQ (exponential per-pod backoff, 1 s doubling to
 * 10 s) or in unschedulablePods until a cluster event their rejecting plugins registered
 * moves them (or 5 min pass). A pod is in at most one of the three, or in flight between
 * `pop` and `done`. All methods are synchronous except `pop`, which waits for a pod.
 */
export class SchedulingQueue {
  private readonly activeQ: Heap<QueuedPodInfo>;
  private readonly backoffQ: Heap<QueuedPodInfo>;
  private readonly unschedulable = new Map<string, QueuedPodInfo>();
  private readonly inFlight = new Map<string, InFlight>();
  readonly nominator: Nominator;
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxInUnschedulableMs: number;
  private readonly eventsFor: (schedulerName: string) => readonly PluginEvent[];
  private readonly onIncoming: (queue: QueueName, event: string) => void;
  private waiters: Array<() => void> = [];
  private timers: unknown[] = [];
  private closed = false;
  /** Incremented by every pop. */
  private cycle = 0;
  /** The cycle of the last move request: pods failing in an older cycle go to backoffQ, not unschedulablePods. */
  private moveRequestCycle = -1;

  constructor(opts: SchedulingQueueOptions) {
    this.clock = opts.clock ?? realClock;
    this.nominator = opts.nominator ?? new Nominator();
    this.initialBackoffMs = opts.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS;
    this.maxBackoffMs = opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    this.maxInUnschedulableMs = opts.maxInUnschedulableMs ?? DEFAULT_MAX_IN_UNSCHEDULABLE_MS;
    this.eventsFor = opts.eventsFor ?? (() => []);
    this.onIncoming = opts.onIncoming ?? (() => undefined);
    const key = (p: QueuedPodInfo): string => p.podInfo.key;
    this.activeQ = new Heap(key, opts.less);
    this.backoffQ = new Heap(key, (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  }

  /** Starts the periodic flushes (backoffQ every second, unschedulablePods every 30 s). */
  run(): void {
    const every = (ms: number, fn: () => void): void => {
      const tick = (): void => {
        if (this.closed) return;
        fn();
        this.timers.push(this.clock.setTimeout(tick, ms));
      };
      this.timers.push(this.clock.setTimeout(tick, ms));
    };
    every(BACKOFF_FLUSH_MS, () => this.flushBackoffQCompleted());
    every(UNSCHEDULABLE_FLUSH_MS, () => this.flushUnschedulablePodsLeftover());
  }

  /** Stops timers and wakes pending `pop` calls with undefined. Idempotent. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers = [];
    this.wake();
  }

  /** The number of scheduling attempts started so far. */
  get schedulingCycle(): number {
    return this.cycle;
  }

  /** Pods waiting per queue. */
  pendingPods(): Record<QueueName, number> {
    return { active: this.activeQ.size, backoff: this.backoffQ.size, unschedulable: this.unschedulable.size };
  }

  /** Which queue holds the pod with `key`, 'inFlight' while it is being scheduled, or undefined. */
  where(key: string): QueueName | 'inFlight' | undefined {
    if (this.activeQ.has(key)) return 'active';
    if (this.backoffQ.has(key)) return 'backoff';
    if (this.unschedulable.has(key)) return 'unschedulable';
    return this.inFlight.has(key) ? 'inFlight' : undefined;
  }

  /** A new unscheduled pod: into activeQ (out of the other queues if it was there; an update if in flight). */
  add(pod: Pod): void {
    const flight = this.inFlight.get(podKey(pod));
    if (flight) {
      flight.updated = pod;
      return;
    }
    const pi = new PodInfo(pod);
    this.backoffQ.delete(pi.key);
    this.unschedulable.delete(pi.key);
    this.pushActive(this.newQueued(pi), 'PodAdd');
    this.nominator.add(pi);
  }

  /**
   * An update of an unscheduled pod. In activeQ/backoffQ the object is replaced; in
   * unschedulablePods a real change (not just status/resourceVersion) moves it to
   * backoffQ or activeQ; in flight it is remembered for the retry; unknown pods are added.
   */
  update(oldPod: Pod, newPod: Pod): void {
    const key = podKey(newPod);
    const pi = new PodInfo(newPod);
    const flight = this.inFlight.get(key);
    if (flight) {
      flight.updated = newPod;
      this.nominator.update(oldPod, pi);
      return;
    }
    for (const q of [this.activeQ, this.backoffQ]) {
      const existing = q.get(key);
      if (existing) {
        existing.podInfo = pi;
        q.addOrUpdate(existing);
        this.nominator.update(oldPod, pi);
        return;
      }
    }
    const u = this.unschedulable.get(key);
    if (u) {
      u.podInfo = pi;
      this.nominator.update(oldPod, pi);
      if (isPodUpdated(oldPod, newPod)) {
        this.unschedulable.delete(key);
        if (this.isBackingOff(u)) this.pushBackoff(u, 'PodUpdate');
        else this.pushActive(u, 'PodUpdate');
      }
      return;
    }
    this.pushActive(this.newQueued(pi), 'PodUpdate');
    this.nominator.add(pi);
  }

  /** The pod is gone (deleted or bound elsewhere): out of every queue and the nominator. */
  delete(pod: Pod): void {
    const key = podKey(pod);
    this.activeQ.delete(key);
    this.backoffQ.delete(key);
    this.unschedulable.delete(key);
    const flight = this.inFlight.get(key);
    if (flight) flight.deleted = true;
    this.nominator.delete(key);
  }

  /**
   * The next pod by QueueSort order, waiting while activeQ is empty; undefined once closed.
   * The pod is in flight until `done`.
   */
  async pop(): Promise<QueuedPodInfo | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const p = this.activeQ.pop();
      if (p) {
        this.cycle++;
        p.attempts++;
        p.initialAttemptTimestamp ??= this.clock.now();
        p.unschedulablePlugins.clear();
        this.inFlight.set(p.podInfo.key, {});
        return p;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** The scheduling attempt of the pod with `key` finished (after addUnschedulableIfNotPresent on failure). */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * Requeues a pod whose attempt (started in `podSchedulingCycle`) failed: to backoffQ when a
   * move request happened since, the pod changed meanwhile, or no plugin rejected it (an
   * error); otherwise to unschedulablePods. Dropped (false) when it was deleted or bound
   * meanwhile. Throws if the pod is already queued.
   */
  addUnschedulableIfNotPresent(p: QueuedPodInfo, podSchedulingCycle: number): boolean {
    const key = p.podInfo.key;
    if (this.activeQ.has(key) || this.backoffQ.has(key)) throw new Error(`pod ${p.podInfo.namespace}/${p.podInfo.name} is already present in the active or backoff queue`);
    const flight = this.inFlight.get(key);
    if (flight?.deleted) return false;
    const changed = !!flight?.updated && isPodUpdated(p.podInfo.pod, flight.updated);
    if (flight?.updated) p.podInfo = new PodInfo(flight.updated);
    p.timestamp = this.clock.now();
    if (changed || this.moveRequestCycle >= podSchedulingCycle || p.unschedulablePlugins.size === 0) this.pushBackoff(p, 'ScheduleAttemptFailure');
    else {
      this.unschedulable.set(key, p);
      this.onIncoming('unschedulable', 'ScheduleAttemptFailure');
    }
    this.nominator.add(p.podInfo);
    return true;
  }

  /**
   * Moves the unschedulable pods that `event` may help (their rejecting plugins registered a
   * matching event and its queueing hint, if any, says Queue) to activeQ, or backoffQ while
   * their backoff lasts. `preCheck` can narrow the pods further.
   */
  moveAllToActiveOrBackoffQueue(event: ClusterEvent, oldObj?: unknown, newObj?: unknown, preCheck?: (p: QueuedPodInfo) => boolean): void {
    for (const [key, p] of this.unschedulable) {
      if (preCheck && !preCheck(p)) continue;
      if (!this.worthRequeuing(p, event, oldObj, newObj)) continue;
      this.unschedulable.delete(key);
      if (this.isBackingOff(p)) this.pushBackoff(p, event.label);
      else this.pushActive(p, event.label);
    }
    this.moveRequestCycle = this.cycle;
  }

  /** A pod was bound to a node (it may satisfy affinity or spreading of waiting pods). */
  assignedPodAdded(pod: Pod): void {
    this.moveAllToActiveOrBackoffQueue(Events.AssignedPodAdd, undefined, pod);
  }

  /** A bound pod changed; only scheduling-relevant changes move pods. */
  assignedPodUpdated(oldPod: Pod, newPod: Pod): void {
    const event = assignedPodUpdateEvent(oldPod, newPod);
    if (event) this.moveAllToActiveOrBackoffQueue(event, oldPod, newPod);
  }

  /** A bound pod was deleted (it freed resources). */
  assignedPodDeleted(pod: Pod): void {
    this.moveAllToActiveOrBackoffQueue(Events.AssignedPodDelete, pod, undefined);
  }

  /** Moves backoffQ pods whose backoff expired to activeQ. */
  flushBackoffQCompleted(): void {
    const now = this.clock.now();
    for (let p = this.backoffQ.peek(); p && this.backoffExpiry(p) <= now; p = this.backoffQ.peek()) {
      this.backoffQ.pop();
      this.pushActive(p, 'BackoffComplete');
    }
  }

  /** Retries pods that stayed in unschedulablePods longer than the maximum. */
  flushUnschedulablePodsLeftover(): void {
    const now = this.clock.now();
    this.moveAllToActiveOrBackoffQueue(Events.UnschedulableTimeout, undefined, undefined, (p) => now - p.timestamp >= this.maxInUnschedulableMs);
  }

  /** upstream calculateBackoffDuration: initial × 2^(attempts−1), capped at the maximum. */
  backoffDuration(p: QueuedPodInfo): number {
    let d = this.initialBackoffMs;
    for (let i = 1; i < p.attempts; i++) {
      if (d > this.maxBackoffMs - d) return this.maxBackoffMs;
      d += d;
    }
    return d;
  }

  private backoffExpiry(p: QueuedPodInfo): number {
    return p.timestamp + this.backoffDuration(p);
  }

  private isBackingOff(p: QueuedPodInfo): boolean {
    return this.backoffExpiry(p) > this.clock.now();
  }

  private worthRequeuing(p: QueuedPodInfo, event: ClusterEvent, oldObj: unknown, newObj: unknown): boolean {
    if (isWildcard(event) || p.unschedulablePlugins.size === 0) return true;
    const pod = p.podInfo.pod;
    for (const pe of this.eventsFor(pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME)) {
      if (!p.unschedulablePlugins.has(pe.plugin) || !eventMatches(pe.event, event)) continue;
      if (!pe.hint) return true;
      try {
        if (pe.hint(pod, oldObj, newObj) === 'Queue') return true;
      } catch {
        return true;
      }
    }
    return false;
  }

  private newQueued(pi: PodInfo): QueuedPodInfo {
    return { podInfo: pi, timestamp: this.clock.now(), attempts: 0, unschedulablePlugins: new Set() };
  }

  private pushActive(p: QueuedPodInfo, event: string): void {
    this.activeQ.addOrUpdate(p);
    this.onIncoming('active', event);
    this.wake();
  }

  private pushBackoff(p: QueuedPodInfo, event: string): void {
    this.backoffQ.addOrUpdate(p);
    this.onIncoming('backoff', event);
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}

/** upstream isPodUpdated: a change beyond resourceVersion, generation, managedFields and status. */
export function isPodUpdated(oldPod: Pod, newPod: Pod): boolean {
  const strip = (p: Pod): string => {
    const { resourceVersion: _rv, generation: _g, managedFields: _m, ...meta } = p.metadata;
    return JSON.stringify([meta, p.spec]);
  };
  return strip(oldPod) !== strip(newPod);
}
