import { Duplex, PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { FrameParser, FrameType, HeaderReader, HeaderWriter, SPDY3_DICTIONARY, SpdySession, controlFrame, dataFrame, decodeHeaderBlock, encodeHeaderBlock, type Frame, type SpdyHeaders, type SpdyStream } from './spdy';

/**
 * The SPDY/3.1 server side against a client that compresses header blocks the way Go's
 * framer (moby/spdystream, used by kubectl) does: one zlib stream with the SPDY/3 dictionary,
 * a sync flush per block.
 */

/** A client half: writes frames to the session, collects what it answers. */
function connect() {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const session = new SpdySession(Duplex.from({ readable: toServer, writable: fromServer }));
  const parser = new FrameParser();
  const frames: Frame[] = [];
  fromServer.on('data', (d: Buffer) => frames.push(...parser.push(d)));
  const deflate = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY, level: 9 });
  let out: Buffer[] = [];
  deflate.on('data', (d: Buffer) => out.push(d));
  const compress = (headers: Record<string, string>) =>
    new Promise<Buffer>((resolve) => {
      deflate.write(encodeHeaderBlock(headers));
      deflate.flush(zlib.constants.Z_SYNC_FLUSH, () =>
        setImmediate(() => {
          const b = Buffer.concat(out);
          out = [];
          resolve(b);
        }),
      );
    });
  const replyReader = new HeaderReader();
  return {
    session,
    frames,
    async open(id: number, headers: Record<string, string>, fin = false) {
      const head = Buffer.alloc(10);
      head.writeUInt32BE(id, 0);
      toServer.write(controlFrame(FrameType.SynStream, fin ? 1 : 0, Buffer.concat([head, await compress(headers)])));
    },
    send: (frame: Buffer) => toServer.write(frame),
    /** Decodes every SYN_REPLY so far with a zlib reader, as the Go client does. */
    async replies() {
      const out: { id: number; headers: Record<string, string> }[] = [];
      for (const f of frames) if (f.kind === 'control' && f.type === FrameType.SynReply) out.push({ id: f.payload.readUInt32BE(0), headers: await replyReader.decode(f.payload.subarray(4)) });
      return out;
    },
    end: () => toServer.end(),
  };
}

