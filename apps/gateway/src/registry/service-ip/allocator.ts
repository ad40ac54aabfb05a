import { KeyExistsError, KeyNotFoundError, RevisionConflictError, type Store } from '@orch/storage';
import { dynamicOrder, type Bands } from './ranges';

/** The object an allocated value belongs to (upstream IPAddress `spec.parentRef`). */
export interface ParentRef {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

/**
 * One allocation as stored under `<keyPrefix><value>`, shaped like upstream's
 * `networking.orch.io/v1` IPAddress (name = the value, `spec.parentRef` = the owner); node
 * port records have the same shape with kind `NodePortAllocation`. Internal state of the
 * gateway, not served by the API.
 */
export interface AllocationRecord {
  apiVersion: string;
  kind: string;
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> };
  spec: { parentRef: ParentRef };
}

/** A record read back from the store. */
export interface StoredAllocation {
  value: string;
  owner: ParentRef;
  createdAt: number;
  modRevision: number;
}

export type AllocationFailure = 'full' | 'allocated' | 'not-in-range';

/** Allocation failed; `message` is upstream's wording. */
export class AllocationError extends Error {
  constructor(
    readonly reason: AllocationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** What distinguishes the cluster-IP allocator from the node-port allocator. */
export interface RangeSpec {
  /** Store key prefix of the records, e.g. `/registry/orch.io/ipaddresses/`. */
  keyPrefix: string;
  bands: Bands;
  /** The value at an offset (an IP or port as text). */
  valueAt(offset: number): string;
  /** The offset of a value, undefined when it is not in the range. */
  offsetOf(value: string): number | undefined;
  /** Message of a value outside the range (upstream ErrNotInRange). */
  notInRange(value: string): string;
  /** Message of a value held by someone else (upstream ErrAllocated). */
  allocatedMessage: string;
  apiVersion: string;
  kind: string;
  labels?: Record<string, string>;
}

export const sameOwner = (a: ParentRef, b: ParentRef): boolean =>
  a.group === b.group && a.resource === b.resource && a.namespace === b.namespace && a.name === b.name;

/**
 * Allocates values of one range with the state in the store, so every gateway replica sees
 * the same allocations: a value is taken by creating its record, which fails with
 * KeyExistsError when another request (on any replica) holds it. No in-memory state is
 * authoritative; a local set of values seen taken only steers dynamic allocation away from
 * them and is refreshed from the store when the range looks full.
 */
export class RangeAllocator {
  private readonly taken = new Set<string>();

  constructor(
    private readonly store: Store,
    readonly spec: RangeSpec,
    private readonly random: () => number = Math.random,
  ) {}

  key(value: string): string {
    return this.spec.keyPrefix + value;
  }

  /**
   * Takes one requested value for owner. With dryRun nothing is written; it only checks that
   * the value is in the range and free. Throws AllocationError `not-in-range` or `allocated`.
   */
  async allocate(value: string, owner: ParentRef, dryRun = false): Promise<void> {
    if (this.spec.offsetOf(value) === undefined) throw new AllocationError('not-in-range', this.spec.notInRange(value));
    if (!(await this.tryTake(value, owner, dryRun))) throw new AllocationError('allocated', this.spec.allocatedMessage);
  }

  /** Takes a free value, preferring the upper band; throws AllocationError `full` when none is left. */
  async allocateNext(owner: ParentRef, dryRun = false): Promise<string> {
    for (let pass = 0; pass < 2; pass++) {
      for (const offset of dynamicOrder(this.spec.bands, this.random)) {
        const value = this.spec.valueAt(offset);
        if (this.taken.has(value)) continue;
        if (await this.tryTake(value, owner, dryRun)) return value;
      }
      // Values released elsewhere are still in the local set: re-read it once before giving up.
      if (pass === 0) await this.list();
    }
    throw new AllocationError('full', 'range is full');
  }

  /**
   * Frees value if owner holds it (a record of another owner is left alone). Returns true
   * when this call deleted the record.
   */
  async release(value: string, owner: ParentRef): Promise<boolean> {
    for (;;) {
      const kv = await this.store.get(this.key(value));
      if (!kv) {
        this.taken.delete(value);
        return false;
      }
      const rec = parseRecord(kv.value);
      if (!rec || !sameOwner(rec.spec.parentRef, owner)) return false;
      try {
        await this.store.delete(kv.key, kv.modRevision);
        this.taken.delete(value);
        return true;
      } catch (err) {
        if (err instanceof KeyNotFoundError) return false;
        if (err instanceof RevisionConflictError) continue;
        throw err;
      }
    }
  }

  /** Every record in the store (and refreshes the local set of taken values from it). */
  async list(): Promise<StoredAllocation[]> {
    const page = await this.store.list(this.spec.keyPrefix);
    const out: StoredAllocation[] = [];
    this.taken.clear();
    for (const kv of page.items) {
      const value = kv.key.slice(this.spec.keyPrefix.length);
      this.taken.add(value);
      const rec = parseRecord(kv.value);
      out.push({
        value,
        owner: rec?.spec.parentRef ?? { group: '', resource: '', namespace: '', name: '' },
        createdAt: rec ? Date.parse(rec.metadata.creationTimestamp) || 0 : 0,
        modRevision: kv.modRevision,
      });
    }
    return out;
  }

  /** The owner of value, undefined when free. */
  async ownerOf(value: string): Promise<ParentRef | undefined> {
    const kv = await this.store.get(this.key(value));
    return kv ? parseRecord(kv.value)?.spec.parentRef : undefined;
  }

  /** Deletes a record only if it is unchanged since modRevision (repair of leaks). */
  async forget(value: string, modRevision: number): Promise<boolean> {
    try {
      await this.store.delete(this.key(value), modRevision);
      this.taken.delete(value);
      return true;
    } catch (err) {
      if (err instanceof KeyNotFoundError || err instanceof RevisionConflictError) return false;
      throw err;
    }
  }

  /** Creates the record of value unless present; false when it is present (any owner). */
  private async tryTake(value: string, owner: ParentRef, dryRun: boolean): Promise<boolean> {
    if (dryRun) {
      const present = !!(await this.store.get(this.key(value)));
      if (present) this.taken.add(value);
      return !present;
    }
    try {
      await this.store.create(this.key(value), JSON.stringify(this.record(value, owner)));
      this.taken.add(value);
      return true;
    } catch (err) {
      if (err instanceof KeyExistsError) {
        this.taken.add(value);
        return false;
      }
      throw err;
    }
  }

  private record(value: string, owner: ParentRef): AllocationRecord {
    return {
      apiVersion: this.spec.apiVersion,
      kind: this.spec.kind,
      metadata: { name: value, creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), ...(this.spec.labels ? { labels: this.spec.labels } : {}) },
      spec: { parentRef: owner },
    };
  }
}

function parseRecord(value: string): AllocationRecord | undefined {
  try {
    const rec = JSON.parse(value) as AllocationRecord;
    return rec?.spec?.parentRef ? rec : undefined;
  } catch {
    return undefined;
  }
}
