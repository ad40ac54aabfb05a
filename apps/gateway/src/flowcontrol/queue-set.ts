import { createHash } from 'node:crypto';

// The queues of one priority level (upstream apiserver/pkg/util/flowcontrol/fairqueuing): a
// request that finds every seat taken waits in one of `queues` queues, picked by shuffle
// sharding (its flow is dealt a hand of `handSize` queues and joins the shortest). Seats are
// handed out by fair queuing in virtual time, as upstream's queueset: every queue (running or
// waiting requests) is charged the seat-milliseconds its requests use, the virtual clock R runs
// at the seats in use divided among the active queues, and the non-empty queue that has used
// the least (its next dispatch time in R) goes next. A light flow's request is so dispatched
// before a heavy flow's queued ones, however long the heavy flow waited. A request may take
// several seats (its width: a big list costs more, as upstream's work estimator says); it
// starts only when that many are free (at most all of them). A full queue, or a wait past the
// timeout, is a rejection.
//
// One deviation from upstream (whose seats assume as many cores): while other flows of the
// level are active (a request running or queued, or one that came or finished within
// RECENT_FLOW_MS), a flow keeps one seat free for each of them: it holds at most the seats less
// the number of other active flows (seatLimit; a flow holding no seat may always start one
// request, however wide). Its further requests wait even when seats are free, so while one flow
// is busy each other active flow finds a free seat for its next one-seat request (several busy
// flows may together take every seat). Worst-case waste: while a flow's one-seat requests wait
// for this rule, one idle seat per other active flow (a wider request, up to its width less one
// more), and a flow that went idle keeps its seat reserved for RECENT_FLOW_MS. Here a level's
// requests share one thread, and a flow holding every seat with big lists makes the other flows
// wait for a seat behind them. A request held by this rule keeps its place in its queue;
// requests of other flows behind it in that queue that the rule allows go first (dispatch).

export interface QueueSetConfig {
  /** Seats: requests of this level that may run at once. */
  concurrency: number;
  /** 0: no queuing (limitResponse Reject): a request that finds no seat is rejected at once. */
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

/** Why a request was not admitted (the `reason` label of upstream's rejected_requests_total). */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

export class RequestRejected extends Error {
  constructor(readonly reason: RejectReason) {
    super(`request rejected: ${reason}`);
  }
}

/** One instance per reason: a rejection is the cheap path under a flood (no stack captured per request). */
const REJECTED: Record<RejectReason, RequestRejected> = {
  'queue-full': new RequestRejected('queue-full'),
  'concurrency-limit': new RequestRejected('concurrency-limit'),
  'time-out': new RequestRejected('time-out'),
  cancelled: new RequestRejected('cancelled'),
};

/** Registers `cancel` to run if the requester goes away while it waits (only called for requests that queue). */
export type OnGone = (cancel: () => void) => void;

/** A seat held by a running request; `release` frees it (at most once). */
export interface Seat {
  /** Time the request waited in a queue, in ms (0 when it found a seat at once). */
  readonly waitedMs: number;
  release(): void;
}

/** What the seat limit knows of one flow of the level. */
interface Flow {
  seats: number;
  waiting: number;
  /** When it last asked for a seat or gave one back (performance.now()). */
  lastSeen: number;
}

/** How long a flow counts as active after its last request (its requests come one after another). */
export const RECENT_FLOW_MS = 1000;

/** How often at most the limit is computed again when no flow became active (expired flows are pruned then). */
const LIMIT_RECOMPUTE_MS = 20;

interface Waiting {
  queue: Queue;
  flow: Flow;
  width: number;
  enqueuedAt: number;
  resolve: (seat: Seat) => void;
  reject: (err: RequestRejected) => void;
  timer?: NodeJS.Timeout;
}

/** One queue of a level, with what fair queuing knows of it. */
interface Queue {
  readonly index: number;
  waiting: Waiting[];
  /** Seats held by the requests that came through it. */
  seats: number;
  /**
   * Virtual time (seat-ms, the clock R) at which its next request is due: R when it last became
   * active, plus the work of the requests it dispatched since (estimated while they run,
   * corrected to what they took when they finish).
   */
  nextR: number;
}

/**
 * Seat-ms a running request is charged per seat until it finishes (upstream's estimated service
 * duration; the real duration replaces it then). Generous, so that a flow's running requests
 * count against it for as long as they run.
 */
const ESTIMATED_SERVICE_MS = 1000;

/** Deals a hand of `handSize` distinct queues out of `deck` from a flow's hash (upstream shufflesharding.Dealer). */
export function dealHand(flow: string, deck: number, handSize: number): number[] {
  let hash = createHash('sha256').update(flow).digest().readBigUInt64BE(0);
  const remaining = Array.from({ length: deck }, (_, i) => i);
  const hand: number[] = [];
  for (let i = 0; i < Math.min(handSize, deck); i++) {
    const n = BigInt(remaining.length);
    const pick = Number(hash % n);
    hash /= n;
    hand.push(remaining[pick]);
    remaining.splice(pick, 1);
  }
  return hand;
}

export class QueueSet {
  /** Seats taken by running requests. */
  private executing = 0;
  /** Running requests (each holds one or more seats). */
  private running = 0;
  private queued = 0;
  private queues: Queue[] = [];
  private readonly hands = new Map<string, number[]>();
  /** Queues with requests waiting or running (those R is shared among). */
  private active = 0;
  /** The virtual clock R (seat-ms each active queue has been entitled to) and when it was last advanced. */
  private virtualR = 0;
  private advancedAt = performance.now();
  /** Where the search for the next queue starts (round robin among equals). */
  private next = 0;
  /** Flows with requests waiting or running, or seen within RECENT_FLOW_MS (older ones are pruned). */
  private readonly flows = new Map<string, Flow>();
  /** The seat limit as last computed, when, and when it may rise (a recent flow expires). */
  private limit = { seats: Infinity, at: -Infinity, risesAt: Infinity };
  private limitTimer?: NodeJS.Timeout;
  /** The size of `flows` at which a new flow prunes it first. */
  private pruneAt = 64;