/** Waits until `done()` holds (header blocks decode asynchronously, in zlib's thread pool: no fixed wait is long enough on a busy machine). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('SPDY/3.1 session', () => {
  it('builds the 1423-byte SPDY/3 dictionary', () => {
    let a = 1;
    let b = 0;
    for (const x of SPDY3_DICTIONARY) {
      a = (a + x) % 65521;
      b = (b + a) % 65521;
    }
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(b * 65536 + a).toBe(3821447106); // Adler-32 that zlib headers of SPDY clients name
  });

  it.each<{ name: string; headers: SpdyHeaders }>([
    { name: 'empty', headers: {} },
    { name: 'one header', headers: { streamtype: 'stdout' } },
    { name: 'several values', headers: { port: '80', requestid: '0\u00001' } },
  ])('header blocks round-trip ($name)', ({ headers }) => {
    expect(decodeHeaderBlock(encodeHeaderBlock(headers))).toEqual(headers);
  });

  it('header blocks written as stored deflate blocks read back from one zlib stream, block after block', async () => {
    const writer = new HeaderWriter();
    const reader = new HeaderReader();
    for (const h of [{ a: '1' }, {}, { streamtype: 'error', port: '8080' }] as SpdyHeaders[]) expect(await reader.decode(writer.encode(h))).toEqual(h);
    // A plain zlib inflate of the whole stream sees the same bytes (any zlib reader can follow it).
    const w = new HeaderWriter();
    const stream = Buffer.concat([w.encode({ x: 'y' }), w.encode({ z: 'w' })]);
    expect(zlib.inflateSync(stream, { finishFlush: zlib.constants.Z_SYNC_FLUSH })).toEqual(Buffer.concat([encodeHeaderBlock({ x: 'y' }), encodeHeaderBlock({ z: 'w' })]));
  });

  it('announces client streams with their headers, replies, carries data both ways and FIN', async () => {
    const c = connect();
    const streams: SpdyStream[] = [];
    c.session.on('stream', (s) => {
      streams.push(s);
      s.reply();
    });
    await c.open(1, { streamtype: 'error' });
    await c.open(3, { streamtype: 'stdin' });
    await until(() => streams.length === 2);
    expect(streams.map((s) => [s.id, s.headers.streamtype])).toEqual([
      [1, 'error'],
      [3, 'stdin'],
    ]);
    expect((await c.replies()).map((r) => r.id)).toEqual([1, 3]);
    const got: Buffer[] = [];
    streams[1].on('data', (d: Buffer) => got.push(d));
    const ended = new Promise((r) => streams[1].on('end', r));
    c.send(dataFrame(3, Buffer.from('hello '), false));
    c.send(dataFrame(3, Buffer.from('world'), true));
    await ended;
    expect(Buffer.concat(got).toString()).toBe('hello world');
    streams[0].end('{"status":"Success"}');
    await until(() => c.frames.some((f) => f.kind === 'data' && f.streamId === 1 && f.fin));
    const data = c.frames.filter((f): f is Extract<Frame, { kind: 'data' }> => f.kind === 'data' && f.streamId === 1);
    expect(Buffer.concat(data.map((f) => f.data)).toString()).toBe('{"status":"Success"}');
    expect(data[data.length - 1].fin).toBe(true);
  });

  it('echoes client pings, resets streams on RST_STREAM and closes on GOAWAY', async () => {
    const c = connect();
    const streams: SpdyStream[] = [];
    c.session.on('stream', (s) => streams.push(s));
    const ping = Buffer.alloc(4);
    ping.writeUInt32BE(7, 0);
    c.send(controlFrame(FrameType.Ping, 0, ping));
    await c.open(1, { streamtype: 'data' });
    await until(() => streams.length === 1);
    const reset = new Promise<void>((r) => streams[0].once('reset', () => r()));
    const rst = Buffer.alloc(8);
    rst.writeUInt32BE(1, 0);
    rst.writeUInt32BE(5, 4);
    c.send(controlFrame(FrameType.RstStream, 0, rst));
    await reset;
    const closed = new Promise<void>((r) => c.session.once('close', () => r()));
    c.send(controlFrame(FrameType.GoAway, 0, Buffer.alloc(8)));
    await closed;
    expect(c.frames.some((f) => f.kind === 'control' && f.type === FrameType.Ping && f.payload.readUInt32BE(0) === 7)).toBe(true);
    expect(c.session.streamCount).toBe(0);
  });

  /** A session on a transport that records each batch it is given; `hwm`: the transport's high-water mark. */
  async function batchedSession(hwm = 1024 * 1024) {
    const batches: Buffer[][] = [];
    const transport = new Duplex({
      highWaterMark: hwm,
      read() {},
      write(chunk: Buffer, _enc, cb) {
        batches.push([chunk]);
        cb();
      },
      writev(chunks, cb) {
        batches.push(chunks.map((c) => c.chunk as Buffer));
        cb();
      },
    });
    const session = new SpdySession(transport);
    const streams: SpdyStream[] = [];
    session.on('stream', (s) => streams.push(s));
    const w = new HeaderWriter();
    for (const id of [1, 3]) {
      const syn = Buffer.alloc(10);
      syn.writeUInt32BE(id, 0);
      transport.push(controlFrame(FrameType.SynStream, 0, Buffer.concat([syn, w.encode({ streamtype: 'data' })])));
    }
    await until(() => streams.length === 2);
    for (const s of streams) s.reply();
    await new Promise((r) => setImmediate(r));
    batches.length = 0;
    const describe = () => new FrameParser().push(Buffer.concat(batches.flat())).map((f) => (f.kind === 'control' ? `control ${f.type}` : `${f.streamId}: ${f.data.length > 16 ? `${f.data.length} bytes` : f.data.toString()}${f.fin ? ' FIN' : ''}`));
    return { session, streams, batches, describe };
  }

  it('writes the frames of one event-loop turn to its transport in one batch, in order', async () => {
    const { session, streams, batches, describe } = await batchedSession();
    for (const d of ['a', 'bb', 'ccc']) streams[0].write(d);
    streams[0].end();
    expect(batches).toEqual([]); // nothing before the turn is over
    await new Promise((r) => setImmediate(r));
    expect(batches).toHaveLength(1);
    expect(describe()).toEqual(['1: abbccc FIN']);
    session.close();
  });

  const MiB = 1024 * 1024;
  it.each<{ name: string; writes: [number, string | number][]; frames: string[] }>([
    { name: 'writes of one stream join into one frame', writes: [[0, 'a'], [0, 'bb'], [0, 'ccc']], frames: ['1: abbccc'] },
    { name: 'another stream between them ends the frame', writes: [[0, 'a'], [1, 'x'], [0, 'b']], frames: ['1: a', '3: x', '1: b'] },
    { name: 'frames are at most 1 MiB', writes: [[0, MiB - 10], [0, 20], [0, 2 * MiB + 1]], frames: ['1: 1048576 bytes', '1: 1048576 bytes', '1: 1048576 bytes', `1: ${'z'.repeat(11)}`] },
    { name: '64 KiB reads join up to 1 MiB', writes: Array.from({ length: 20 }, (): [number, number] => [0, 64 * 1024]), frames: ['1: 1048576 bytes', '1: 262144 bytes'] },
  ])('$name', async ({ writes, frames }) => {
    const { session, streams, describe } = await batchedSession(8 * MiB);
    for (const [i, d] of writes) streams[i].write(typeof d === 'number' ? Buffer.alloc(d, 'z') : d);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(describe()).toEqual(frames);
    session.close();
  });

  it('a control frame goes after the data written before it', async () => {
    const { session, streams, describe } = await batchedSession();
    streams[0].write('before');
    streams[1].reset();
    await new Promise((r) => setImmediate(r));
    expect(describe()).toEqual(['1: before', `control ${FrameType.RstStream}`]);
    session.close();
  });

  it('past the transport high-water mark a write waits for its drain', async () => {
    const { session, streams, batches } = await batchedSession(64 * 1024);
    const done: number[] = [];
    for (let i = 0; i < 4; i++) streams[0].write(Buffer.alloc(40 * 1024, i), () => done.push(i));
    await new Promise((r) => setImmediate(r));
    await until(() => done.length === 4);
    expect(done).toEqual([0, 1, 2, 3]);
    const payload = Buffer.concat(new FrameParser().push(Buffer.concat(batches.flat())).map((f) => (f.kind === 'data' ? f.data : Buffer.alloc(0))));
    expect(payload.equals(Buffer.concat([0, 1, 2, 3].map((i) => Buffer.alloc(40 * 1024, i))))).toBe(true);
    session.close();
  });

  it.each([
    { name: 'a SPDY/2 frame', bytes: controlFrame(FrameType.Ping, 0, Buffer.alloc(4)).fill(0x80, 0, 1).fill(0x02, 1, 2) },
    { name: 'a header block that is not zlib', bytes: controlFrame(FrameType.SynStream, 0, Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.alloc(6), Buffer.from('not zlib')])) },
  ])('ends the session on $name', async ({ bytes }) => {
    const c = connect();
    const closed = new Promise<void>((r) => c.session.once('close', () => r()));
    c.send(bytes);
    await closed;
    expect(c.session.failure).toBeInstanceOf(Error);
    expect(c.frames.some((f) => f.kind === 'control' && f.type === FrameType.GoAway)).toBe(true);
  });
});
