import { PassThrough, Writable, type Readable } from 'node:stream';
import type WebSocket from 'ws';
import type { SpdySession, SpdyStream } from './spdy';

/**
 * The exec/attach streaming protocols (upstream remotecommand): which standard streams the
 * client wants, how they travel (WebSocket channels or SPDY streams), and the final status on
 * the error stream. The process side is a {@link StreamTarget}; this module only moves bytes.
 */

/** WebSocket subprotocols in our order of preference (upstream names). */
export const WEBSOCKET_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'] as const;
/** SPDY protocol versions (X-Stream-Protocol-Version) in our order of preference. */
export const SPDY_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io'] as const;

/** Channel numbers of the WebSocket protocols (and the v5 close signal). */
export const enum Channel {
  Stdin = 0,
  Stdout = 1,
  Stderr = 2,
  Error = 3,
  Resize = 4,
  Close = 255,
}

/** Which standard streams a request asks for. */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export class StreamRequestError extends Error {
  override name = 'StreamRequestError';
}

function flag(q: URLSearchParams, ...names: string[]): boolean {
  return names.some((n) => {
    const v = q.get(n);
    return v === '' || v === '1' || v === 'true' || v === 'True';
  });
}

/**
 * The stream options of an exec/attach request. Accepts the API's names (stdin, stdout,
 * stderr) and the node API's (input, output, error); a terminal has no separate stderr.
 */
export function parseStreamOptions(q: URLSearchParams): StreamOptions {
  const tty = flag(q, 'tty');
  const opts = { stdin: flag(q, 'stdin', 'input'), stdout: flag(q, 'stdout', 'output'), stderr: flag(q, 'stderr', 'error') && !tty, tty };
  if (!opts.stdin && !opts.stdout && !opts.stderr) throw new StreamRequestError('you must specify at least 1 of stdin, stdout, stderr');
  return opts;
}

/** A terminal size as the resize stream sends it. */
export interface TerminalSize {
  width: number;
  height: number;
}

/** How a process ended, for the error stream. */
export type ExitStatus = { exitCode: number } | { error: string };

/**
 * The process end of a stream session: an exec'd command or the container's own process
 * (attach). `done` resolves when the session is over (the process exited, or for attach the
 * container ended); `abort()` is called when the client went away first.
 */
export interface StreamTarget {
  stdin?: Writable;
  stdout?: Readable;
  stderr?: Readable;
  resize?(size: TerminalSize): void;
  done: Promise<ExitStatus>;
  abort(): void;
}

/** The client's side of a session, whatever the transport. */
export interface ClientChannels {
  /** Bytes the client sends to stdin (ends when the client closes stdin). */
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** Terminal sizes as the client reports them. */
  onResize(cb: (size: TerminalSize) => void): void;
  /** Sends the final status and ends the session. */
  finish(status: ExitStatus, describe: string): Promise<void>;
  /** Called once if the client leaves before `finish`. */
  onGone(cb: () => void): void;
}

/** The v4+ error-stream Status for an exit (upstream remotecommand). */
export function exitStatusJson(status: ExitStatus, describe: string): string {
  if ('error' in status) return JSON.stringify({ metadata: {}, status: 'Failure', message: status.error, reason: 'InternalError', code: 500 });
  if (status.exitCode === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing ${describe}, exit code ${status.exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(status.exitCode) }] },
  });
}

/** The v1–v3 error-stream text: empty on success. */
function exitStatusText(status: ExitStatus, describe: string): string {
  if ('error' in status) return status.error;
  return status.exitCode === 0 ? '' : `error executing ${describe}: command terminated with non-zero exit code ${status.exitCode}`;
}

const jsonErrors = (protocol: string) => /^v[45]\./.test(protocol);

/**
 * Runs one session: client stdin → process stdin, process output → client, resizes →
 * process; when the process is done and its output drained, the final status goes on the
 * error stream and the session ends. If the client leaves first, the target is aborted; if
 * `ended` resolves first (the connection idled), the target is aborted too and the client gets
 * its reason as the session's error.
 */
