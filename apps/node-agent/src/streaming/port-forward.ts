import net from 'node:net';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, type WebSocket } from 'ws';
import type { SpdySession, SpdyStream } from './spdy';

/**
 * The port-forward protocols: SPDY `portforward.k8s.io` (also tunnelled in a WebSocket as
 * `SPDY/3.1+portforward.k8s.io`, what kubectl 1.32 tries first), and the older WebSocket
 * channel protocol (`v4.channel.k8s.io`, ports in the query) that some client libraries use.
 */

export const PORT_FORWARD_SPDY_PROTOCOL = 'portforward.k8s.io';
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
export const PORT_FORWARD_WEBSOCKET_PROTOCOLS = ['v4.channel.k8s.io', 'channel.k8s.io'] as const;

/** Largest WebSocket message a tunnel sends: writes buffered meanwhile go out as fragments of messages up to this size. */
const TUNNEL_MESSAGE_BYTES = 256 * 1024;

/**
 * The byte stream of a WebSocket carrying SPDY (`SPDY/3.1+portforward.k8s.io`): the peer reads
 * the messages as one byte stream, so writes buffered together (a SPDY frame's header and
 * payload, written corked; frames queued while the socket was busy) go out as the fragments of
 * messages of at most {@link TUNNEL_MESSAGE_BYTES}, all in one write of `socket` (the connection
 * the WebSocket runs on, corked meanwhile): one TLS write per batch, and no payload is copied to
 * join them up.
 */
export function webSocketTunnel(ws: WebSocket, socket: Duplex, highWaterMark: number): Duplex {
  const stream = createWebSocketStream(ws, { highWaterMark });
  stream._writev = (chunks, cb) => {
    socket.cork();
    let size = 0;
    chunks.forEach(({ chunk }: { chunk: Buffer }, i) => {
      size += chunk.length;
      const last = i === chunks.length - 1;
      const fin = last || size + chunks[i + 1].chunk.length > TUNNEL_MESSAGE_BYTES;
      if (fin) size = 0;
      ws.send(chunk, { binary: true, fin }, last ? cb : undefined);
    });
    socket.uncork();
  };
  return stream;
}

/** Opens a TCP connection to the pod's port (or throws a message for the client); `onread`: as net.connect's (the connection then reads into the caller's buffers). */
export type PodDialer = (port: number, onread?: net.OnReadOpts) => Promise<net.Socket>;

/** Connects to `host:port`, rejecting with upstream's message on failure. */
export function dialTcp(host: string, port: number, describe: string, onread?: net.OnReadOpts): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port, ...(onread ? { onread } : {}) });
    sock.once('connect', () => {
      sock.removeAllListeners('error');
      resolve(sock);
    });
    sock.once('error', (err) => reject(new Error(`error forwarding port ${port} to ${describe}: failed to connect to ${host}:${port}: ${err.message}`)));
  });
}

