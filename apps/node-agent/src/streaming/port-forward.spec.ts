import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import WebSocket, { WebSocketServer } from 'ws';
import { FrameParser, FrameType, SPDY3_DICTIONARY, SpdySession, controlFrame, dataFrameHeader, encodeHeaderBlock } from './spdy';
import { dialTcp, servePortForwardSpdy, webSocketTunnel } from './port-forward';

/**
 * The WebSocket tunnel of `SPDY/3.1+portforward.k8s.io` between a real `ws` server and client
 * over a loopback connection: the client (an RFC 6455 implementation that fails the connection
 * with 1002 on a malformed fragment sequence) must read back exactly the bytes written.
 */

const MESSAGE_LIMIT = 256 * 1024;

interface Pair {
  tunnel: Duplex;
  client: WebSocket;
  /** Binary messages the client received, in order. */
  messages: Buffer[];
  /** Resolves with the close code the client saw. */
  closed: Promise<number>;
  close(): Promise<void>;
}

async function pair(): Promise<Pair> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = http.createServer();
  const accepted = new Promise<Duplex>((resolve) =>
    server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => resolve(webSocketTunnel(ws, socket, 1024 * 1024)))),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { perMessageDeflate: false });
  const messages: Buffer[] = [];
  client.on('message', (d: Buffer) => messages.push(d));
  const closed = new Promise<number>((r) => client.on('close', (code) => r(code)));
  const tunnel = await accepted;
  tunnel.on('error', () => undefined);
  await new Promise((r) => client.once('open', r));
  return {
    tunnel,
    client,
    messages,
    closed,
    async close() {
      client.terminate();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Waits until the client holds `bytes` bytes (or its connection closed). */
async function received(p: Pair, bytes: number): Promise<Buffer> {
  for (let i = 0; i < 500 && p.messages.reduce((n, m) => n + m.length, 0) < bytes && p.client.readyState === WebSocket.OPEN; i++) await new Promise((r) => setTimeout(r, 10));
  return Buffer.concat(p.messages);
}

describe('WebSocket tunnel (SPDY over WebSocket)', () => {
  let p: Pair;
  beforeEach(async () => {
    p = await pair();
  });
  afterEach(() => p.close());

  it.each([
    { name: 'SPDY frames written together (header and payload each)', frames: 20, payload: 64 * 1024 },
    { name: 'many small frames', frames: 500, payload: 100 },
    { name: 'one frame', frames: 1, payload: 10 },
  ])('$name reach the client as the same byte stream, in messages of at most 256 KiB', async ({ frames, payload }) => {
    const sent: Buffer[] = [];
    p.tunnel.cork();
    for (let i = 0; i < frames; i++) {
      const data = randomBytes(payload);
      sent.push(dataFrameHeader(1, data.length, false), data);
      p.tunnel.write(sent[sent.length - 2]);
      p.tunnel.write(data);
    }
    p.tunnel.uncork();
    const want = Buffer.concat(sent);
    expect((await received(p, want.length)).equals(want)).toBe(true);
    expect(Math.max(...p.messages.map((m) => m.length))).toBeLessThanOrEqual(MESSAGE_LIMIT);
    if (want.length > MESSAGE_LIMIT) expect(p.messages.length).toBeGreaterThan(1);
  });

  it('a single write larger than a message goes out whole', async () => {
    const big = randomBytes(1024 * 1024 + 3);
    p.tunnel.write(big);
    expect((await received(p, big.length)).equals(big)).toBe(true);
    expect(p.messages.length).toBe(1);
  });

  it('writes while the previous batch is in flight keep their order', async () => {
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(32 * 1024 + i, i));
    for (const c of chunks) p.tunnel.write(c);
    const want = Buffer.concat(chunks);
    expect((await received(p, want.length)).equals(want)).toBe(true);
  });

  it('reads what the client sends as one byte stream', async () => {
    const got: Buffer[] = [];
    p.tunnel.on('data', (d: Buffer) => got.push(d));
    p.client.send(Buffer.from('hello '));
    p.client.send(Buffer.from('world'));
    for (let i = 0; i < 100 && Buffer.concat(got).length < 11; i++) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(got).toString()).toBe('hello world');
  });

  it.each([
    { name: 'the client closes normally', code: 1000 },
    { name: 'the client goes away', code: 1001 },
  ])('ends its readable side when $name', async ({ code }) => {
    const ended = new Promise<void>((r) => p.tunnel.once('end', () => r()));
    p.tunnel.resume();
    p.client.close(code);
    await ended;
    expect(await p.closed).toBe(code);
  });

  it('ending the tunnel closes the WebSocket after the last bytes', async () => {
    const last = randomBytes(300 * 1024);
    p.tunnel.end(last);
    expect(await p.closed).toBe(1005); // a close frame without a status, as createWebSocketStream sends
    expect(Buffer.concat(p.messages).equals(last)).toBe(true);
  });
});

