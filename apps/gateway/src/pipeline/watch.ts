import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { encodeWatchEventProtobuf } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { GenericStore, WatchEventOut } from '../registry/generic-store';
import { serializationOf, toPartialObjectMetadata, toTable } from '../server/representation';
import type { ApiRequest } from './api-request';
import { requestTarget, requestUser } from './api-request';
import { inRequestedGroup, warningHeader } from './encode';
import { listOptions, queryBool } from './query';

/**
 * Watch streams (SPEC Events): chunked JSON lines, one-row Tables, or length-prefixed protobuf
 * frames. Streams end at `timeoutSeconds` (default: --min-request-timeout, randomized up to
 * 2x), when the client goes away, or at shutdown (`closeAll`; a watch begun after it ends at
 * once, so none holds a closing server open). A client that falls more than
 * MAX_WATCH_SEND_BUFFER behind on live events is cut off with an error (the connection is
 * destroyed, which frees its buffer at once); it re-watches from its last resourceVersion.
 *
 * Every watcher of a resource receives the same event objects (the registry parses each stored
 * event once), so an event is serialized once per representation, whatever the number of
 * watchers: the encoded bytes, framed as a chunk of the chunked transfer encoding, are kept
 * beside the event object while it lives, and the same Buffer is written to every watcher's
 * socket (no per-watcher framing, copy or string encoding).
 */
export const MAX_WATCH_SEND_BUFFER = 16 * 1024 * 1024;
/**
 * Live events that may wait for a client whose socket pushes back before it is cut off the
 * same way (upstream: a watcher's channel of 100 events). Encoded events are shared between
 * watchers, so bytes alone do not bound what thousands of unread watches hold: each queued
 * event does.
 */
export const MAX_WATCH_QUEUED_EVENTS = 1000;

/**
 * How long one event-loop turn of the WatchWriter may write (ms) before it yields to the other
 * requests' I/O; a TLS write costs tens of µs, so a turn covers a few dozen streams.
 */
const TURN_BUDGET_MS = 1;

/** A watch stream's side of the WatchWriter. */
interface PacedStream {
  /** Writes what the stream has queued (until its socket pushes back). */
  flush(): void;
}

/**
 * Writes watch events to their streams for at most TURN_BUDGET_MS per event-loop turn, never
 * all at once: one event for thousands of watchers means thousands of TLS encryptions, and done
 * in one go they would hold every other request up for that long. Between turns the event loop
 * serves other sockets' I/O, so a GET waits at most about one turn. Events that arrive for a
 * stream still waiting for its turn go out with its earlier ones in one write. A stream whose
 * socket pushes back is left out until it drains (its events wait, encrypted never and shared,
 * in its queue).
 */
class WatchWriter {
  private readonly ready = new Set<PacedStream>();
  private scheduled = false;

  /** Asks for the stream's queued events to be written soon. */
  schedule(stream: PacedStream): void {
    this.ready.add(stream);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }

  private turn(): void {
    this.scheduled = false;
    const until = performance.now() + TURN_BUDGET_MS;
    for (const stream of this.ready) {
      this.ready.delete(stream);
      stream.flush();
      if (performance.now() >= until) break;
    }
    if (this.ready.size > 0) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }
}

/**
 * The socket a response writes to: at once, or, for a request pipelined behind another on its
 * connection, once the earlier responses are done (rejects if the connection goes first).
 */
function responseSocket(res: ServerResponse): Promise<Socket> {
  if (res.socket) return Promise.resolve(res.socket);
  return new Promise((resolve, reject) => {
    const onClose = () => reject(new Error('the connection closed before the watch could start'));
    res.once('close', onClose);
    res.once('socket', (socket: Socket) => {
      res.removeListener('close', onClose);
      resolve(socket);
    });
  });
}

export interface WatchLimits {
  minRequestTimeoutSeconds: number;
  /** --max-watches-per-user: open watches one user may hold (429 beyond). */
  maxWatchesPerUser: number;
  /** --max-watches: open watches of the gateway (429 beyond). */
  maxWatches: number;
}