  constructor(private config: QueueSetConfig) {
    this.resize();
  }

  get executingRequests(): number {
    return this.running;
  }

  get executingSeats(): number {
    return this.executing;
  }

  get queuedRequests(): number {
    return this.queued;
  }

  get concurrency(): number {
    return this.config.concurrency;
  }

  /** New limits apply at once (queued requests are dispatched if seats were added). */
  setConfig(config: QueueSetConfig): void {
    const queuesChanged = config.queues !== this.config.queues || config.handSize !== this.config.handSize;
    this.config = config;
    if (queuesChanged) {
      // Requests waiting in queues that no longer exist are moved to the new ones.
      const waiting = this.queues.flatMap((q) => q.waiting.splice(0));
      this.hands.clear();
      this.resize();
      for (const w of waiting) {
        w.queue = this.queues[w.queue.index % this.queues.length];
        w.queue.waiting.push(w);
      }
      this.advance();
      this.active = 0;
      for (const q of this.queues) if (this.isActive(q)) this.active++;
    }
    this.dispatch();
  }

  /**
   * A seat for a request of `flow`: at once when one is free and nobody waits, else after a
   * wait in the flow's queue of at most `timeoutMs`. Rejects with {@link RequestRejected}.
   */
  acquire(flow: string, timeoutMs: number, onGone?: OnGone, seats = 1): Promise<Seat> {
    const width = Math.max(1, Math.min(seats, this.config.concurrency));
    const f = this.flowOf(flow);
    const free = this.executing + width <= this.config.concurrency && this.queued === 0 && this.mayTake(f, width);
    if (this.config.queues === 0) return free ? Promise.resolve(this.seat(undefined, 0, width, f)) : Promise.reject(REJECTED['concurrency-limit']);
    const queue = this.chooseQueue(flow);
    if (free) {
      this.activate(queue);
      return Promise.resolve(this.seat(queue, 0, width, f));
    }
    if (queue.waiting.length >= this.config.queueLengthLimit) return Promise.reject(REJECTED['queue-full']);
    return new Promise<Seat>((resolve, reject) => {
      const w: Waiting = { queue, flow: f, width, enqueuedAt: performance.now(), resolve, reject };
      const leave = (reason: RejectReason) => {
        const q = w.queue;
        const i = q.waiting.indexOf(w);
        if (i < 0) return;
        this.advance();
        q.waiting.splice(i, 1);
        this.queued--;
        w.flow.waiting--;
        this.limit.at = -Infinity;
        this.deactivateIfIdle(q);
        clearTimeout(w.timer);
        reject(REJECTED[reason]);
        // A wide request that was due next may have held back narrower ones.
        if (this.executing < this.config.concurrency) this.dispatch();
      };
      w.timer = setTimeout(() => leave('time-out'), timeoutMs);
      w.timer.unref?.();
      onGone?.(() => leave('cancelled'));
      this.activate(queue);
      queue.waiting.push(w);
      this.queued++;
      f.waiting++;
      // A free seat the request due first cannot use (it is wider) may go to this one.
      if (this.executing < this.config.concurrency) this.dispatch();
    });
  }