/**
 * A forwarded connection over a real SPDY session on loopback TCP: a pod server writes `payload`
 * in writes of `writeBytes` and ends; a client opens the error and data streams as kubectl does
 * and reads the data stream to its FIN, pausing `pauseMs` after each read (its socket fills, the
 * agent's buffers fill: read buffers are lent while bytes are still queued). Resolves with the bytes.
 */
async function forwardedDownload(payload: Buffer, writeBytes: number, pauseMs: number): Promise<Buffer> {
  const pod = net.createServer((s) => {
    for (let at = 0; at < payload.length; at += writeBytes) s.write(payload.subarray(at, at + writeBytes));
    s.end();
  });
  await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
  const podPort = (pod.address() as AddressInfo).port;
  const agent = net.createServer((s) => servePortForwardSpdy(new SpdySession(s), (_port, onread) => dialTcp('127.0.0.1', podPort, 'pod', onread), 5000));
  await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));
  const client = net.connect({ host: '127.0.0.1', port: (agent.address() as AddressInfo).port });
  const deflate = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY });
  const compressed: Buffer[] = [];
  deflate.on('data', (d: Buffer) => compressed.push(d));
  for (const [id, streamtype] of [[1, 'error'], [3, 'data']] as const) {
    deflate.write(encodeHeaderBlock({ streamtype, port: '80', requestid: '0' }));
    await new Promise<void>((r) => deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => setImmediate(r)));
    const head = Buffer.alloc(10);
    head.writeUInt32BE(id, 0);
    client.write(controlFrame(FrameType.SynStream, 0, Buffer.concat([head, ...compressed.splice(0)])));
  }
  const parser = new FrameParser();
  const got: Buffer[] = [];
  await new Promise<void>((resolve) =>
    client.on('data', (d: Buffer) => {
      for (const f of parser.push(d)) {
        if (f.kind !== 'data' || f.streamId !== 3) continue;
        got.push(Buffer.from(f.data));
        if (f.fin) resolve();
      }
      if (pauseMs) {
        client.pause();
        setTimeout(() => client.resume(), pauseMs);
      }
    }),
  );
  client.destroy();
  deflate.close();
  await Promise.all([pod, agent].map((s) => new Promise((r) => s.close(r))));
  return Buffer.concat(got);
}

describe('port-forward over SPDY', () => {
  it.each([
    { name: '8 MiB in 1 MiB writes, a client that reads as fast as it can', bytes: 8 * 1024 * 1024, writeBytes: 1024 * 1024, pauseMs: 0 },
    { name: '8 MiB in 1 MiB writes, a client that pauses after every read', bytes: 8 * 1024 * 1024, writeBytes: 1024 * 1024, pauseMs: 2 },
    { name: '1 MiB in 1000-byte writes (short reads are copied, not lent)', bytes: 1024 * 1024, writeBytes: 1000, pauseMs: 1 },
  ])("the client reads exactly the pod's bytes: $name", async ({ bytes, writeBytes, pauseMs }) => {
    const payload = randomBytes(bytes);
    const got = await forwardedDownload(payload, writeBytes, pauseMs);
    expect(got.length).toBe(payload.length);
    expect(got.equals(payload)).toBe(true);
  }, 30_000);
});
