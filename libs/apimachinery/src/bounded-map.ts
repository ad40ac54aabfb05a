/**
 * A Map for caches of values derived from their key (a route, a parsed header, an answer), of at
 * most `max` entries: setting a key while it holds `max` empties it whole first. Not LRU (no
 * bookkeeping per hit): a flood of distinct keys cannot grow it, and the few keys real clients
 * send are made again on their next use. `undefined` is never kept as a value.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly max: number) {}

  /** The value kept for `key`; with `make`, made and kept when there is none (nothing kept when `make` throws). */
  get(key: K): V | undefined;
  get(key: K, make: (key: K) => V): V;
  get(key: K, make?: (key: K) => V): V | undefined {
    const kept = this.entries.get(key);
    if (kept !== undefined || make === undefined) return kept;
    const made = make(key);
    this.set(key, made);
    return made;
  }

  /** Keeps `value` for `key`, after emptying the map if it holds `max` entries. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, value);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
