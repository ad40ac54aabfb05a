import type { ServerResponse } from 'node:http';
import { constants as http2Constants, type Http2ServerResponse, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { encodeWatchEventProtobuf } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { overHttp2 } from '@orch/server-common';
import type { GenericStore, ObjectWatchEvent, TextWatchEvent, WatchEventOut, WatchHandle, WatchSink } from '../registry/generic-store';
import type { StoredText } from '../registry/stored-text';
import { serializationOf, toPartialObjectMetadata, toTable, type Representation } from '../server/representation';
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
 * watchers (a Table watcher's first row, which carries the column definitions, is its own): the encoded bytes, framed as a chunk of the chunked transfer encoding, are kept
 * beside the event object while it lives, and the same Buffer is written to every watcher's
 * socket (no per-watcher framing, copy or string encoding). Over HTTP/2 the stream carries the
 * same bytes without the chunk framing (a view of the framed Buffer, made once per event, written
 * as DATA on each watcher's stream): Node's session writes the DATA frames of all the streams of
 * a connection written in one turn with one TLS write.
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
 * What a watch response writes its events to: over HTTP/2 its stream; else its socket, at once,
 * or, for a request pipelined behind another on its connection, once the earlier responses are
 * done (rejects if the connection goes first).
 */
function responseOutput(res: ServerResponse | Http2ServerResponse): Promise<WatchOutput> {
  if (overHttp2(res)) return Promise.resolve(res.stream);
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
/** The bytes of framed events without their chunk framing (HTTP/2 watchers), by framed event. */
const unframedEvents = new WeakMap<Buffer, Buffer>();

/** The socket (HTTP/1.1, chunk-framed events) or the HTTP/2 stream (unframed events) of a watch. */
type WatchOutput = Socket | ServerHttp2Stream;

/** Framed JSON watch events of stored texts, by text and event type. */
const textEvents = new WeakMap<StoredText, Partial<Record<TextWatchEvent['type'], Buffer>>>();

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

/**
 * The data of a chunk chunkOf or textFrame framed (a view: the bytes are the frame's), made once
 * per frame for every HTTP/2 watcher.
 */
function unframed(frame: Buffer): Buffer {
  let data = unframedEvents.get(frame);
  if (!data) unframedEvents.set(frame, (data = frame.subarray(frame.indexOf(0x0a) + 1, frame.length - CRLF.length)));
  return data;
}

/**
 * The framed JSON watch event of a stored text, made once per text and type for every watcher:
 * the bytes chunkOf(JSON.stringify({ type, object }) + '\n') writes for the parsed object.
 */
export function textFrame(type: TextWatchEvent['type'], json: StoredText): Buffer {
  let frames = textEvents.get(json);
  const hit = frames?.[type];
  if (hit) return hit;
  const line = `{"type":"${type}","object":${json.text}}\n`;
  // One string, one encoding (measured: cheaper than writing the parts into one Buffer).
  const frame = Buffer.from(`${Buffer.byteLength(line).toString(16)}\r\n${line}\r\n`);
  if (!frames) textEvents.set(json, (frames = {}));
  frames[type] = frame;
  return frame;
}

/**
 * One watch response: the socket it writes framed events to (or, over HTTP/2, the stream it
 * writes their data to), the events queued for it, and its end. Created by WatchStreams.serve;
 * `attach` hands it the registry's watch once that began.
 */
class WatchStream implements PacedStream {
  /** Framed events not written yet (the writer comes by, or the socket drains). */
  private readonly queue: Buffer[] = [];
  /** Bytes in `queue` (with what the socket buffers: at most MAX_WATCH_SEND_BUFFER once live). */
  private queuedBytes = 0;
  /** The socket pushed back: nothing is written until it drains. */
  private blocked = false;
  private closed = false;
  /** Initial events are written in one burst before the watch goes live: the bounds apply after. */
  private live = false;
  private headersSent = false;
  private firstTable = true;
  private handle?: WatchHandle;
  private timer?: NodeJS.Timeout;
  private readonly repr: Representation;
  private readonly serialization: ReturnType<typeof serializationOf>;
  /** Over HTTP/2: events go out without their chunk framing (the stream frames its DATA itself). */
  private readonly http2: boolean;
  private readonly onDrain = () => {
    this.blocked = false;
    if (this.queue.length > 0) this.writer.schedule(this);
  };

  constructor(
    private readonly r: ApiRequest,
    private readonly registry: GenericStore,
    private readonly socket: WatchOutput,
    private readonly writer: WatchWriter,
    /** Called once when the stream ends (finished, aborted or closed by the client). */
    private readonly onEnd: (stream: WatchStream) => void,
  ) {
    this.repr = requestTarget(r).repr;
    this.serialization = serializationOf(this.repr);
    this.http2 = overHttp2(r.req.raw);
    this.sink = {
      send: (ev) => this.send(ev),
      end: () => this.finish(),
      // Plain JSON in the served group (inRequestedGroup rewrites nothing): a stored text is the event's object as it is.
      acceptsText: (this.repr.kind === 'json' || this.repr.kind === 'yaml') && (registry.def.group === r.info.apiGroup || !r.info.apiGroup.endsWith('.k8s.io')),
    };
    socket.on('drain', this.onDrain);
  }

  /** The sink the registry's watch writes to. */
  readonly sink: WatchSink;

  /** The registry's watch began: initial events are out, live events follow; ends after `timeoutSeconds`. */
  attach(handle: WatchHandle, timeoutSeconds: number): void {
    this.handle = handle;
    if (this.closed) return; // ended while it began (an error event)
    this.writeHeaders();
    this.live = true;
    this.timer = setTimeout(() => handle.stop(), timeoutSeconds * 1000);
    this.timer.unref?.();
    this.r.reply.raw.on('close', () => {
      this.socket.removeListener('drain', this.onDrain);
      if (this.closed) return;
      this.closed = true;
      clearTimeout(this.timer);
      handle.stop();
      this.onEnd(this);
    });
  }

  private send(ev: WatchEventOut): void {
    if (this.closed) return;
    this.writeHeaders();
    let chunk: Buffer;
    try {
      chunk = this.encodeEvent(ev);
    } catch (err) {
      // An object that cannot be encoded ends the stream; the client re-watches.
      this.r.req.log.error({ err }, 'watch event encoding failed');
      this.finish();
      return;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.live && (this.queue.length > MAX_WATCH_QUEUED_EVENTS || this.queuedBytes + this.socket.writableLength > MAX_WATCH_SEND_BUFFER)) return this.tooSlow();
    // The events of one turn go out together (one TLS record, one syscall) on a later turn.
    if (!this.blocked) this.writer.schedule(this);
  }

  flush(): void {
    if (this.closed || this.blocked || this.queue.length === 0) return;
    this.blocked = !this.writeQueued();
    if (this.live && this.socket.writableLength > MAX_WATCH_SEND_BUFFER) this.tooSlow();
  }

  /**
   * Writes queued frames, corked into one write (one syscall) when there are several, until the socket pushes back;
   * the rest waits in the queue. Each frame is written as it is, never copied: the socket
   * holds the Buffer every watcher shares (a per-watcher copy of unsent events made the RSS
   * of 5,000 unread watches grow from 0.5 to 1.1 GiB in the watch-load bench).
   */
  private writeQueued(): boolean {
    if (this.queue.length === 1) {
      // The usual case (one event since the last turn): one write, no cork.
      const frame = this.queue.pop()!;
      this.queuedBytes = 0;
      return this.socket.write(this.http2 ? unframed(frame) : frame);
    }
    this.socket.cork();
    let ok = true;
    while (this.queue.length > 0 && ok) {
      const frame = this.queue.shift()!;
      this.queuedBytes -= frame.length;
      ok = this.socket.write(this.http2 ? unframed(frame) : frame);
    }
    this.socket.uncork();
    return ok;
  }

  private tooSlow(): void {
    this.r.req.log.warn({ buffered: this.socket.writableLength, queued: this.queue.length }, 'watch client too slow: stream cut off');
    this.abort();
  }

  private writeHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const res = this.r.reply.raw;
    const { ctx } = requestTarget(this.r);
    this.r.reply.hijack();
    if (ctx.warnings.length) res.setHeader('warning', warningHeader(ctx.warnings));
    res.writeHead(200, {
      // Protobuf watches are length-prefixed WatchEvent frames (upstream stream=watch).
      'content-type': this.serialization === 'protobuf' ? `${this.repr.contentType};stream=watch` : 'application/json',
      ...(this.http2 ? {} : { 'transfer-encoding': 'chunked' }),
      'cache-control': 'no-cache, private',
    });
    res.flushHeaders();
  }

  private encodeOnce(event: ObjectWatchEvent): Buffer {
    const { repr, serialization } = this;
    const inGroup = inRequestedGroup(event.object, this.registry.def.group, this.r.info.apiGroup) as ObjectWatchEvent['object'];
    // Metadata-only watches (client-go metadata informers): every event's object, bookmarks too.
    const ev = { type: event.type, object: (repr.kind === 'partial' ? toPartialObjectMetadata(inGroup, repr) : inGroup) as ObjectWatchEvent['object'] };
    return chunkOf(serialization === 'protobuf' ? encodeWatchEventProtobuf(ev.type, ev.object) : Buffer.from(JSON.stringify(ev) + '\n'));
  }

  /** One Table row event (the column definitions unless `noHeaders`). */
  private tableRow(event: ObjectWatchEvent, noHeaders: boolean): Buffer {
    const table = toTable(inRequestedGroup(event.object, this.registry.def.group, this.r.info.apiGroup) as KubeObject, this.registry.def, this.repr as Representation & { kind: 'table' }, noHeaders);
    return chunkOf(Buffer.from(JSON.stringify({ type: event.type, object: table }) + '\n'));
  }

  private encodeEvent(event: WatchEventOut): Buffer {
    if (event.json !== undefined) return textFrame(event.type, event.json);
    const { repr, serialization } = this;
    const apiGroup = this.r.info.apiGroup;
    const row = repr.kind === 'table' && event.type !== 'BOOKMARK' && event.type !== 'ERROR';
    if (row && this.firstTable) {
      // Tables carry column definitions in a watcher's first row only: that row is its own.
      this.firstTable = false;
      return this.tableRow(event, false);
    }
    // The representation's identity: its kind, serialization and (metadata-only, Table) group/version.
    const key = `${event.type} ${repr.kind} ${serialization} ${repr.kind === 'partial' || repr.kind === 'table' ? `${repr.group}/${repr.version}` : ''} ${apiGroup}`;
    let byRepr = encodedEvents.get(event.object);
    const hit = byRepr?.get(key);
    if (hit !== undefined) return hit;
    const encoded = row ? this.tableRow(event, true) : this.encodeOnce(event);
    if (!byRepr) encodedEvents.set(event.object, (byRepr = new Map()));
    byRepr.set(key, encoded);
    return encoded;
  }

  /** Ends the stream cleanly: what is queued still goes out before the end (a clean end loses no event). */
  finish(): void {
    if (this.closed) return;
    for (const frame of this.queue.splice(0)) this.socket.write(this.http2 ? unframed(frame) : frame);
    this.closed = true;
    this.socket.removeListener('drain', this.onDrain);
    clearTimeout(this.timer);
    this.handle?.stop();
    this.onEnd(this);
    this.r.reply.raw.end();
  }

  /** The registry's watch did not begin: nothing was written, the socket stays as it was. */
  cancel(): void {
    this.closed = true;
    this.socket.removeListener('drain', this.onDrain);
    this.onEnd(this);
  }

  /**
   * Ends the stream with an error: the socket goes, and with it the buffered bytes. Over HTTP/2
   * the stream is reset (INTERNAL_ERROR: a broken body, never a clean end) and its buffered bytes
   * go with it; the connection serves the client's other streams on.
   */
  private abort(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.finish();
    if (this.http2) (this.socket as ServerHttp2Stream).close(http2Constants.NGHTTP2_INTERNAL_ERROR);
    else this.r.reply.raw.destroy();
  }
}

/** `timeoutSeconds` of a watch: the parameter (a non-negative integer), else --min-request-timeout randomized up to 2x. */
function watchTimeoutSeconds(query: URLSearchParams, minRequestTimeoutSeconds: number): number {
  const param = query.get('timeoutSeconds');
  if (param === null) return Math.floor(minRequestTimeoutSeconds * (1 + Math.random()));
  const seconds = Number(param);
  if (!Number.isInteger(seconds) || seconds < 0) throw StatusError.badRequest(`invalid timeoutSeconds: ${JSON.stringify(param)}`);
  return seconds;
}

export class WatchStreams {
  /** Open watch streams, ended by closeAll() on shutdown. */
  private readonly open = new Set<WatchStream>();
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
    for (const stream of [...this.open]) stream.finish();
  }

  /** Serves a watch of `registry` for the request; returns the HTTP status. */
  async serve(r: ApiRequest, registry: GenericStore): Promise<number> {
    const { info, query } = r;
    const { namespace: ns, repr } = requestTarget(r);
    // `watch` itself (request-info read it leniently to decide the verb): a bad value is a 400 here.
    queryBool(query, 'watch');
    if (repr.kind === 'partial' && repr.as !== 'PartialObjectMetadata') {
      throw new StatusError(406, 'NotAcceptable', `you requested ${repr.as}, but a watch streams single objects: ask for PartialObjectMetadata`);
    }
    const opts = listOptions(query);
    // GET .../<name>?watch=1 watches one object.
    const fieldSelector = info.name ? [opts.fieldSelector, `metadata.name=${info.name}`].filter(Boolean).join(',') : opts.fieldSelector;
    const timeoutSeconds = watchTimeoutSeconds(query, this.opts.minRequestTimeoutSeconds);
    // Framed chunks go to the socket itself (the response has sent its chunked headers and ends
    // with the last chunk); the socket outlives the watch on a kept-alive connection. Over HTTP/2,
    // their data goes to the response's stream.
    const socket = await responseOutput(r.reply.raw);
    const release = this.admit(requestUser(r).username);
    const stream = new WatchStream(r, registry, socket, this.writer, (s) => this.open.delete(s));
    this.open.add(stream);
    let handle: WatchHandle;
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
        stream.sink,
      );
    } catch (err) {
      stream.cancel();
      release();
      throw err;
    }
    r.reply.raw.on('close', release);
    stream.attach(handle, timeoutSeconds);
    if (this.closing) stream.finish();
    return 200;
  }
}
