import { FieldError, StatusError, type FieldSelector, type KubeObject, type LabelSelector } from '@orch/apimachinery';
import type { KeyValue, StoreEvent } from '@orch/storage';
import { EventMemo, type Subscription, type WatchCache } from '@orch/watch';
import { parseResourceVersion, tooLargeResourceVersion, type ResourceReader } from './reads';
import { parseLabels, type StoredObjects } from './stored-objects';
import { StoredText, selectsOnMetadata } from './stored-text';
import type { RegistryOptions, TextWatchEvent, WatchEventOut, WatchHandle, WatchOptions, WatchSink } from './store-types';

/** The stored texts of one store event (null: the value does not read as stored; the event takes the object path). */
interface EventTexts {
  obj?: StoredText | null;
  prev?: StoredText | null;
  /**
   * The watch event of every watcher without selectors, made by the first of them (the same for
   * all: one event object, one frame); null when it sends none.
   */
  unfiltered?: TextWatchEvent | null | typeof PARSE;
}

/** What a watch event is made of: its type and the new or old state of the object. */
interface Selected<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  of: T;
}

/**
 * The event a watcher receives of a store event (SPEC Events), given the object's new state
 * (`obj`, not for deletions) and its old one (`prev`: deletions, and updates for a filtered
 * watcher, which sees an object enter or leave its selection), in either form.
 */
function selectEvent<T>(type: StoreEvent['type'], obj: T | undefined, prev: T | undefined, filtered: boolean, matches: (o: T) => boolean): Selected<T> | undefined {
  if (type === 'delete') return prev !== undefined && (!filtered || matches(prev)) ? { type: 'DELETED', of: prev } : undefined;
  if (obj === undefined) return undefined;
  if (!filtered) return { type: type === 'create' ? 'ADDED' : 'MODIFIED', of: obj };
  const now = matches(obj);
  if (type === 'create') return now ? { type: 'ADDED', of: obj } : undefined;
  const before = prev !== undefined && matches(prev);
  if (now && before) return { type: 'MODIFIED', of: obj };
  if (now) return { type: 'ADDED', of: obj };
  // Leaving the selection is a DELETED to this watcher (with the new state).
  if (before) return { type: 'DELETED', of: obj };
  return undefined;
}

/** textEvent's answer for an event whose stored values do not read as stored. */
const PARSE = Symbol('parse');

/**
 * The watches of one resource (SPEC Events): initial events from a list, then the watch
 * cache's events from its revision, filtered per watcher by its selectors, with bookmarks.
 *
 * Events go out in one of two forms, each made once per recent store event for every watcher of
 * the resource (EventMemo): as the stored text with its resourceVersion spliced in (StoredText),
 * to sinks that take text when the resource serves its stored form as it is (no onRead, no
 * conversion) and the selectors read off the stored metadata (labels, metadata.name,
 * metadata.namespace); else as the parsed object.
 */