  private resize(): void {
    const n = Math.max(0, this.config.queues);
    this.queues = Array.from({ length: n }, (_, i) => this.queues[i] ?? { index: i, waiting: [], seats: 0, nextR: this.virtualR });
  }

  /** The shortest queue (counting the seats its requests hold) of the flow's hand. */
  private chooseQueue(flow: string): Queue {
    let hand = this.hands.get(flow);
    if (!hand) {
      hand = dealHand(flow, this.config.queues, this.config.handSize);
      if (this.hands.size > 10_000) this.hands.clear();
      this.hands.set(flow, hand);
    }
    let best = this.queues[hand[0]];
    for (const i of hand) {
      const q = this.queues[i];
      if (q.waiting.length + q.seats < best.waiting.length + best.seats) best = q;
    }
    return best;
  }

  /** Moves R on: the seats in use, shared among the active queues, for the time since it last moved. */
  private advance(): void {
    const now = performance.now();
    if (this.active > 0) this.virtualR += ((now - this.advancedAt) * Math.min(this.executing, this.config.concurrency)) / this.active;
    this.advancedAt = now;
  }

  private isActive(q: Queue): boolean {
    return q.waiting.length > 0 || q.seats > 0;
  }

  /** Before a request joins `q`: an idle queue starts at R (no credit for the time it had nothing to do). */
  private activate(q: Queue): void {
    if (this.isActive(q)) return;
    this.advance();
    q.nextR = Math.max(q.nextR, this.virtualR);
    this.active++;
  }

  private deactivateIfIdle(q: Queue): void {
    // A queue of an earlier configuration (resized away) is no longer counted.
    if (!this.isActive(q) && this.queues[q.index] === q) this.active--;
  }

  /** The flow's record, seen now; a flow that was not active makes the limit be computed again. */
  private flowOf(key: string): Flow {
    const now = performance.now();
    let f = this.flows.get(key);
    if (!f || !this.isRecent(f, now)) this.limit.at = -Infinity;
    if (!f) {
      // Flows that never hold a seat past another's are pruned too (amortized: when the map doubled).
      if (this.flows.size >= this.pruneAt) this.pruneAt = 2 * this.activeFlows(now).active + 64;
      this.flows.set(key, (f = { seats: 0, waiting: 0, lastSeen: now }));
    }
    f.lastSeen = now;
    return f;
  }

  private isRecent(f: Flow, now: number): boolean {
    return f.seats > 0 || f.waiting > 0 || now - f.lastSeen < RECENT_FLOW_MS;
  }

  /** Prunes the flows no longer active; answers how many are, and when the first idle one stops counting. */
  private activeFlows(now: number): { active: number; risesAt: number } {
    let active = 0;
    let risesAt = Infinity;
    for (const [key, f] of this.flows) {
      if (!this.isRecent(f, now)) this.flows.delete(key);
      else {
        active++;
        if (f.seats === 0 && f.waiting === 0) risesAt = Math.min(risesAt, f.lastSeen + RECENT_FLOW_MS);
      }
    }
    return { active, risesAt };
  }

