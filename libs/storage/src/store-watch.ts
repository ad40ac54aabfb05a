import type { StoreEvent, WatchCallbacks, WatchHandle } from './store';

/**
 * The part every Store's watch shares: events reach the consumer in order until the watch
 * stops, and a watch ends with at most one onError. stop() and fail() may be called any number
 * of times; nothing reaches the consumer after either; a throwing onEvents fails the watch with
 * that error. A store subclasses it with how its feed is read and released.
 */
export class StoreWatch implements WatchHandle {
  private ended = false;

  constructor(
    /** Every event up to this revision has been delivered (or was not the watch's). */
    public delivered: number,
    private readonly callbacks: WatchCallbacks,
    /** Called once, on the first stop() or fail(): the store forgets the watch. */
    private readonly onStop: () => void,
  ) {}

  get stopped(): boolean {
    return this.ended;
  }

  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.onStop();
    this.release();
  }

  /** Ends the watch with err, the consumer's one terminal event (nothing when already stopped). */
  fail(err: Error): void {
    if (this.ended) return;
    this.stop();
    this.callbacks.onError(err);
  }

  /**
   * Hands events (all > delivered, in revision order) to the consumer and moves delivered to
   * upTo (default: the last event's revision), also when there is nothing to hand over.
   */
  deliver(events: StoreEvent[], upTo = events.length > 0 ? events[events.length - 1].revision : this.delivered): void {
    this.delivered = upTo;
    if (events.length === 0 || this.ended) return;
    try {
      this.callbacks.onEvents(events);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Releases the store's feed for this watch (a stream, a subscription); runs once, on stop. */
  protected release(): void {}
}
