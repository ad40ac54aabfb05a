/** How long an unobserved create is waited for before the cache is trusted again (upstream 5 min; shorter here). */
const EXPECTATION_TIMEOUT_MS = 30_000;

/**
 * Creates an owner is still waiting to see in its informer cache (upstream
 * ControllerExpectations, creates only). While some are pending and not expired, the cache
 * may miss objects just created, and a sync must not act on it (it would create twice).
 * Updates need no expectations: a stale resourceVersion is refused with 409.
 */
export class CreateExpectations {
  private readonly pending = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records that `owner` created `name`. */
  expect(owner: string, name: string): void {
    let names = this.pending.get(owner);
    if (!names) this.pending.set(owner, (names = new Map()));
    names.set(name, this.now() + EXPECTATION_TIMEOUT_MS);
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