export class ResourceWatches {
  /** Parsed objects of recent watch events, shared by every watcher of this resource (not kept with the history). */
  private readonly decoded = new EventMemo<StoreEvent, { obj?: KubeObject | Promise<KubeObject>; prev?: KubeObject | Promise<KubeObject> }>();
  /** Stored texts of recent watch events, and their watch event for watchers without selectors, likewise. */
  private readonly texts = new EventMemo<StoreEvent, EventTexts>();

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
    // Events as stored text where it is what the object path would serve (see the class comment).
    const textual = sink.acceptsText === true && !this.objects.kind.strategy.onRead && this.objects.storageApiVersion === this.objects.apiVersion && selectsOnMetadata(fields);
    let from: number;
    let initial: WatchEventOut[] = [];
    if (initialEvents) {
      if (rvParam && rvParam !== '0') await this.reader.waitForResourceVersion(parseResourceVersion(rvParam));
      ({ from, events: initial } = await this.snapshotEvents(namespace, opts, textual, filtered, labels, fields));
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
    for (const ev of initial) sink.send(ev);
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
        const text = textual ? this.textEvent(event, filtered, labels, fields) : PARSE;
        const out = text !== PARSE ? text : this.toWatchEvent(event, filtered, labels, fields);
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

  /**
   * The snapshot a watch with initial events starts from: its revision, and its objects in the
   * selection as ADDED events (a textual watch's as stored text where they read as stored).
   */
  private async snapshotEvents(namespace: string, opts: WatchOptions, textual: boolean, filtered: boolean, labels: LabelSelector, fields: FieldSelector): Promise<{ from: number; events: WatchEventOut[] }> {
    if (!textual) {
      const snapshot = await this.reader.list(namespace, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
      return { from: Number(snapshot.metadata.resourceVersion), events: snapshot.items.map((object) => ({ type: 'ADDED', object })) };
    }
    const snapshot = await this.reader.list(namespace, {}, true);
    const events: WatchEventOut[] = [];
    for (const kv of snapshot.items as unknown as KeyValue[]) {
      const text = this.objects.readsVerbatim([kv]) ? StoredText.of(kv.value, kv.modRevision) : undefined;
      if (text) {
        if (!filtered || text.matches(labels, fields, this.objects.namespaced)) events.push({ type: 'ADDED', json: text });
        continue;
      }
      const object = await this.objects.decode(kv);
      if (!filtered || this.objects.matches(object, labels, fields)) events.push({ type: 'ADDED', object });
    }
    return { from: Number(snapshot.metadata.resourceVersion), events };
  }

  /** The watch event of a store event for one watcher, as stored text; PARSE when a value it needs does not read as stored. */
  private textEvent(event: StoreEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): TextWatchEvent | undefined | typeof PARSE {
    if (filtered) return this.selectText(event, true, labels, fields);
    const texts = this.textsOf(event);
    if (texts.unfiltered === undefined) texts.unfiltered = this.selectText(event, false, labels, fields) ?? null;
    return texts.unfiltered ?? undefined;
  }

  /** The memo entry of a store event's texts, made when there is none. */
  private textsOf(event: StoreEvent): EventTexts {
    let texts = this.texts.get(event);
    if (!texts) this.texts.set(event, (texts = {}), (event.value?.length ?? 0) + (event.prevValue?.length ?? 0));
    return texts;
  }

  private selectText(event: StoreEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): TextWatchEvent | undefined | typeof PARSE {
    const obj = event.type === 'delete' ? undefined : this.storedText(event, false);
    const prev = event.type === 'delete' || (filtered && event.type !== 'create') ? this.storedText(event, true) : undefined;
    if (obj === null || prev === null) return PARSE;
    const selected = selectEvent(event.type, obj, prev, filtered, (t) => t.matches(labels, fields, this.objects.namespaced));
    return selected && { type: selected.type, json: selected.of };
  }

  /**
   * The new (or, `previous`, the old) state of a store event as stored text, made once for the
   * watchers of this resource while the event is recent; null when the value does not read as
   * stored. A deleted object is reported with the revision of its deletion.
   */
  private storedText(event: StoreEvent, previous: boolean): StoredText | null | undefined {
    const value = previous ? event.prevValue : event.value;
    if (value === undefined) return undefined;
    const cached = this.textsOf(event);
    let have = previous ? cached.prev : cached.obj;
    if (have === undefined) {
      have = this.objects.readsVerbatim([{ value }]) ? (StoredText.of(value, event.revision) ?? null) : null;
      if (previous) cached.prev = have;
      else cached.obj = have;
    }
    return have;
  }

  /** The watch event of a store event for one watcher, as objects (a promise when its objects need an asynchronous conversion). */
  private toWatchEvent(event: StoreEvent, filtered: boolean, labels: LabelSelector, fields: FieldSelector): WatchEventOut | undefined | Promise<WatchEventOut | undefined> {
    // The previous state is needed for deletions, and for filtered watchers to see objects leave the selection.
    const obj = event.type === 'delete' ? undefined : this.eventObject(event, false);
    const prev = event.type === 'delete' || (filtered && event.type !== 'create') ? this.eventObject(event, true) : undefined;
    const select = (o: KubeObject | undefined, p: KubeObject | undefined): WatchEventOut | undefined => {
      const selected = selectEvent(event.type, o, p, filtered, (x) => this.objects.matches(x, labels, fields));
      return selected && { type: selected.type, object: selected.of };
    };
    if (obj instanceof Promise || prev instanceof Promise) return Promise.all([obj, prev]).then(([o, p]) => select(o, p));
    return select(obj, prev);
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
}
