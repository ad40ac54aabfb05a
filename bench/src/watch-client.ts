/**
 * One process of the benchmarks' watchers (spawned with IPC by scale.ts and gateway-watch.ts, so
 * that the watchers' TLS and parsing are spread over several processes and measured apart from
 * the gateways). For every event received it records the `seq` the writer put into the object
 * and the wall-clock time it arrived (the writer's process compares it with when it sent the
 * write and when etcd's change feed showed it).
 *
 * Two ways to hold the watches (`protocol`):
 * - `http/1.1` (the default): each watch is its own HTTPS connection.
 * - `h2`: the watches to one gateway share HTTP/2 sessions (ALPN h2), as client-go and kubectl
 *   multiplex every watch of a process on one connection: one session per gateway, more only
 *   when `watchesPerSession` or the server's SETTINGS_MAX_CONCURRENT_STREAMS is below the
 *   process's watches of that gateway (Go's transport opens another connection then too).
 *
 * Protocol: config as JSON in ORCH_WATCH_CLIENT; the process sends `{ ready }` once every
 * watch has its response headers, and on the message `stop` answers `{ done }` with its
 * deliveries and CPU time, then exits.
 */
import http2 from 'node:http2';
import type net from 'node:net';
import tls from 'node:tls';

export const WATCH_PROTOCOLS = ['http/1.1', 'h2'] as const;
export type WatchProtocol = (typeof WATCH_PROTOCOLS)[number];

export interface WatchClientConfig {
  /** One entry per watch: the gateway URL and the watch path. */
  watches: { url: string; path: string }[];
  ca: string;
  cert: string;
  key: string;
  /** How the watches are held (see the module comment); default `http/1.1`. */
  protocol?: WatchProtocol;
  /** h2 only: at most this many watch streams per session (default: no limit but the server's). */
  watchesPerSession?: number;
}

export interface WatchClientReport {
  /** Per delivery: the event's seq and the wall-clock ms it arrived at. */
  seqs: number[];
  arrivals: number[];
  /** CPU seconds (user + system) this process used while watching. */
  cpuSeconds: number;
  /** Connections the watches used (HTTP/1.1: one per watch; h2: the sessions). */
  connections: number;
}

const SEQ = Buffer.from('"seq":"');
const HEADERS_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

/** Wall-clock milliseconds with sub-millisecond precision (comparable across processes). */
export const wallClockMs = () => performance.timeOrigin + performance.now();

/**
 * Whether the server at `url` serves `protocol`: undefined if it does, else why not. For h2,
 * the protocol its ALPN picks when a client offers h2 and http/1.1 (a gateway that serves
 * HTTP/1.1 only picks http/1.1, or none).
 */
export async function whyNotServed(url: string, creds: { ca: string; cert: string; key: string }, protocol: WatchProtocol): Promise<string | undefined> {
  if (protocol === 'http/1.1') return undefined;
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ...creds, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
      const picked = socket.alpnProtocol;
      socket.destroy();
      resolve(picked === 'h2' ? undefined : `ALPN picked ${picked || 'no protocol'}`);
    });
    socket.on('error', (err) => resolve(`connect failed: ${err.message}`));
  });
}

/**
 * Scans an event stream's body for the writer's `"seq":"<n>"` marker, line by line (an event
 * line ends with its own newline), with no JSON parse; a line split between reads is kept (a
 * copy: the reads' buffers may be reused) and scanned with the next read.
 */
function seqScanner(onSeq: (seq: number, at: number) => void): (bytes: Buffer, now: number) => void {
  let tail = EMPTY;
  return (bytes, now) => {
    const buf = tail.length ? Buffer.concat([tail, bytes]) : bytes;
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl >= 0; from = nl + 1, nl = buf.indexOf(10, from)) {
      const at = buf.indexOf(SEQ, from);
      if (at < 0 || at > nl) continue;
      const start = at + SEQ.length;
      onSeq(Number(buf.toString('latin1', start, buf.indexOf(34, start))), now);
    }
    tail = from < buf.length ? Buffer.from(buf.subarray(from)) : EMPTY;
  };
}

/**
 * Where every HTTP/1.1 watch of the process reads its bytes: a read is handled before the next
 * one begins (onread calls back synchronously), so one buffer serves all the connections.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * One watch on its own TLS connection, read as bytes: the request is written by hand and the
 * response is scanned for the seq marker (seqScanner), with no HTTP client in between
 * (node:https's parser and streams cost this process about as much CPU per event as the
 * gateway spent writing it, and a watcher process that falls behind inflates the latencies it
 * reports). The chunked framing needs no decoding: a chunk's size line never holds the marker.
 * The decrypted bytes land in READ_BUFFER (`onread`: no Buffer and no readable-stream 'data'
 * event per read, about 5 µs less per delivery of a 300 B event measured on this 2-core
 * machine); every byte of every event is still read and scanned.
 */
