/**
 * A binary heap with O(log n) insert, update and delete by key (upstream internal/heap).
 * `less(a, b)` true means `a` pops before `b`.
 */
export class Heap<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  /** Inserts `item`, or replaces the item with the same key and restores the order. */
  addOrUpdate(item: T): void {
    const key = this.keyOf(item);
    const i = this.index.get(key);
    if (i !== undefined) {
      this.items[i] = item;
      this.fix(i);
      return;
    }
    this.items.push(item);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  /** Removes the item with `key`; false when absent. */
  delete(key: string): boolean {
    const i = this.index.get(key);
    if (i === undefined) return false;
    this.removeAt(i);
    return true;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    return this.items.length ? this.removeAt(0) : undefined;
  }

  /** The items in no particular order. */
  list(): readonly T[] {
    return this.items;
  }

  private removeAt(i: number): T {
    const item = this.items[i];
    const last = this.items.pop()!;
    this.index.delete(this.keyOf(item));
    if (i < this.items.length) {
      this.items[i] = last;
      this.index.set(this.keyOf(last), i);
      this.fix(i);
    }
    return item;
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  private swap(i: number, j: number): void {
    const a = this.items[i];
    const b = this.items[j];
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(this.keyOf(b), i);
    this.index.set(this.keyOf(a), j);
  }

  /** Moves item i up; true when it moved. */
  private up(i: number): boolean {
    const start = i;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i], this.items[parent])) break;
      this.swap(i, parent);
      i = parent;
    }
    return i !== start;
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const child = r < n && this.less(this.items[r], this.items[l]) ? r : l;
      if (!this.less(this.items[child], this.items[i])) return;
      this.swap(i, child);
      i = child;
    }
  }
}