/** Encoded and framed watch events by event object, then by representation (see WatchStreams). */
const encodedEvents = new WeakMap<object, Map<string, Buffer>>();

const CRLF = Buffer.from('\r\n');

/**
 * `data` as one chunk of the chunked transfer encoding (`<size in hex>CRLF<data>CRLF`), the
 * framing Node's response would add on every write: framed once, an encoded event is written
 * to each watcher's socket as it is.
 */
function chunkOf(data: Buffer): Buffer {
  const head = Buffer.from(`${data.length.toString(16)}\r\n`, 'latin1');
  return Buffer.concat([head, data, CRLF], head.length + data.length + CRLF.length);
}

export class WatchStreams {
  /** Open watch streams, ended by closeAll() on shutdown. */
  private readonly open = new Set<() => void>();
  /** Open watches per user name (--max-watches-per-user). */
  private readonly perUser = new Map<string, number>();
  private closing = false;
  private readonly writer = new WatchWriter();

  constructor(private readonly opts: WatchLimits) {}

  /** Open watches of the gateway. */
  get count(): number {
    return this.open.size;
  }

  /**
   * Counts one more watch of `user` against --max-watches-per-user and --max-watches (429 with
   * Retry-After when one is reached); returns what gives it back (idempotent).
   */
  private admit(user: string): () => void {
    const held = this.perUser.get(user) ?? 0;
    if (held >= this.opts.maxWatchesPerUser) {
      throw StatusError.tooManyRequests(`too many open watches for user ${JSON.stringify(user)}: the limit is ${this.opts.maxWatchesPerUser} per user (--max-watches-per-user); close some first`, 1);
    }
    if (this.open.size >= this.opts.maxWatches) throw StatusError.tooManyRequests(`the gateway holds its maximum of ${this.opts.maxWatches} open watches (--max-watches); retry later`, 1);
    this.perUser.set(user, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.perUser.get(user) ?? 1) - 1;
      if (left > 0) this.perUser.set(user, left);
      else this.perUser.delete(user);
    };
  }

  /** Ends every open watch stream cleanly, and any begun later at once (graceful shutdown). */
  closeAll(): void {
    this.closing = true;
    for (const finish of [...this.open]) finish();
  }

  /** Serves a watch of `registry` for the request; returns the HTTP status. */
  async serve(r: ApiRequest, registry: GenericStore): Promise<number> {
    const { req, reply, info, query } = r;
    const { namespace: ns, repr, ctx } = requestTarget(r);
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
    // Framed chunks go to the socket itself (the response has sent its chunked headers and ends
    // with the last chunk); the socket outlives the watch on a kept-alive connection.
    const socket = await responseSocket(res);
    const release = this.admit(requestUser(r).username);
    let headersSent = false;
    let firstTable = true;
    /** Framed events not written yet (the writer comes by, or the socket drains). */
    const queue: Buffer[] = [];
    /** Bytes in `queue` (with what the socket buffers: at most MAX_WATCH_SEND_BUFFER once live). */
    let queuedBytes = 0;
    /** The socket pushed back: nothing is written until it drains. */
    let blocked = false;
    /**
     * Writes queued frames, corked into one write (one syscall), until the socket pushes back;
     * the rest waits in the queue. Each frame is written as it is, never copied: the socket
     * holds the Buffer every watcher shares (a per-watcher copy of unsent events made the RSS
     * of 5,000 unread watches grow from 0.5 to 1.1 GiB in the watch-load bench).
     */
    const writeQueued = () => {
      socket.cork();
      let ok = true;
      while (queue.length > 0 && ok) {
        const frame = queue.shift()!;
        queuedBytes -= frame.length;
        ok = socket.write(frame);
      }
      socket.uncork();
      return ok;
    };
    const stream: PacedStream = {
      flush: () => {
        if (closed || blocked || queue.length === 0) return;
        blocked = !writeQueued();
        if (live && socket.writableLength > MAX_WATCH_SEND_BUFFER) tooSlow();
      },
    };
    const onDrain = () => {
      blocked = false;
      if (queue.length > 0) this.writer.schedule(stream);
    };
    socket.on('drain', onDrain);
    const tooSlow = () => {
      req.log.warn({ buffered: socket.writableLength, queued: queue.length }, 'watch client too slow: stream cut off');
      abort();
    };
    let closed = false;
    const writeHeaders = () => {
      if (headersSent) return;
      headersSent = true;
      reply.hijack();
      if (ctx.warnings.length) res.setHeader('warning', warningHeader(ctx.warnings));
      res.writeHead(200, {
        // Protobuf watches are length-prefixed WatchEvent frames (upstream stream=watch).
        'content-type': serialization === 'protobuf' ? `${repr.contentType};stream=watch` : 'application/json',
        'transfer-encoding': 'chunked',
        'cache-control': 'no-cache, private',
      });
      res.flushHeaders();
    };
    const encodeOnce = (event: WatchEventOut): Buffer => {
      const inGroup = inRequestedGroup(event.object, registry.def.group, info.apiGroup) as WatchEventOut['object'];
      // Metadata-only watches (client-go metadata informers): every event's object, bookmarks too.
      const ev = { type: event.type, object: (repr.kind === 'partial' ? toPartialObjectMetadata(inGroup, repr) : inGroup) as WatchEventOut['object'] };
      return chunkOf(serialization === 'protobuf' ? encodeWatchEventProtobuf(ev.type, ev.object) : Buffer.from(JSON.stringify(ev) + '\n'));
    };
    const encodeEvent = (event: WatchEventOut): Buffer => {
      if (repr.kind === 'table' && event.type !== 'BOOKMARK' && event.type !== 'ERROR') {
        // Tables carry column definitions in a watcher's first row only: per watcher.
        const table = toTable(inRequestedGroup(event.object, registry.def.group, info.apiGroup) as KubeObject, registry.def, repr, !firstTable);
        firstTable = false;
        return chunkOf(Buffer.from(JSON.stringify({ type: event.type, object: table }) + '\n'));
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
    let handle: Awaited<ReturnType<GenericStore['watch']>>;
    try {
      handle = await registry.watch(
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
            let chunk: Buffer;
            try {
              chunk = encodeEvent(ev);
            } catch (err) {
              // An object that cannot be encoded ends the stream; the client re-watches.
              req.log.error({ err }, 'watch event encoding failed');
              finish();
              return;
            }
            queue.push(chunk);
            queuedBytes += chunk.length;
            if (live && (queue.length > MAX_WATCH_QUEUED_EVENTS || queuedBytes + socket.writableLength > MAX_WATCH_SEND_BUFFER)) return tooSlow();
            // The events of one turn go out together (one TLS record, one syscall) on a later turn.
            if (!blocked) this.writer.schedule(stream);
          },
          end: () => finish(),
        },
      );
    } catch (err) {
      release();
      throw err;
    }
    writeHeaders();
    live = true;
    const timer = setTimeout(() => handle.stop(), timeoutSeconds * 1000);
    timer.unref?.();
    const open = this.open;
    function finish() {
      if (closed) return;
      // What is queued still goes out before the end (a clean end loses no event).
      for (const frame of queue.splice(0)) socket.write(frame);
      closed = true;
      socket.removeListener('drain', onDrain);
      open.delete(finish);
      clearTimeout(timer);
      handle?.stop();
      res.end();
    }
    /** Ends the stream with an error: the socket goes, and with it the buffered bytes. */
    function abort() {
      queue.length = 0;
      queuedBytes = 0;
      finish();
      res.destroy();
    }
    open.add(finish);
    res.on('close', () => {
      release();
      socket.removeListener('drain', onDrain);
      if (!closed) {
        closed = true;
        open.delete(finish);
        clearTimeout(timer);
        handle.stop();
      }
    });
    if (this.closing) finish();
    return 200;
  }
}
