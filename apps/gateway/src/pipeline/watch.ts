import { encodeWatchEventProtobuf } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { GenericStore, WatchEventOut } from '../registry/generic-store';
import { serializationOf, toPartialObjectMetadata, toTable } from '../server/representation';
import type { ApiRequest } from './api-request';
import { requestTarget } from './api-request';
import { inRequestedGroup } from './encode';
import { listOptions, queryBool } from './query';

/**
 * Watch streams (SPEC Events): chunked JSON lines, one-row Tables, or length-prefixed protobuf
 * frames. Streams end at `timeoutSeconds` (default: --min-request-timeout, randomized up to
 * 2x), when the client goes away, or at shutdown (`closeAll`). A client that falls more than
 * MAX_WATCH_SEND_BUFFER behind on live events is cut off with an error (the connection is
 * destroyed, which frees its buffer at once); it re-watches from its last resourceVersion.
 *
 * Every watcher of a resource receives the same event objects (the registry parses each stored
 * event once), so an event is serialized once per representation, whatever the number of
 * watchers: the encoded bytes are kept beside the event object while it lives.
 */
export const MAX_WATCH_SEND_BUFFER = 16 * 1024 * 1024;

/** Encoded watch events by event object, then by representation (see WatchStreams). */
const encodedEvents = new WeakMap<object, Map<string, string | Buffer>>();

export class WatchStreams {
  /** Open watch streams, ended by closeAll() on shutdown. */
  private readonly open = new Set<() => void>();

  constructor(private readonly opts: { minRequestTimeoutSeconds: number }) {}

  /** Ends every open watch stream cleanly (graceful shutdown). */
  closeAll(): void {
    for (const finish of [...this.open]) finish();
  }

  /** Serves a watch of `registry` for the request; returns the HTTP status. */
  async serve(r: ApiRequest, registry: GenericStore): Promise<number> {
    const { req, reply, info, query } = r;
    const { namespace: ns, repr } = requestTarget(r);
    // `watch` itself (request-info read it leniently to decide the verb): a bad value is a 400 here.
    queryBool(query, 'watch');
    if (repr.kind === 'partial' && repr.as !== 'PartialObjectMetadata') {
      throw new StatusError(406, 'NotAcceptable', `you requested ${repr.as}, but a watch streams single objects: ask for PartialObjectMetadata`);
    }
    const serialization = serializationOf(repr);
    const opts = listOptions(query);
    // GET .../<name>?watch=1 watches one object.
    const fieldSelector = info.name ? [opts.fieldSelector, `metadata.name=${info.name}`].filter(Boolean).join(',') : opts.fieldSelector;
    const timeoutParam = query.get('timeoutSeconds');
    let timeoutSeconds: number;
    if (timeoutParam !== null) {
      timeoutSeconds = Number(timeoutParam);
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0) throw StatusError.badRequest(`invalid timeoutSeconds: ${JSON.stringify(timeoutParam)}`);
    } else {
      const min = this.opts.minRequestTimeoutSeconds;
      timeoutSeconds = Math.floor(min * (1 + Math.random()));
    }
    const res = reply.raw;
    let headersSent = false;
    let firstTable = true;
    let closed = false;
    const writeHeaders = () => {
      if (headersSent) return;
      headersSent = true;
      reply.hijack();
      res.writeHead(200, {
        // Protobuf watches are length-prefixed WatchEvent frames (upstream stream=watch).
        'content-type': serialization === 'protobuf' ? `${repr.contentType};stream=watch` : 'application/json',
        'transfer-encoding': 'chunked',
        'cache-control': 'no-cache, private',
      });
      res.flushHeaders();
    };
    const encodeOnce = (event: WatchEventOut): string | Buffer => {
      const inGroup = inRequestedGroup(event.object, registry.def.group, info.apiGroup) as WatchEventOut['object'];
      // Metadata-only watches (client-go metadata informers): every event's object, bookmarks too.
      const ev = { type: event.type, object: (repr.kind === 'partial' ? toPartialObjectMetadata(inGroup, repr) : inGroup) as WatchEventOut['object'] };
      // Bytes, not a string: a string would be UTF-8 encoded again on every watcher's write.
      return serialization === 'protobuf' ? encodeWatchEventProtobuf(ev.type, ev.object) : Buffer.from(JSON.stringify(ev) + '\n');
    };
    const encodeEvent = (event: WatchEventOut): string | Buffer => {
      if (repr.kind === 'table' && event.type !== 'BOOKMARK' && event.type !== 'ERROR') {
        // Tables carry column definitions in a watcher's first row only: per watcher.
        const table = toTable(inRequestedGroup(event.object, registry.def.group, info.apiGroup) as KubeObject, registry.def, repr, !firstTable);
        firstTable = false;
        return JSON.stringify({ type: event.type, object: table }) + '\n';
      }
      // The representation's identity: its kind, serialization and (metadata-only) group/version.
      const key = `${event.type} ${repr.kind} ${serialization} ${repr.kind === 'partial' ? `${repr.group}/${repr.version}` : ''} ${info.apiGroup}`;
      let byRepr = encodedEvents.get(event.object);
      const hit = byRepr?.get(key);
      if (hit !== undefined) return hit;
      const encoded = encodeOnce(event);
      if (!byRepr) encodedEvents.set(event.object, (byRepr = new Map()));
      byRepr.set(key, encoded);
      return encoded;
    };
    // Initial events are written in one burst before the watch goes live: the bound applies after.
    let live = false;
    const handle = await registry.watch(
      ns,
      {
        labelSelector: opts.labelSelector,
        fieldSelector,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
        allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks') ?? false,
        sendInitialEvents: queryBool(query, 'sendInitialEvents'),
      },
      {
        send: (ev) => {
          if (closed) return;
          writeHeaders();
          let chunk: string | Buffer;
          try {
            chunk = encodeEvent(ev);
          } catch (err) {
            // An object that cannot be encoded ends the stream; the client re-watches.
            req.log.error({ err }, 'watch event encoding failed');
            finish();
            return;
          }
          // Events of one tick (one bus batch) go out as one TLS record and one syscall.
          if (!res.writableCorked) {
            res.cork();
            process.nextTick(() => res.uncork());
          }
          const ok = res.write(chunk);
          if (!ok && live && res.writableLength > MAX_WATCH_SEND_BUFFER) {
            req.log.warn({ buffered: res.writableLength }, 'watch client too slow: stream cut off');
            abort();
          }
        },
        end: () => finish(),
      },
    );
    writeHeaders();
    live = true;
    const timer = setTimeout(() => handle.stop(), timeoutSeconds * 1000);
    timer.unref?.();
    const open = this.open;
    function finish() {
      if (closed) return;
      closed = true;
      open.delete(finish);
      clearTimeout(timer);
      handle?.stop();
      res.end();
    }
    /** Ends the stream with an error: the socket goes, and with it the buffered bytes. */
    function abort() {
      finish();
      res.destroy();
    }
    open.add(finish);
    res.on('close', () => {
      if (!closed) {
        closed = true;
        open.delete(finish);
        clearTimeout(timer);
        handle.stop();
      }
    });
    return 200;
  }
}
