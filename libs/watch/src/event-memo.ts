/**
 * What an EventMemo keeps by default, in weight units: callers weigh an event by its values'
 * characters (1 Mi: some 2,500 events of small ConfigMaps; a parsed object takes about twice its JSON).
 */
export const DEFAULT_EVENT_MEMO_WEIGHT = 1024 * 1024;

/**
 * Values derived from watch events (a parsed object, encoded bytes) for the most recent events
 * only: every watcher the cache hands an event to shares one value (live delivery hands it to
 * all of them at once; a watcher resuming shortly after finds recent events still here), and
 * the oldest values go once the entries weigh more than `maxWeight` in all.
 *
 * Why not a WeakMap keyed by the event: the event history keeps its events for the whole
 * retention (5 minutes), so a WeakMap would keep a parsed copy of every object written in that
 * time as soon as anyone watches (heap snapshot, 20,000 ConfigMaps and two watchers: +47 MiB,
 * more than the objects themselves). A watcher replaying older events derives them again.
 */
export class EventMemo<K extends object, V> {
  private readonly entries = new Map<K, V>();
  /** Keys in the order they were added, with their weights, from `head` on. */
  private order: (K | undefined)[] = [];
  private weights: number[] = [];
  private head = 0;
  private weight = 0;
  /** The last key found and its value: the cache hands one event to all its watchers in a row. */
  private lastKey?: K;
  private lastValue?: V;

  constructor(private readonly maxWeight = DEFAULT_EVENT_MEMO_WEIGHT) {}

  get(key: K): V | undefined {
    if (key === this.lastKey) return this.lastValue;
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.lastKey = key;
      this.lastValue = value;
    }
    return value;
  }

  /** Remembers value for key (weighing `weight`); drops the oldest entries beyond maxWeight, never the newest. */
  set(key: K, value: V, weight: number): void {
    if (key === this.lastKey) this.lastValue = value;
    if (this.entries.has(key)) {
      this.entries.set(key, value);
      return;
    }
    this.entries.set(key, value);
    this.order.push(key);
    this.weights.push(weight);
    this.weight += weight;
    while (this.weight > this.maxWeight && this.order.length - this.head > 1) {
      const oldest = this.order[this.head]!;
      this.entries.delete(oldest);
      if (oldest === this.lastKey) this.lastKey = this.lastValue = undefined;
      this.order[this.head] = undefined;
      this.weight -= this.weights[this.head];
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.weights = this.weights.slice(this.head);
      this.head = 0;
    }
  }

  /** Number of entries (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