  /**
   * The most seats an active flow may hold: the seats less one for each other active flow (all
   * of them while it is the only one; it asks, so it is active). Computed again at most every
   * LIMIT_RECOMPUTE_MS unless a flow became active or gave a seat back.
   */
  private seatLimit(): number {
    const now = performance.now();
    if (now - this.limit.at < LIMIT_RECOMPUTE_MS && now < this.limit.risesAt) return this.limit.seats;
    const { active, risesAt } = this.activeFlows(now);
    const seats = this.config.concurrency - Math.max(0, active - 1);
    this.limit = { seats, at: now, risesAt };
    return seats;
  }

  /** Whether the flow may take `width` more seats (a flow holding none may always start one request). */
  private mayTake(f: Flow, width: number): boolean {
    return f.seats === 0 || f.seats + width <= this.seatLimit();
  }

  /** Dispatch runs again when the limit rises (an idle flow stops counting), if requests wait held by it. */
  private dispatchWhenLimitRises(): void {
    if (this.limitTimer || this.limit.risesAt === Infinity) return;
    this.limitTimer = setTimeout(() => {
      this.limitTimer = undefined;
      this.limit.at = -Infinity;
      this.dispatch();
    }, Math.max(1, this.limit.risesAt - performance.now()));
    this.limitTimer.unref?.();
  }

  private seat(queue: Queue | undefined, waitedMs: number, width: number, flow: Flow): Seat {
    this.advance();
    this.executing += width;
    flow.seats += width;
    this.running++;
    const started = performance.now();
    if (queue) {
      queue.seats += width;
      queue.nextR += width * ESTIMATED_SERVICE_MS;
    }
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        this.advance();
        this.executing -= width;
        this.running--;
        flow.seats -= width;
        flow.lastSeen = performance.now();
        // When the limit may rise is known again (this flow may have become idle).
        this.limit.at = -Infinity;
        if (queue) {
          queue.seats -= width;
          // The estimate it was charged gives way to the seat-ms it really used.
          queue.nextR += width * (performance.now() - started - ESTIMATED_SERVICE_MS);
          this.deactivateIfIdle(queue);
        }
        this.dispatch();
      },
    };
  }

  /**
   * Hands free seats to waiting requests: the non-empty queue due first in virtual time (round
   * robin among equals) that holds a request whose flow may take more seats (seatLimit). In a
   * queue, that is its first request, or when that one's flow is held by the limit, the first of
   * another flow that is not (the held request keeps its place; a flow's requests never pass
   * each other). When that request is wider than the free seats, dispatch waits for more to free
   * (no overtaking, as upstream). Requests held only by the limit are dispatched when it rises.
   */
  private dispatch(): void {
    while (this.executing < this.config.concurrency && this.queued > 0) {
      let pick: Queue | undefined;
      let at = 0;
      let held = false;
      const n = this.queues.length;
      for (let k = 0; k < n; k++) {
        const q = this.queues[(this.next + k) % n];
        if (q.waiting.length === 0 || (pick && q.nextR >= pick.nextR)) continue;
        const i = this.firstAllowed(q.waiting);
        if (i !== 0) held = true;
        if (i >= 0) [pick, at] = [q, i];
      }
      if (!pick) {
        if (held) this.dispatchWhenLimitRises();
        return;
      }
      const next = pick.waiting[at];
      // A queued request keeps the width it asked for; a smaller concurrency since then caps it.
      const width = Math.min(next.width, this.config.concurrency);
      if (this.executing + width > this.config.concurrency) return;
      this.next = (pick.index + 1) % n;
      pick.waiting.splice(at, 1);
      this.queued--;
      next.flow.waiting--;
      clearTimeout(next.timer);
      next.resolve(this.seat(pick, performance.now() - next.enqueuedAt, width, next.flow));
    }
  }

  /** Where in `waiting` the first request is whose flow may take its seats and none of whose flow's requests is before it (-1: none). */
  private firstAllowed(waiting: readonly Waiting[]): number {
    if (this.mayTake(waiting[0].flow, waiting[0].width)) return 0;
    const heldFlows = [waiting[0].flow];
    for (let i = 1; i < waiting.length; i++) {
      const { flow, width } = waiting[i];
      if (heldFlows.includes(flow)) continue;
      if (this.mayTake(flow, width)) return i;
      heldFlows.push(flow);
    }
    return -1;
  }
}
