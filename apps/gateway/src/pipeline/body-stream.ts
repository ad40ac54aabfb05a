import { Readable } from 'node:stream';
import type { KeyValue } from '@orch/storage';
import { injectResourceVersion } from '../registry/stored-objects';
import type { StoredList } from './stored-protobuf';

/**
 * Bytes a response body is written in at most at once. A body larger than this goes out as a
 * stream of chunks of about this size, each made (encoded, copied) only when the socket has room
 * for it and on a later turn of the event loop: a big list neither holds the loop (a small GET
 * waits for a few chunks, not one whole body) nor has its whole body in memory at once behind a
 * slow reader. 64 KiB is four TLS records; making and encrypting one takes about 0.1-0.2 ms.
 */
export const BODY_CHUNK_BYTES = 64 * 1024;

/**
 * The JSON text of a list page of stored values (GenericStore.listVerbatim), in chunks of about
 * BODY_CHUNK_BYTES: each stored text with its resourceVersion spliced in, no parse and no
 * serialization (a value that does not take the splice is parsed and written whole: the same
 * object). The bytes equal those of one string `{"apiVersion":…,"kind":…,"metadata":…,"items":[…]}`.
 */
export function* jsonListChunks(page: StoredList): Generator<Buffer, void, undefined> {
  let text = `{"apiVersion":${JSON.stringify(page.apiVersion)},"kind":${JSON.stringify(page.kind)},"metadata":${JSON.stringify(page.metadata)},"items":[`;
  const items = page.items;
  for (let i = 0; i < items.length; i++) {
    // One string per chunk (`+=` makes a rope, flattened once by Buffer.from): no list-sized string.
    text += i === 0 ? servedText(items[i]) : `,${servedText(items[i])}`;
    if (text.length >= BODY_CHUNK_BYTES) {
      yield Buffer.from(text);
      text = '';
    }
  }
  yield Buffer.from(`${text}]}`);
}

/** A stored value as served: its text with the resourceVersion spliced in, else parsed and written again. */
function servedText(kv: KeyValue): string {
  const spliced = injectResourceVersion(kv.value, kv.modRevision);
  if (spliced !== undefined) return spliced;
  const obj = JSON.parse(kv.value) as { metadata: { resourceVersion?: string } };
  obj.metadata.resourceVersion = String(kv.modRevision);
  return JSON.stringify(obj);
}

/** One encoded body in slices of BODY_CHUNK_BYTES (views of it: nothing is copied). */
export function* slices(body: Buffer): Generator<Buffer, void, undefined> {
  for (let at = 0; at < body.length; at += BODY_CHUNK_BYTES) yield body.subarray(at, at + BODY_CHUNK_BYTES);
}

/**
 * Bytes of chunks made in one turn of the event loop, for all streamed bodies together (one
 * chunk: a body whose last chunk was short may leave the rest of it to the next body's chunk).
 */
const TURN_BYTES = BODY_CHUNK_BYTES;

/**
 * Turns of the event loop for making chunks, shared by every streamed body of the process: on a
 * turn (setImmediate, after the turn's I/O) the waiting bodies are served oldest first (the
 * order they began), each making chunks while its socket takes them at once, until TURN_BYTES
 * are made; the others wait for the next turn. However many big bodies stream at once, a
 * request that arrives waits behind at most TURN_BYTES of their work (one chunk: four, as
 * before, made the turns and the socket flushes after them the longest pieces of work a small
 * GET waited behind under a flood of lists). Oldest first, not a chunk each in turn: the first
 * list finishes (and frees its priority-and-fairness seat) first instead of all of them
 * finishing together after many turns, so a request queued behind them for a seat gets one sooner.
 */
class ChunkTurns {
  /** Bodies waiting for a chunk, oldest (lowest `order`) first. */
  private readonly waiting: ChunkedBody[] = [];
  private scheduled = false;
  private begun = 0;

  /** The place of a new body in the order of service. */
  nextOrder(): number {
    return this.begun++;
  }

  /** `body` gets its next chunks made on a later turn. */
  request(body: ChunkedBody): void {
    let at = this.waiting.length;
    while (at > 0 && this.waiting[at - 1].order > body.order) at--;
    this.waiting.splice(at, 0, body);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    // A body asks again only once its socket wants more (a later turn): each is served once here.
    for (let made = 0; made < TURN_BYTES && this.waiting.length > 0; ) {
      const body = this.waiting.shift()!;
      // A destroyed body (its client went away) gives its turn to the next one.
      if (!body.destroyed) made += body.makeChunks(TURN_BYTES - made);
    }
    if (this.waiting.length > 0) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  };
}

const turns = new ChunkTurns();

/**
 * A body made chunk by chunk as its reader asks (a pipe to the response pauses while the socket
 * pushes back): chunks are made on later turns of the event loop (ChunkTurns), so requests
 * that arrived meanwhile are read first. A chunk that fails to be made destroys the
 * stream with the error: Fastify then destroys the response, so the client sees a broken body (no
 * clean end of a chunked body), never a complete-looking truncated one.
 */
export class ChunkedBody extends Readable {
  private asked = false;
  /** Its place in ChunkTurns' order of service (the order bodies began). */
  readonly order = turns.nextOrder();

  constructor(private readonly chunks: Iterator<Buffer, void, undefined>) {
    super({ highWaterMark: BODY_CHUNK_BYTES });
  }

  override _read(): void {
    if (this.asked) return;
    this.asked = true;
    turns.request(this);
  }

  /**
   * Makes and pushes chunks on the body's turn (ChunkTurns calls this): one, then more while the
   * reader takes them at once (a socket that accepts the write: push() answers true) and they
   * fit in `budget` bytes; returns the bytes made.
   */
  makeChunks(budget: number): number {
    this.asked = false;
    let made = 0;
    while (!this.destroyed) {
      let next: IteratorResult<Buffer, void>;
      try {
        next = this.chunks.next();
      } catch (err) {
        this.destroy(err as Error);
        break;
      }
      if (next.done) {
        this.push(null);
        break;
      }
      made += next.value.length;
      // push() answers false once chunks wait unread (the socket pushes back): no more now.
      if (!this.push(next.value) || made + BODY_CHUNK_BYTES > budget) break;
    }
    return made;
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Ends the generator (its items are no longer referenced).
    this.chunks.return?.();
    callback(err);
  }
}