function openWatch(url: string, path: string, context: tls.SecureContext, onHeaders: (status: number) => void, onSeq: (seq: number, at: number) => void): () => void {
  const { hostname, port } = new URL(url);
  // The response head read so far (a copy: READ_BUFFER is reused); undefined once it is complete.
  let head: Buffer | undefined = EMPTY;
  const scan = seqScanner(onSeq);
  /** Scans the `length` bytes just read into READ_BUFFER; true: keep reading. */
  const onRead = (length: number): boolean => {
    const now = wallClockMs();
    let body = READ_BUFFER.subarray(0, length);
    if (head) {
      const buf = head.length ? Buffer.concat([head, body]) : body;
      const end = buf.indexOf(HEADERS_END);
      if (end < 0) {
        head = Buffer.from(buf);
        return true;
      }
      head = undefined;
      onHeaders(Number(/^HTTP\/1\.1 (\d{3})/.exec(buf.toString('latin1', 0, Math.min(end, 64)))?.[1] ?? 0));
      body = buf.subarray(end + HEADERS_END.length);
    }
    scan(body, now);
    return true;
  };
  // tls.connect takes socket.connect()'s options too (Node's typings leave `onread` out).
  const options: tls.ConnectionOptions & Pick<net.TcpNetConnectOpts, 'onread'> = { host: hostname, port: Number(port), secureContext: context, onread: { buffer: READ_BUFFER, callback: onRead } };
  const socket = tls.connect(options, () => {
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\naccept: application/json\r\n\r\n`);
  });
  socket.on('error', (err) => process.send!({ error: `${url}${path}: ${err.message}` }));
  return () => socket.destroy();
}

/**
 * Flow-control windows of the h2 sessions: client-go's (Go's transport: 1 GiB per connection,
 * 4 MiB per stream), not Node's 64 KiB defaults, which would hold a burst of one event to
 * hundreds of streams of one session back until the window updates come.
 */
const H2_CONNECTION_WINDOW = 1 << 30;
const H2_STREAM_WINDOW = 4 << 20;

/** An h2 session to `url` once the server's SETTINGS have arrived (its stream limit known). */
function connectH2(url: string, context: tls.SecureContext): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, { secureContext: context, settings: { initialWindowSize: H2_STREAM_WINDOW } });
    session.once('error', reject);
    session.once('remoteSettings', () => {
      session.off('error', reject);
      session.on('error', (err) => process.send!({ error: `${url}: h2 session: ${err.message}` }));
      session.setLocalWindowSize(H2_CONNECTION_WINDOW);
      resolve(session);
    });
  });
}

/**
 * The watches `paths` of one gateway as streams of shared h2 sessions (a new session when one
 * is full: `perSession` or the server's stream limit). Each stream's DATA is scanned as Node's
 * http2 hands it over (one Buffer per DATA frame, no copy); the body has no chunked framing.
 */
async function openH2Watches(url: string, paths: string[], context: tls.SecureContext, perSession: number, onHeaders: (status: number, path: string) => void, onSeq: (seq: number, at: number) => void): Promise<http2.ClientHttp2Session[]> {
  const sessions: http2.ClientHttp2Session[] = [];
  let session: http2.ClientHttp2Session | undefined;
  let room = 0;
  for (const path of paths) {
    if (!session || room === 0) {
      session = await connectH2(url, context);
      sessions.push(session);
      room = Math.min(perSession, session.remoteSettings.maxConcurrentStreams ?? Infinity);
    }
    room--;
    const scan = seqScanner(onSeq);
    const stream = session.request({ ':method': 'GET', ':path': path, accept: 'application/json' });
    stream.on('response', (headers) => onHeaders(Number(headers[':status']), path));
    stream.on('data', (chunk: Buffer) => scan(chunk, wallClockMs()));
    stream.on('error', (err) => process.send!({ error: `${url}${path}: ${err.message}` }));
  }
  return sessions;
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.ORCH_WATCH_CLIENT ?? '{}') as WatchClientConfig;
  const seqs: number[] = [];
  const arrivals: number[] = [];
  // One secure context for every connection (one per connection costs a key parse each).
  const context = tls.createSecureContext({ ca: cfg.ca, cert: cfg.cert, key: cfg.key });
  let cpuAtReady = process.cpuUsage();
  let open = 0;
  const onHeaders = (status: number, where: string) => {
    if (status !== 200) {
      process.send!({ error: `${where}: HTTP ${status}` });
      return;
    }
    if (++open === cfg.watches.length) {
      cpuAtReady = process.cpuUsage();
      process.send!({ ready: true });
    }
  };
  const onSeq = (seq: number, at: number) => {
    seqs.push(seq);
    arrivals.push(at);
  };
  const closers: (() => void)[] = [];
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    const cpu = process.cpuUsage(cpuAtReady);
    for (const close of closers) close();
    const report: WatchClientReport = { seqs, arrivals, cpuSeconds: (cpu.user + cpu.system) / 1e6, connections: closers.length };
    process.send!({ done: report }, () => process.exit(0));
  });
  if (cfg.protocol === 'h2') {
    const byUrl = new Map<string, string[]>();
    for (const { url, path } of cfg.watches) {
      const paths = byUrl.get(url) ?? [];
      paths.push(path);
      byUrl.set(url, paths);
    }
    for (const [url, paths] of byUrl) {
      const sessions = await openH2Watches(url, paths, context, cfg.watchesPerSession ?? Infinity, (status, path) => onHeaders(status, `${url}${path}`), onSeq).catch((err: Error) => {
        process.send!({ error: `${url}: h2: ${err.message}` });
        return [];
      });
      closers.push(...sessions.map((s) => () => s.destroy()));
    }
  } else {
    for (const { url, path } of cfg.watches) closers.push(openWatch(url, path, context, (status) => onHeaders(status, `${url}${path}`), onSeq));
  }
}

if (require.main === module) void main();
