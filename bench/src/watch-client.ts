/**
 * One process of the scale benchmark's watchers (spawned with IPC by scale.ts, so that the
 * watchers' TLS and parsing are spread over several processes and measured apart from the
 * gateways). Each watch is its own HTTPS connection; for every event received it records the
 * `seq` the writer put into the object and the wall-clock time it arrived (the writer's
 * process compares it with when it sent the write and when etcd's change feed showed it).
 *
 * Protocol: config as JSON in ORCH_WATCH_CLIENT; the process sends `{ ready }` once every
 * watch has its response headers, and on the message `stop` answers `{ done }` with its
 * deliveries and CPU time, then exits.
 */
import type net from 'node:net';
import tls from 'node:tls';

export interface WatchClientConfig {
  /** One entry per watch: the gateway URL and the watch path. */
  watches: { url: string; path: string }[];
  ca: string;
  cert: string;
  key: string;
}

export interface WatchClientReport {
  /** Per delivery: the event's seq and the wall-clock ms it arrived at. */
  seqs: number[];
  arrivals: number[];
  /** CPU seconds (user + system) this process used while watching. */
  cpuSeconds: number;
}

const SEQ = Buffer.from('"seq":"');
const HEADERS_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

/** Wall-clock milliseconds with sub-millisecond precision (comparable across processes). */
export const wallClockMs = () => performance.timeOrigin + performance.now();

/**
 * Where every watch of the process reads its bytes: a read is handled before the next one
 * begins (onread calls back synchronously), so one buffer serves all the connections.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * One watch on its own TLS connection, read as bytes: the request is written by hand and the
 * response is scanned for the writer's `"seq":"<n>"` marker, line by line, with no HTTP client
 * and no JSON parse in between (node:https's parser and streams cost this process about as
 * much CPU per event as the gateway spent writing it, and a watcher process that falls behind
 * inflates the latencies it reports). The chunked framing needs no decoding: a chunk's size
 * line never holds the marker, and an event line ends with its own newline. The decrypted
 * bytes land in READ_BUFFER (`onread`: no Buffer and no readable-stream 'data' event per read,
 * about 5 µs less per delivery of a 300 B event measured on this 2-core machine); every byte
 * of every event is still read and scanned.
 */
function openWatch(url: string, path: string, context: tls.SecureContext, onHeaders: (status: number) => void, onSeq: (seq: number, at: number) => void): tls.TLSSocket {
  const { hostname, port } = new URL(url);
  let headers = true;
  // Lines are never split across the marker search: keep the partial tail (a copy: READ_BUFFER is reused) between reads.
  let tail = EMPTY;
  /** Scans the `length` bytes just read into READ_BUFFER; true: keep reading. */
  const onRead = (length: number): boolean => {
    const now = wallClockMs();
    const read = READ_BUFFER.subarray(0, length);
    let buf = tail.length ? Buffer.concat([tail, read]) : read;
    if (headers) {
      const end = buf.indexOf(HEADERS_END);
      if (end < 0) {
        tail = Buffer.from(buf);
        return true;
      }
      headers = false;
      onHeaders(Number(/^HTTP\/1\.1 (\d{3})/.exec(buf.toString('latin1', 0, Math.min(end, 64)))?.[1] ?? 0));
      buf = buf.subarray(end + HEADERS_END.length);
    }
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl >= 0; from = nl + 1, nl = buf.indexOf(10, from)) {
      const at = buf.indexOf(SEQ, from);
      if (at < 0 || at > nl) continue;
      const start = at + SEQ.length;
      onSeq(Number(buf.toString('latin1', start, buf.indexOf(34, start))), now);
    }
    tail = from < buf.length ? Buffer.from(buf.subarray(from)) : EMPTY;
    return true;
  };
  // tls.connect takes socket.connect()'s options too (Node's typings leave `onread` out).
  const options: tls.ConnectionOptions & Pick<net.TcpNetConnectOpts, 'onread'> = { host: hostname, port: Number(port), secureContext: context, onread: { buffer: READ_BUFFER, callback: onRead } };
  const socket = tls.connect(options, () => {
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\naccept: application/json\r\n\r\n`);
  });
  return socket;
}

function main(): void {
  const cfg = JSON.parse(process.env.ORCH_WATCH_CLIENT ?? '{}') as WatchClientConfig;
  const seqs: number[] = [];
  const arrivals: number[] = [];
  // One secure context for every connection (one per connection costs a key parse each).
  const context = tls.createSecureContext({ ca: cfg.ca, cert: cfg.cert, key: cfg.key });
  let cpuAtReady = process.cpuUsage();
  let open = 0;
  const sockets = cfg.watches.map(({ url, path }) => {
    const socket = openWatch(
      url,
      path,
      context,
      (status) => {
        if (status !== 200) {
          process.send!({ error: `${url}${path}: HTTP ${status}` });
          return;
        }
        if (++open === cfg.watches.length) {
          cpuAtReady = process.cpuUsage();
          process.send!({ ready: true });
        }
      },
      (seq, at) => {
        seqs.push(seq);
        arrivals.push(at);
      },
    );
    socket.on('error', (err) => {
      process.send!({ error: `${url}${path}: ${err.message}` });
    });
    return socket;
  });
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    const cpu = process.cpuUsage(cpuAtReady);
    for (const s of sockets) s.destroy();
    const report: WatchClientReport = { seqs, arrivals, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
    process.send!({ done: report }, () => process.exit(0));
  });
}

if (require.main === module) main();
