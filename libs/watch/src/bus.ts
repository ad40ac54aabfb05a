import type { StoreEvent } from '@orch/storage';

/**
 * A slice of the store's ordered change feed as the pump publishes it.
 *
 * Continuity: the publisher has published every event with revision <= `after` before this
 * batch (or none exists), and `events` are all the events in (after, last event] in revision
 * order. A receiver whose position is >= `after` may apply the batch (dropping events it
 * already has); one whose position is below `after` has missed something and must not.
 * A batch without events is a heartbeat: it says the publisher is alive at `after`.
 */
export interface EventBatch {
  after: number;
  /** Buses between processes do not carry prevValue: receivers know it from their object cache. */
  events: StoreEvent[];
}

export interface BusSubscription {
  unsubscribe(): void;
}

/**
 * The watch bus seam: carries batches from the pump to every replica's watch cache.
 *
 * Contract (every backend, see conformance.ts):
 * - each subscriber receives the batches of one publisher in publish order, each intact;
 * - a batch may be lost (disconnects, slow consumers): receivers detect it by `after` and
 *   recover from the store, so the bus never has to be reliable, only ordered;
 * - publish never throws and never blocks the caller: a batch it cannot send is dropped.
 */
export interface WatchBus {
  /** A short name for logs, metrics and readiness ('local', 'nats'). */
  readonly name: string;
  /** Replicas in other processes receive what is published here (publishing needs a leader). */
  readonly distributed: boolean;
  publish(batch: EventBatch): void;
  subscribe(listener: (batch: EventBatch) => void): BusSubscription;
  /** The largest batch (encoded bytes) the bus carries; bigger ones must be split. */
  readonly maxBatchBytes: number;
  /** Whether the bus is connected now (readiness detail; receivers do not depend on it). */
  connected(): boolean;
  /**
   * Resolves once the bus has taken in everything this client sent before (subscriptions,
   * unsubscriptions, publishes): a batch published by anyone afterwards reaches a listener
   * subscribed before the flush. Rejects when the bus cannot be reached.
   */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The in-process bus of the embedded default: one process, one pump, synchronous delivery
 * of the very batch objects published (nothing is copied or encoded).
 */
export class LocalBus implements WatchBus {
  readonly name = 'local';
  readonly distributed = false;
  readonly maxBatchBytes = Number.POSITIVE_INFINITY;
  private readonly listeners = new Set<(batch: EventBatch) => void>();
  private closed = false;

  publish(batch: EventBatch): void {
    if (this.closed) return;
    for (const listener of this.listeners) listener(batch);
  }

  subscribe(listener: (batch: EventBatch) => void): BusSubscription {
    const own = (batch: EventBatch) => listener(batch);
    this.listeners.add(own);
    return { unsubscribe: () => this.listeners.delete(own) };
  }

  connected(): boolean {
    return !this.closed;
  }

  /** Delivery is synchronous: nothing is ever in flight. */
  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }
}

const TYPE_CODES = { create: 0, update: 1, delete: 2 } as const;
const TYPES = ['create', 'update', 'delete'] as const;

/**
 * Wire form of a batch for buses between processes: one JSON header line
 * `{"a":after,"e":[[type,revision,key,valueBytes],...]}` then the values' UTF-8 bytes back to
 * back (valueBytes -1: no value). Values are not JSON-escaped, so encoding costs one copy.
 */
export function encodeBatch(batch: EventBatch): Uint8Array {
  const lengths: number[] = [];
  let total = 0;
  const header = {
    a: batch.after,
    e: batch.events.map((e) => {
      const len = e.value === undefined ? -1 : Buffer.byteLength(e.value);
      lengths.push(len);
      if (len > 0) total += len;
      return [TYPE_CODES[e.type], e.revision, e.key, len];
    }),
  };
  const head = Buffer.from(`${JSON.stringify(header)}\n`);
  const out = Buffer.allocUnsafe(head.length + total);
  head.copy(out, 0);
  let at = head.length;
  batch.events.forEach((e, i) => {
    if (lengths[i] > 0) at += out.write(e.value!, at);
  });
  return out;
}

/** Inverse of encodeBatch; throws on a malformed message. */
export function decodeBatch(data: Uint8Array): EventBatch {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const nl = buf.indexOf(10);
  if (nl < 0) throw new Error('watch batch without a header line');
  const header = JSON.parse(buf.toString('utf8', 0, nl)) as { a: number; e: [number, number, string, number][] };
  let at = nl + 1;
  const events: StoreEvent[] = header.e.map(([code, revision, key, len]) => {
    const type = TYPES[code];
    if (!type) throw new Error(`unknown watch event type ${code}`);
    const event: StoreEvent = { type, key, revision };
    if (len >= 0) {
      event.value = buf.toString('utf8', at, at + len);
      at += len;
    }
    return event;
  });
  if (at !== buf.length) throw new Error(`watch batch has ${buf.length - at} trailing bytes`);
  return { after: header.a, events };
}

/** Encoded size of one event in a batch (header entry + value), for splitting batches. */
export function encodedEventBytes(e: StoreEvent): number {
  return e.key.length * 2 + 40 + (e.value === undefined ? 0 : Buffer.byteLength(e.value));
}
