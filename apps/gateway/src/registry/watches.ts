import { FieldError, StatusError, type FieldSelector, type KubeObject, type LabelSelector } from '@orch/apimachinery';
import type { StoreEvent } from '@orch/storage';
import { EventMemo, type Subscription, type WatchCache } from '@orch/watch';
import { parseResourceVersion, tooLargeResourceVersion, type ResourceReader } from './reads';
import { parseLabels, type StoredObjects } from './stored-objects';
import type { RegistryOptions, WatchEventOut, WatchHandle, WatchOptions, WatchSink } from './store-types';

/** The objects of one store event, as one resource serves them. */
interface DecodedEvent {
  obj?: KubeObject;
  prev?: KubeObject;
}

/**
 * The watches of one resource (SPEC Events): initial events from a list, then the watch
 * cache's events from its revision, each recent store event decoded once for every watcher of
 * the resource (EventMemo), filtered per watcher by its selectors, with bookmarks.
 */
export class ResourceWatches {
  /** Parsed objects of recent watch events, shared by every watcher of this resource (not kept with the history). */
  private readonly decoded = new EventMemo<StoreEvent, { obj?: KubeObject | Promise<KubeObject>; prev?: KubeObject | Promise<KubeObject> }>();

  constructor(
    private readonly objects: StoredObjects,
    private readonly reader: ResourceReader,
    private readonly watchCache: WatchCache,
    private readonly opts: RegistryOptions,
  ) {}

