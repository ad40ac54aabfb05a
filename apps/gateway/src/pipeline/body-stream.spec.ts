import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { KeyValue } from '@orch/storage';
import { BODY_CHUNK_BYTES, ChunkedBody, jsonListChunks, slices } from './body-stream';
import { Encoder } from './encode';
import { servedObject as served, storedConfigMap as stored } from './stored-fixture';

const HEAD = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '99', continue: 'tok', remainingItemCount: 3 } };
const many = (n: number, bytes: number) => Array.from({ length: n }, (_, i) => stored(`cm-${i}`, i + 1, { v: 'x'.repeat(bytes) }));
/** A stored text whose metadata is too far in to splice resourceVersion into: written from the parsed object. */
const late: KeyValue = { key: '/registry/core/configmaps/default/late', value: `{"apiVersion":"v1","kind":"ConfigMap","data":{"v":"${'y'.repeat(600)}"},"metadata":{"name":"late"}}`, createRevision: 7, modRevision: 7 };

describe('jsonListChunks: a list page written from the stored texts', () => {
  it.each([
    { name: 'no items', items: [] as KeyValue[] },
    { name: 'one item', items: [stored('a', 5)] },
    { name: 'items over many chunks', items: many(300, 1000) },
    { name: 'non-ASCII text across chunk ends', items: Array.from({ length: 200 }, (_, i) => stored(`u-${i}`, i + 1, { 'ключ': 'значение—✓'.repeat(60) })) },
    { name: 'a text that does not take the splice', items: [stored('a', 5), late, stored('b', 6)] },
  ])('the bytes are the JSON of the served list: $name', ({ items }) => {
    const chunks = [...jsonListChunks({ ...HEAD, items })];
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toEqual({ ...HEAD, items: items.map(served) });
    // Bounded chunks: about BODY_CHUNK_BYTES each (one item past it at most), and as few as that allows.
    const largest = Math.max(0, ...items.map((kv) => Buffer.byteLength(kv.value) + 40));
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(3 * BODY_CHUNK_BYTES + 3 * largest);
    const total = chunks.reduce((n, c) => n + c.length, 0);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(total / BODY_CHUNK_BYTES) + 1);
  });

  it('splices resourceVersion into the stored text: the text is otherwise unchanged', () => {
    const text = Buffer.concat([...jsonListChunks({ ...HEAD, items: [stored('a', 5)] })]).toString();
    expect(text).toBe(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":${JSON.stringify(HEAD.metadata)},"items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"5","name":"a","namespace":"default","uid":"u-a"},"data":{"a":"b"}}]}`);
  });
});

describe('ChunkedBody', () => {
  /** Turns of the event loop counted from now (a setImmediate each) until the returned stop() is called. */
  const countTurns = () => {
    const state = { turn: 0, ticking: true };
    const tick = () => {
      state.turn++;
      if (state.ticking) setImmediate(tick);
    };
    setImmediate(tick);
    return { now: () => state.turn, stop: () => (state.ticking = false) };
  };
  /** Bodies of `n` chunks each; what each chunk was made on (turn, body). */
  const bodies = (count: number, n: number, turn: () => number) => {
    const made: { turn: number; body: number }[] = [];
    function* chunks(body: number) {
      for (let i = 0; i < n; i++) {
        made.push({ turn: turn(), body });
        yield Buffer.alloc(BODY_CHUNK_BYTES, body);
      }
    }
    return { made, streams: Array.from({ length: count }, (_, i) => new ChunkedBody(chunks(i))) };
  };
  const byTurn = (made: { turn: number; body: number }[]) => {
    const turns = new Map<number, number[]>();
    for (const m of made) turns.set(m.turn, [...(turns.get(m.turn) ?? []), m.body]);
    return [...turns.values()];
  };

  it('a turn makes one chunk for all waiting bodies together; every body gets its chunks', async () => {
    const turns = countTurns();
    const { made, streams } = bodies(6, 10, turns.now);
    const read = async (body: ChunkedBody) => {
      let bytes = 0;
      for await (const c of body) bytes += (c as Buffer).length;
      return bytes;
    };
    const bytes = await Promise.all(streams.map(read));
    turns.stop();
    expect(bytes).toEqual(Array(6).fill(10 * BODY_CHUNK_BYTES));
    // Full chunks: one chunk a turn, whichever body it is for.
    for (const served of byTurn(made)) expect(served).toHaveLength(1);
  });

  it('serves the oldest body first while its reader takes its chunks at once: bodies finish in the order they began', async () => {
    const turns = countTurns();
    const { made, streams } = bodies(6, 10, turns.now);
    const finished: number[] = [];
    // A reader that takes every write at once (a socket with room).
    const sink = (body: number) => new Writable({ write: (_chunk, _enc, done) => done(), final: (done) => (finished.push(body), done()) });
    await Promise.all(streams.map((s, i) => pipeline(s, sink(i))));
    turns.stop();
    const served = byTurn(made);
    // Still one chunk a turn for all bodies together...
    for (const t of served) expect(t).toHaveLength(1);
    // ...and the first body's ten chunks before any other's: it is done after ten turns, not after sixty.
    expect(made.slice(0, 10).every((m) => m.body === 0)).toBe(true);
    expect(finished).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('a chunk that fails destroys the stream with the error', async () => {
    function* chunks() {
      yield Buffer.from('a');
      throw new Error('boom');
    }
    const body = new ChunkedBody(chunks());
    await expect(
      (async () => {
        for await (const c of body) void c;
      })(),
    ).rejects.toThrow('boom');
  });
});

describe('Encoder writes big bodies in chunks (a real Fastify server)', () => {
  let app: FastifyInstance;
  let port: number;
  /** Chunks made so far by the current /slow body. */
  let made = 0;
  const big = Buffer.from(JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => ({ i, text: `item ${i} ${'z'.repeat(100)}` })) }));

  beforeAll(async () => {
    const encoder = new Encoder({ compression: true });
    app = Fastify();
    // As the gateway's handler (ApiHandler.handle): the encoder answers, the handler resolves with nothing.
    const route = (path: string, send: (req: FastifyRequest, reply: FastifyReply) => number | Promise<number>) =>
      app.get(path, async (req, reply) => {
        await send(req, reply);
      });
    route('/small', (req, reply) => encoder.sendText(req, reply, 200, '{"small":true}', 'application/json'));
    route('/big', (req, reply) => encoder.sendText(req, reply, 200, big, 'application/json'));
    route('/list', (req, reply) => encoder.sendChunks(req, reply, 200, jsonListChunks({ ...HEAD, items: many(300, 1000) }), 'application/json'));
    route('/fails', (req, reply) => {
      function* chunks() {
        yield* slices(big.subarray(0, 4 * BODY_CHUNK_BYTES));
        throw new Error('the store went away');
      }
      return encoder.sendChunks(req, reply, 200, chunks(), 'application/json');
    });
    route('/slow', (req, reply) => {
      made = 0;
      function* chunks() {
        for (let i = 0; i < 400; i++) {
          made++;
          yield Buffer.alloc(BODY_CHUNK_BYTES, 97);
        }
      }
      return encoder.sendChunks(req, reply, 200, chunks(), 'application/octet-stream');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  /** GET path; resolves with status, headers and body, or rejects when the body breaks off. */
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, headers }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
          res.on('error', reject);
          res.on('aborted', () => reject(new Error('aborted')));
        })
        .on('error', reject);
    });

  it.each([
    { name: 'one chunk: sent whole, with its length', path: '/small', chunked: false },
    { name: 'a big encoded body: in slices', path: '/big', chunked: true },
    { name: 'a list from stored texts', path: '/list', chunked: true },
  ])('$name (plain and gzip)', async ({ path, chunked }) => {
    const plain = await get(path);
    const zipped = await get(path, { 'accept-encoding': 'gzip' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json');
    expect(plain.headers['transfer-encoding'] === 'chunked').toBe(chunked);
    expect(plain.headers['content-length'] === undefined).toBe(chunked);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(JSON.parse(plain.body.toString())).toBeTruthy();
    if (path === '/big') expect(plain.body.equals(big)).toBe(true);
  });

  it.each([{ gzip: false }, { gzip: true }])('a body that fails part way is cut off, never ended cleanly (gzip: $gzip)', async ({ gzip }) => {
    await expect(get('/fails', gzip ? { 'accept-encoding': 'gzip' } : {})).rejects.toThrow();
  });

  it('makes chunks only as the client reads them (a slow reader holds a few chunks, not the body)', async () => {
    await new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/slow' }, (res) => {
          res.pause();
          setTimeout(() => {
            // Socket buffers on both sides hold some chunks; the rest is not made yet.
            expect(made).toBeGreaterThan(0);
            expect(made).toBeLessThan(200);
            let bytes = 0;
            res.on('data', (c: Buffer) => (bytes += c.length));
            res.on('end', () => {
              expect(bytes).toBe(400 * BODY_CHUNK_BYTES);
              expect(made).toBe(400);
              resolve();
            });
            res.resume();
          }, 300);
        })
        .on('error', reject);
    });
  });
});