function parsePort(v: string | undefined): number | undefined {
  if (!v || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n > 0 && n < 65536 ? n : undefined;
}

interface PendingPair {
  error?: SpdyStream;
  data?: SpdyStream;
  timer: NodeJS.Timeout;
}

/**
 * Serves SPDY port-forwarding: for every local connection the client opens an error stream
 * and a data stream with the same `requestid` and `port` headers. Once both are there the
 * pod's port is dialled and bytes are copied both ways; a half-close travels as FIN; when the
 * data stream ends the error stream is closed (carrying the error, if any), which tells the
 * client the connection is over. Pairs incomplete after `timeoutMs` are reset.
 */
export function servePortForwardSpdy(session: SpdySession, dial: PodDialer, timeoutMs: number): void {
  const pending = new Map<string, PendingPair>();
  session.on('stream', (s) => {
    const type = s.headers['streamtype'];
    const port = parsePort(s.headers['port']);
    const id = s.headers['requestid'] ?? '';
    if ((type !== 'error' && type !== 'data') || port === undefined) {
      s.reset();
      return;
    }
    s.reply();
    s.on('error', () => undefined);
    let pair = pending.get(id);
    if (!pair) {
      const timer = setTimeout(() => {
        pending.delete(id);
        pair?.error?.reset();
        pair?.data?.reset();
      }, timeoutMs);
      timer.unref();
      pair = { timer };
      pending.set(id, pair);
    }
    if (pair[type]) {
      s.reset();
      return;
    }
    pair[type] = s;
    if (pair.error && pair.data) {
      clearTimeout(pair.timer);
      pending.delete(id);
      void forward(pair.error, pair.data, port, dial);
    }
  });
  session.on('close', () => {
    for (const p of pending.values()) clearTimeout(p.timer);
    pending.clear();
  });
}

/** Size of the buffers a forwarded connection reads the pod's socket into (what Node reads at most per read). */
const POD_READ_BYTES = 64 * 1024;
/** Reads shorter than this are copied out and their buffer reused at once: a lent buffer then holds at most twice the bytes it carries. */
const LEND_AT_LEAST_BYTES = POD_READ_BYTES / 2;

/**
 * The pod → client direction of a forwarded connection without a new buffer per read: the pod's
 * socket reads into buffers of {@link POD_READ_BYTES} that are lent to the data stream and reused
 * once the transport has written them out. A new buffer per read made the agent's V8 heap count
 * about 1 GiB of external memory per GiB forwarded, and a full mark-compact ran about every
 * 25 MiB (half the agent's CPU during a download, twice a bare relay's; bench --node-agent-profile).
 * Returns the `onread` for the pod's socket; `deliver(chunk, lent)` gets each read and says whether to go on reading.
 */
function lendingReader(deliver: (chunk: Buffer, release?: () => void) => boolean): net.OnReadOpts {
  const free: Buffer[] = [];
  return {
    buffer: () => free.pop() ?? Buffer.allocUnsafeSlow(POD_READ_BYTES),
    callback: (n, buf) => {
      if (n < LEND_AT_LEAST_BYTES) {
        const more = deliver(Buffer.from(buf.subarray(0, n)));
        free.push(buf as Buffer);
        return more;
      }
      return deliver(buf.subarray(0, n) as Buffer, () => free.push(buf as Buffer));
    },
  };
}

async function forward(errorStream: SpdyStream, data: SpdyStream, port: number, dial: PodDialer): Promise<void> {
  errorStream.resume(); // the client never writes to it
  let sock: net.Socket;
  // Pod bytes go to the data stream as they are read (the socket emits no 'data'); a full stream pauses the socket until it drains.
  const toClient = lendingReader((chunk, release) => !data.destroyed && (release ? data.writeLoaned(chunk, release) : data.write(chunk)));
  try {
    sock = await dial(port, toClient);
  } catch (err) {
    errorStream.end((err as Error).message);
    data.end();
    return;
  }
  let closed = false;
  const finish = (message?: string) => {
    if (closed) return;
    closed = true;
    sock.destroy();
    if (!data.destroyed) data.end();
    if (!errorStream.destroyed) errorStream.end(message);
  };
  sock.on('error', (err) => finish(`error forwarding port ${port}: ${err.message}`));
  sock.on('close', () => finish());
  data.on('reset', () => finish());
  data.on('close', () => finish());
  // Client FIN → half-close towards the pod; pod EOF → FIN towards the client.
  data.pipe(sock);
  data.on('drain', () => sock.resume());
  sock.on('end', () => data.end());
}

/**
 * The WebSocket channel protocol: `?ports=80,443` (or `port=`), channel 2i carries the data
 * of the i-th port and 2i+1 its errors; the first message on each channel is the port number
 * (two bytes, little endian). One TCP connection per port for the life of the WebSocket.
 */
export async function servePortForwardWebSocket(ws: WebSocket, ports: number[], dial: PodDialer): Promise<void> {
  const send = (channel: number, data: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true });
  };
  const sockets: (net.Socket | undefined)[] = [];
  ws.on('message', (raw: Buffer) => {
    if (!raw.length) return;
    const channel = raw[0];
    const sock = channel % 2 === 0 ? sockets[channel / 2] : undefined;
    sock?.write(raw.subarray(1));
  });
  ws.on('close', () => {
    for (const s of sockets) s?.destroy();
  });
  ws.on('error', () => undefined);
  const portPrefix = (p: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(p, 0);
    return b;
  };
  await Promise.all(
    ports.map(async (port, i) => {
      send(2 * i, portPrefix(port));
      send(2 * i + 1, portPrefix(port));
      try {
        const sock = await dial(port);
        sockets[i] = sock;
        sock.on('data', (d: Buffer) => send(2 * i, d));
        sock.on('error', (err) => send(2 * i + 1, Buffer.from(err.message)));
        sock.on('close', () => ws.close(1000));
      } catch (err) {
        send(2 * i + 1, Buffer.from((err as Error).message));
      }
    }),
  );
}

/** Ports of a WebSocket port-forward request (`ports=80,8080` or repeated `port=`). */
export function parsePortsQuery(q: URLSearchParams): number[] {
  const raw = [...q.getAll('ports'), ...q.getAll('port')].flatMap((v) => v.split(','));
  const out: number[] = [];
  for (const v of raw) {
    const p = parsePort(v.trim());
    if (p === undefined) throw new Error(`invalid port ${JSON.stringify(v)}`);
    out.push(p);
  }
  return out;
}