  /**
   * Starts a watch (SPEC Events). Without a resourceVersion (or "0") the current objects
   * come first as ADDED events. Errors before the first event are thrown as StatusError;
   * history lost later arrives as an ERROR event with a 410 Status, then the sink ends.
   */
  async watch(namespace: string, opts: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    const labels = parseLabels(opts.labelSelector);
    const fields = this.objects.parseFields(opts.fieldSelector);
    const filtered = !labels.empty() || !fields.empty();
    const prefix = this.objects.prefix(namespace);
    const rvParam = opts.resourceVersion ?? '';
    if (opts.sendInitialEvents !== undefined) {
      if (!this.opts.watchListEnabled) {
        throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
          FieldError.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'),
        ]);
      }
      if (opts.resourceVersionMatch !== 'NotOlderThan') {
        throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
          FieldError.forbidden('resourceVersionMatch', "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ]);
      }
    } else if (opts.resourceVersionMatch) {
      throw StatusError.invalid('ListOptions', 'meta.orch.io', '', [
        FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      ]);
    }
    const initialEvents = opts.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
    let from: number;
    const initial: KubeObject[] = [];
    if (initialEvents) {
      if (rvParam && rvParam !== '0') await this.reader.waitForResourceVersion(parseResourceVersion(rvParam));
      const snapshot = await this.reader.list(namespace, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
      from = Number(snapshot.metadata.resourceVersion);
      initial.push(...snapshot.items);
      // The cache may not have reached the snapshot yet; events up to it are in the list.
      await this.watchCache.waitForRevision(from, this.opts.tooLargeResourceVersionWaitMs);
    } else {
      from = parseResourceVersion(rvParam);
      if (from > this.watchCache.currentRevision()) {
        const ok = await this.watchCache.waitForRevision(from, this.opts.tooLargeResourceVersionWaitMs);
        if (!ok) throw tooLargeResourceVersion(from, this.watchCache.currentRevision());
      }
    }

    let ended = false;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    // Events whose objects need an asynchronous conversion (a conversion webhook) are sent in
    // order through this chain; while it holds any, later events queue behind them.
    let chain: Promise<void> = Promise.resolve();
    let queued = 0;
    const end = () => {
      if (ended) return;
      ended = true;
      subscription?.unsubscribe();
      clearInterval(bookmarkTimer);
      sink.end();
    };
    for (const obj of initial) sink.send({ type: 'ADDED', object: obj });
    if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
      sink.send(this.bookmark(from, true));
    }
    let subscription: Subscription | undefined = undefined;
    // History lost (too old, or the cache reset) arrives as onError: upstream sends the 410 as
    // an ERROR event of a successful watch response, and the client relists.
    subscription = this.watchCache.subscribe(prefix, from, {
      onEvent: (event) => {
        // Events up to the start revision are in the initial list already (the cache may lag it).
        if (ended || event.revision <= from) return;
        const out = this.toWatchEvent(event, filtered, labels, fields);
        if (!(out instanceof Promise) && queued === 0) {
          if (out) sink.send(out);
          return;
        }
        queued++;
        chain = chain
          .then(async () => {
            const ev = await out;
            if (!ended && ev) sink.send(ev);
          })
          .catch((err: unknown) => {
            if (ended) return;
            const status = err instanceof StatusError ? err : StatusError.internal((err as Error).message);
            sink.send({ type: 'ERROR', object: status.toStatus() as unknown as Record<string, unknown> });
            end();
          })
          .finally(() => queued--);
      },
      onError: (err) => {
        if (ended) return;
        sink.send({ type: 'ERROR', object: StatusError.gone(err.message).toStatus() as unknown as Record<string, unknown> });
        end();
      },
    });
    if (opts.allowWatchBookmarks) {
      // Only a revision this watcher has been handed every event up to.
      bookmarkTimer = setInterval(() => {
        // A bookmark never overtakes events still being converted.
        if (!ended && subscription && queued === 0) sink.send(this.bookmark(Math.max(from, subscription.progress()), false));
      }, this.opts.bookmarkIntervalMs);
      bookmarkTimer.unref?.();
    }
    return { stop: end };
  }

  private bookmark(revision: number, initialEventsEnd: boolean): WatchEventOut {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' };
    return { type: 'BOOKMARK', object: { kind: this.objects.def.kind, apiVersion: this.objects.apiVersion, metadata } };
  }

  /** The watch event of a store event for one watcher (a promise when its objects need an asynchronous conversion). */
  private toWatchEvent(event: StoreEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): WatchEventOut | undefined | Promise<WatchEventOut | undefined> {
    // The previous state is needed for deletions, and for filtered watchers to see objects leave the selection.
    const obj = event.type === 'delete' ? undefined : this.eventObject(event, false);
    const prev = event.type === 'delete' || (filtered && event.type !== 'create') ? this.eventObject(event, true) : undefined;
    if (obj instanceof Promise || prev instanceof Promise) return Promise.all([obj, prev]).then(([o, p]) => this.selectEvent(event, { obj: o, prev: p }, filtered, labels, fields));
    return this.selectEvent(event, { obj, prev }, filtered, labels, fields);
  }

  /**
   * The new (or, `previous`, the old) object of a store event in this resource's version,
   * decoded once for the watchers of this resource while the event is recent (a promise while it
   * is being converted). A deleted object is reported with the revision of its deletion.
   */
  private eventObject(event: StoreEvent, previous: boolean): KubeObject | Promise<KubeObject> | undefined {
    const value = previous ? event.prevValue : event.value;
    if (value === undefined) return undefined;
    let cached = this.decoded.get(event);
    if (!cached) this.decoded.set(event, (cached = {}), (event.value?.length ?? 0) + (event.prevValue?.length ?? 0));
    const have = previous ? cached.prev : cached.obj;
    if (have) return have;
    const parsed = this.objects.parse(value, event.revision);
    let out: KubeObject | Promise<KubeObject>;
    if (parsed.apiVersion === this.objects.apiVersion) {
      this.objects.kind.strategy.onRead?.(parsed);
      out = parsed;
    } else {
      out = this.objects.served([parsed]).then((objs) => objs[0]);
    }
    if (previous) cached.prev = out;
    else cached.obj = out;
    return out;
  }

  private selectEvent(event: StoreEvent, d: DecodedEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): WatchEventOut | undefined {
    if (event.type === 'delete') {
      const prev = d.prev!;
      return !filtered || this.objects.matches(prev, labels, fields) ? { type: 'DELETED', object: prev } : undefined;
    }
    const obj = d.obj!;
    if (!filtered) return { type: event.type === 'create' ? 'ADDED' : 'MODIFIED', object: obj };
    const now = this.objects.matches(obj, labels, fields);
    if (event.type === 'create') return now ? { type: 'ADDED', object: obj } : undefined;
    const before = d.prev ? this.objects.matches(d.prev, labels, fields) : false;
    if (now && before) return { type: 'MODIFIED', object: obj };
    if (now) return { type: 'ADDED', object: obj };
    // Leaving the selection is a DELETED to this watcher (with the new state).
    if (before) return { type: 'DELETED', object: obj };
    return undefined;
  }
}
