/**
 * How long expectations may stay unfulfilled before the cache is trusted again (upstream
 * ExpectationsTimeout, 5 min): a lost watch event must not block a controller forever. The one
 * timeout of every kind of expectation below.
 */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Record {
  add: number;
  del: number;
  timestamp: number;
}

/**
 * upstream ControllerExpectations: per controller key, how many creations and deletions it
 * issued that its informers have not seen yet. A controller syncs (creates or deletes) only
 * when its expectations are satisfied, so a slow watch never causes double creates.
 * Records older than {@link EXPECTATIONS_TIMEOUT_MS} count as satisfied (a lost event must
 * not block a controller forever).
 */
export class ControllerExpectations {
  private readonly records = new Map<string, Record>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when nothing is pending for `key` (or no record, or the record expired). */
  satisfied(key: string): boolean {
    const r = this.records.get(key);
    if (!r) return true;
    if (r.add <= 0 && r.del <= 0) return true;
    return this.now() - r.timestamp > EXPECTATIONS_TIMEOUT_MS;
  }

  /** Expects `adds` creations and `dels` deletions, replacing any record (upstream SetExpectations). */
  expect(key: string, adds: number, dels: number): void {
    this.records.set(key, { add: adds, del: dels, timestamp: this.now() });
  }

  /** Expects `adds` creations (and no deletions), replacing any record. */
  expectCreations(key: string, adds: number): void {
    this.expect(key, adds, 0);
  }

  /** Expects `dels` deletions (and no creations), replacing any record. */
  expectDeletions(key: string, dels: number): void {
    this.expect(key, 0, dels);
  }

  /** One creation was seen (or will never happen). */
  creationObserved(key: string): void {
    const r = this.records.get(key);
    if (r) r.add--;
  }

  /** One deletion was seen (or will never happen). */
  deletionObserved(key: string): void {
    const r = this.records.get(key);
    if (r) r.del--;
  }

  /** Pending creations and deletions of `key` (for tests and logs). */
  pending(key: string): { add: number; del: number } | undefined {
    const r = this.records.get(key);
    return r && { add: r.add, del: r.del };
  }

  /** Forgets `key` (its controller was deleted). */
  delete(key: string): void {
    this.records.delete(key);
  }
}

/**
 * upstream UIDTrackingControllerExpectations: deletions are tracked by the deleted objects'
 * keys, so a deletion observed twice (update with deletionTimestamp, then delete) counts once.
 */
export class UIDTrackingExpectations extends ControllerExpectations {
  private readonly deleting = new Map<string, Set<string>>();

  /** Expects the deletion of exactly `podKeys` (and `adds` creations). */
  expectDeletionsOf(key: string, podKeys: string[], adds = 0): void {
    this.deleting.set(key, new Set(podKeys));
    this.expect(key, adds, podKeys.length);
  }

  /** The object `podKey` is gone or going; counts only if it was expected and not yet seen. */
  deletionObservedOf(key: string, podKey: string): void {
    const set = this.deleting.get(key);
    if (!set?.delete(podKey)) return;
    this.deletionObserved(key);
  }

  override delete(key: string): void {
    this.deleting.delete(key);
    super.delete(key);
  }
}

/**
 * Creations by name an owner is still waiting to see in its informer cache (upstream
 * ControllerExpectations, creates only, keyed by the created objects' names as the
 * EndpointSlice controllers need). While some are pending and not expired, the cache may miss
 * objects just created, and a sync must not act on it (it would create twice). Updates need
 * no expectations: a stale resourceVersion is refused with 409.
 */
export class CreateExpectations {
  private readonly pending = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records that `owner` created `name`. */
  expect(owner: string, name: string): void {
    let names = this.pending.get(owner);
    if (!names) this.pending.set(owner, (names = new Map()));
    names.set(name, this.now() + EXPECTATIONS_TIMEOUT_MS);
  }

  /** The informer delivered `name` of `owner`. */
  observe(owner: string, name: string): void {
    const names = this.pending.get(owner);
    if (!names) return;
    names.delete(name);
    if (names.size === 0) this.pending.delete(owner);
  }

  /** True when the cache can be trusted for `owner`: nothing pending, or only expired entries. */
  satisfied(owner: string): boolean {
    const names = this.pending.get(owner);
    if (!names) return true;
    const now = this.now();
    for (const deadline of names.values()) if (deadline > now) return false;
    this.pending.delete(owner);
    return true;
  }

  /** Forgets `owner` (it was deleted). */
  forget(owner: string): void {
    this.pending.delete(owner);
  }
}