export async function serveStreams(client: ClientChannels, target: StreamTarget, describe: string, ended?: Promise<string>): Promise<void> {
  let gone = false;
  client.onGone(() => {
    gone = true;
    target.abort();
  });
  if (client.stdin && target.stdin) {
    const into = target.stdin;
    into.on('error', () => undefined);
    client.stdin.pipe(into);
  } else client.stdin?.resume();
  if (target.resize) client.onResize((s) => target.resize!(s));
  const drained: Promise<void>[] = [];
  const forward = (from: Readable | undefined, to: Writable | undefined) => {
    if (!from) return;
    if (!to) {
      from.resume();
      return;
    }
    drained.push(
      new Promise<void>((resolve) => {
        from.on('end', resolve);
        from.on('close', resolve);
        from.on('error', resolve);
      }),
    );
    from.pipe(to, { end: false });
  };
  forward(target.stdout, client.stdout);
  forward(target.stderr, client.stderr);
  let idled = false;
  const stopped = ended?.then((reason): ExitStatus => {
    idled = true;
    target.abort();
    return { error: reason };
  });
  const status = await (stopped ? Promise.race([target.done, stopped]) : target.done);
  // Output written before the exit still reaches the client (bounded: a grandchild holding the pipe
  // open does not keep the session). Not after an idle close: nothing went either way for the whole
  // timeout, and the connection is destroyed shortly after, so the reason is sent at once.
  if (!idled) await Promise.race([Promise.all(drained), new Promise((r) => setTimeout(r, 2000).unref())]);
  if (!gone) await client.finish(status, describe);
}

/** A Writable that sends each chunk as one message of `channel`. */
class ChannelWriter extends Writable {
  constructor(private readonly send: (data: Buffer, cb: (err?: Error) => void) => void) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.send(chunk, (err) => cb(err ?? null));
  }
}

/**
 * The WebSocket channel protocols (`v5.channel.k8s.io` ... `channel.k8s.io` and the base64
 * variants): each message is one channel byte (an ASCII digit for base64) and its data.
 * v5 adds the close signal (255, channel) with which the client ends its stdin.
 */
export function websocketChannels(ws: WebSocket, protocol: string, opts: StreamOptions): ClientChannels {
  const base64 = protocol.includes('base64');
  const send = (channel: number, data: Buffer, cb?: (err?: Error) => void) => {
    if (ws.readyState !== ws.OPEN) {
      cb?.(new Error('websocket closed'));
      return;
    }
    if (base64) ws.send(String(channel) + data.toString('base64'), cb);
    else ws.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true }, cb);
  };
  const stdin = opts.stdin ? new PassThrough() : undefined;
  const resizers: ((s: TerminalSize) => void)[] = [];
  // The client sends its terminal size first thing, possibly before the process exists.
  let lastSize: TerminalSize | undefined;
  const goneHandlers: (() => void)[] = [];
  let finished = false;
  ws.on('message', (raw: Buffer | string, isBinary: boolean) => {
    let channel: number;
    let data: Buffer;
    if (base64 || !isBinary) {
      const text = raw.toString();
      if (!text) return;
      channel = Number(text[0]);
      data = Buffer.from(text.slice(1), 'base64');
    } else {
      const buf = raw as Buffer;
      if (!buf.length) return;
      channel = buf[0];
      data = buf.subarray(1);
    }
    if (channel === Channel.Stdin) stdin?.write(data);
    else if (channel === Channel.Resize) {
      const size = parseSize(data.toString());
      if (size) {
        lastSize = size;
        for (const r of resizers) r(size);
      }
    } else if (channel === Channel.Close && protocol.startsWith('v5.') && data[0] === Channel.Stdin) stdin?.end();
  });
  ws.on('close', () => {
    stdin?.end();
    if (!finished) for (const g of goneHandlers) g();
  });
  ws.on('error', () => undefined);
  return {
    stdin,
    stdout: opts.stdout ? new ChannelWriter((d, cb) => send(Channel.Stdout, d, cb)) : undefined,
    stderr: opts.stderr ? new ChannelWriter((d, cb) => send(Channel.Stderr, d, cb)) : undefined,
    onResize: (cb) => {
      resizers.push(cb);
      if (lastSize) cb(lastSize);
    },
    onGone: (cb) => goneHandlers.push(cb),
    async finish(status, describe) {
      finished = true;
      const message = jsonErrors(protocol) ? exitStatusJson(status, describe) : exitStatusText(status, describe);
      if (message) await new Promise<void>((r) => send(Channel.Error, Buffer.from(message), () => r()));
      ws.close(1000);
    },
  };
}

