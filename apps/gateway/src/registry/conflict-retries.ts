import { StatusError } from '@orch/apimachinery';
import { Backoff, sleep } from '@orch/client';

/**
 * How an unconditional write (a patch or update without resourceVersion, a delete without
 * preconditions) retries when another write landed between its read and its write. Upstream's
 * GuaranteedUpdate re-reads and re-applies until it succeeds; here each retry first waits a
 * jittered pause that grows with every lost race, so many writers of one object take turns
 * instead of colliding in lockstep. `maxAttempts` is only a safety net against livelock:
 * reaching it is a 429 with Retry-After (nothing was written; clients retry), never a 409.
 */
export interface ConflictRetryPolicy {
  maxAttempts: number;
  /** Pause before the first retry; each later one doubles it up to maxDelayMs, plus up to 100% jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_CONFLICT_RETRY: ConflictRetryPolicy = { maxAttempts: 100, initialDelayMs: 1, maxDelayMs: 100 };

/** The attempts of one write (see ConflictRetryPolicy). */
export class ConflictRetries {
  private attempts = 1;
  private readonly backoff: Backoff;

  constructor(
    private readonly policy: ConflictRetryPolicy,
    private readonly what: string,
  ) {
    this.backoff = new Backoff({ initialMs: policy.initialDelayMs, maxMs: policy.maxDelayMs, factor: 2, jitter: 1 });
  }

  /** Waits before the next attempt, or throws 429 when the attempts are used up. */
  async next(): Promise<void> {
    if (++this.attempts > this.policy.maxAttempts) {
      throw StatusError.tooManyRequests(`${this.what} was changed by other writers during each of ${this.policy.maxAttempts} attempts; nothing was written, please try again`, 1);
    }
    await sleep(this.backoff.next());
  }
}
