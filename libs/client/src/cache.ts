import type { KubeObject } from '@orch/apimachinery';

/** Maps an object to the index values it is found under (e.g. its namespace, its node name). */
export type IndexFunc<T> = (obj: T) => string[];

/** Name of the built-in index by namespace. */
export const NAMESPACE_INDEX = 'namespace';

/** Index function for {@link NAMESPACE_INDEX}. */
export function namespaceIndexFunc(obj: KubeObject): string[] {
  return obj.metadata.namespace ? [obj.metadata.namespace] : [];
}

/**
 * Keyed object cache with secondary indexes (upstream's thread-safe store + indexer).
 * Objects live in a `Map` by key; each index maps value → set of keys, kept in step on every
 * write, so lookups are O(1) + result size. The cache stores the objects it is given as is;
 * the informer freezes them before they get here.
 */
export class Indexer<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  /** Adds an index; existing objects are indexed at once. Throws if the name is taken. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`indexer ${JSON.stringify(name)} already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) this.indexInto(index, fn(obj), key);
  }

  /** Inserts or replaces the object under `key`. */
  set(key: string, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.reindex(key, old, obj);
  }

  /** Removes `key`; returns the object that was there. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.items.delete(key);
    this.reindex(key, old, undefined);
    return old;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  get size(): number {
    return this.items.size;
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  list(): T[] {
    return [...this.items.values()];
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  /** Objects whose index function returned `value`. Throws for an unknown index. */
  byIndex(name: string, value: string): T[] {
    return this.indexKeys(name, value).map((k) => this.items.get(k) as T);
  }

  /** Keys whose index function returned `value`. Throws for an unknown index. */
  indexKeys(name: string, value: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`index ${JSON.stringify(name)} does not exist`);
    return [...(index.get(value) ?? [])];
  }

  /** All values present in an index. */
  indexValues(name: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`index ${JSON.stringify(name)} does not exist`);
    return [...index.keys()];
  }

  private reindex(key: string, old: T | undefined, next: T | undefined): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      const oldValues = old === undefined ? [] : fn(old);
      const newValues = next === undefined ? [] : fn(next);
      if (oldValues.length === newValues.length && oldValues.every((v, i) => v === newValues[i])) continue;
      for (const v of oldValues) {
        const set = index.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) index.delete(v);
      }
      this.indexInto(index, newValues, key);
    }
  }

  private indexInto(index: Map<string, Set<string>>, values: string[], key: string): void {
    for (const v of values) {
      let set = index.get(v);
      if (!set) index.set(v, (set = new Set()));
      set.add(key);
    }
  }
}

/** Freezes `obj` and everything reachable from it; returns it. */
export function deepFreeze<T>(obj: T): T {
  if (typeof obj !== 'object' || obj === null || Object.isFrozen(obj)) return obj;
  Object.freeze(obj);
  for (const v of Object.values(obj)) deepFreeze(v);
  return obj;
}