function parseSize(text: string): TerminalSize | undefined {
  try {
    const v = JSON.parse(text) as { Width?: number; Height?: number; width?: number; height?: number };
    const width = Number(v.Width ?? v.width);
    const height = Number(v.Height ?? v.height);
    return Number.isFinite(width) && Number.isFinite(height) && width > 0 && height > 0 ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The SPDY protocols (X-Stream-Protocol-Version v2–v5): the client opens one stream per
 * standard stream, named by its `streamtype` header (error first, then stdin, stdout,
 * stderr, resize). Resolves once every expected stream arrived; rejects after `timeoutMs`.
 */
export function spdyChannels(session: SpdySession, protocol: string, opts: StreamOptions, timeoutMs: number): Promise<ClientChannels> {
  const want = new Set(['error', ...(opts.stdin ? ['stdin'] : []), ...(opts.stdout ? ['stdout'] : []), ...(opts.stderr ? ['stderr'] : []), ...(opts.tty && protocol !== 'v2.channel.k8s.io' ? ['resize'] : [])]);
  const streams = new Map<string, SpdyStream>();
  return new Promise<ClientChannels>((resolve, reject) => {
    const timer = setTimeout(() => {
      session.off('stream', onStream);
      reject(new StreamRequestError(`timed out waiting for client to create streams (have ${[...streams.keys()].join(', ') || 'none'}, want ${[...want].join(', ')})`));
    }, timeoutMs);
    timer.unref();
    const onStream = (s: SpdyStream) => {
      const type = s.headers['streamtype'] ?? '';
      if (!want.has(type) || streams.has(type)) {
        s.reset();
        return;
      }
      s.reply();
      streams.set(type, s);
      if (streams.size < want.size) return;
      clearTimeout(timer);
      session.off('stream', onStream);
      resolve(channelsOf(session, streams, protocol));
    };
    session.on('stream', onStream);
    session.once('close', () => {
      clearTimeout(timer);
      reject(new StreamRequestError('the client closed the connection before creating its streams'));
    });
  });
}

function channelsOf(session: SpdySession, streams: Map<string, SpdyStream>, protocol: string): ClientChannels {
  const goneHandlers: (() => void)[] = [];
  let finished = false;
  session.once('close', () => {
    if (!finished) for (const g of goneHandlers) g();
  });
  const resize = streams.get('resize');
  for (const s of streams.values()) s.on('error', () => undefined);
  return {
    stdin: streams.get('stdin'),
    stdout: streams.get('stdout'),
    stderr: streams.get('stderr'),
    onResize(cb) {
      if (!resize) return;
      let buf = '';
      resize.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const size = parseSize(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (size) cb(size);
        }
        const tail = buf.trim() ? parseSize(buf) : undefined;
        if (tail) {
          buf = '';
          cb(tail);
        }
      });
    },
    onGone: (cb) => goneHandlers.push(cb),
    async finish(status, describe) {
      finished = true;
      const message = jsonErrors(protocol) ? exitStatusJson(status, describe) : exitStatusText(status, describe);
      const error = streams.get('error')!;
      await new Promise<void>((r) => error.end(message ? Buffer.from(message) : undefined, () => r()));
      for (const s of ['stdout', 'stderr']) streams.get(s)?.end();
      // The client closes the connection once it read the status; make sure it ends anyway.
      setTimeout(() => session.close(), 5000).unref();
    },
  };
}
