import { createHash } from 'node:crypto';

// The queues of one priority level (upstream apiserver/pkg/util/flowcontrol/fairqueuing): a
// request that finds every seat taken waits in one of `queues` queues, picked by shuffle
// sharding (its flow is dealt a hand of `handSize` queues and joins the shortest); when seats
// free, the non-empty queue whose requests hold the fewest seats goes next, so flows share
// the seats fairly. A request may take several seats (its width: a big list costs more, as
// upstream's work estimator says); it starts only when that many are free (at most all of
// them). A full queue, or a wait past the timeout, is a rejection.

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

interface Waiting {
  queue: number;
  width: number;
  enqueuedAt: number;
  resolve: (seat: Seat) => void;
  reject: (err: RequestRejected) => void;
  timer?: NodeJS.Timeout;
}

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
  private queues: Waiting[][] = [];
  /** Seats held by the requests that came through each queue (fairness between queues). */
  private seatsByQueue: number[] = [];
  private readonly hands = new Map<string, number[]>();
  private next = 0;

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
    return this.queues.reduce((n, q) => n + q.length, 0);
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
      const waiting = this.queues.flat();
      this.hands.clear();
      this.resize();
      for (const w of waiting) {
        w.queue = w.queue % Math.max(1, config.queues);
        this.queues[w.queue]?.push(w);
      }
    }
    this.dispatch();
  }

  /**
   * A seat for a request of `flow`: at once when one is free and nobody waits, else after a
   * wait in the flow's queue of at most `timeoutMs`. Rejects with {@link RequestRejected}.
   */
  acquire(flow: string, timeoutMs: number, onGone?: OnGone, seats = 1): Promise<Seat> {
    const width = Math.max(1, Math.min(seats, this.config.concurrency));
    if (this.executing + width <= this.config.concurrency && this.queuedRequests === 0) return Promise.resolve(this.seat(-1, 0, width));
    if (this.config.queues === 0) return Promise.reject(REJECTED['concurrency-limit']);
    const queue = this.chooseQueue(flow);
    if (this.queues[queue].length >= this.config.queueLengthLimit) return Promise.reject(REJECTED['queue-full']);
    return new Promise<Seat>((resolve, reject) => {
      const w: Waiting = { queue, width, enqueuedAt: performance.now(), resolve, reject };
      const leave = (reason: RejectReason) => {
        const q = this.queues[w.queue];
        const i = q ? q.indexOf(w) : -1;
        if (i < 0) return;
        q.splice(i, 1);
        clearTimeout(w.timer);
        reject(REJECTED[reason]);
      };
      w.timer = setTimeout(() => leave('time-out'), timeoutMs);
      w.timer.unref?.();
      onGone?.(() => leave('cancelled'));
      this.queues[queue].push(w);
    });
  }

  private resize(): void {
    const n = Math.max(0, this.config.queues);
    this.queues = Array.from({ length: n }, (_, i) => this.queues[i] ?? []);
    this.seatsByQueue = Array.from({ length: n }, (_, i) => this.seatsByQueue[i] ?? 0);
  }

  /** The shortest queue (counting the seats its requests hold) of the flow's hand. */
  private chooseQueue(flow: string): number {
    let hand = this.hands.get(flow);
    if (!hand) {
      hand = dealHand(flow, this.config.queues, this.config.handSize);
      if (this.hands.size > 10_000) this.hands.clear();
      this.hands.set(flow, hand);
    }
    let best = hand[0];
    for (const q of hand) if (this.load(q) < this.load(best)) best = q;
    return best;
  }

  private load(q: number): number {
    return this.queues[q].length + this.seatsByQueue[q];
  }

  private seat(queue: number, waitedMs: number, width: number): Seat {
    this.executing += width;
    this.running++;
    if (queue >= 0) this.seatsByQueue[queue] += width;
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        this.executing -= width;
        this.running--;
        if (queue >= 0 && queue < this.seatsByQueue.length) this.seatsByQueue[queue] -= width;
        this.dispatch();
      },
    };
  }

  /**
   * Hands free seats to waiting requests: the non-empty queue holding the fewest seats first
   * (round robin among equals); when its first request is wider than the free seats, dispatch
   * waits for more to free (no overtaking, as upstream).
   */
  private dispatch(): void {
    while (this.executing < this.config.concurrency) {
      let pick = -1;
      const n = this.queues.length;
      for (let k = 0; k < n; k++) {
        const q = (this.next + k) % n;
        if (this.queues[q].length === 0) continue;
        if (pick < 0 || this.seatsByQueue[q] < this.seatsByQueue[pick]) pick = q;
      }
      if (pick < 0) return;
      const head = this.queues[pick][0];
      // A queued request keeps the width it asked for; a smaller concurrency since then caps it.
      const width = Math.min(head.width, this.config.concurrency);
      if (this.executing + width > this.config.concurrency) return;
      this.next = (pick + 1) % n;
      this.queues[pick].shift();
      clearTimeout(head.timer);
      head.resolve(this.seat(pick, performance.now() - head.enqueuedAt, width));
    }
  }
}
