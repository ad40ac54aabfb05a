/**
 * The ideal port-forward server of the node-agent bench's ceiling row, a process of its own: a
 * TLS server that kubectl port-forwards through as if it were the gateway. The upgrade is the one
 * the node agent does (its negotiation, WebSocket server and SPDY session, from dist/), so kubectl
 * speaks exactly the protocol it gets from orch (`SPDY/3.1+portforward.k8s.io`, SPDY tunnelled in
 * WebSocket messages, or plain SPDY/3.1); every data stream then gets `megabytes` MiB from memory
 * in DATA frames of `frameBytes`, `framesPerMessage` of them per WebSocket message, prebuilt once:
 * no pod, no relay, no copy. Other requests (discovery, the pod kubectl reads first) are proxied
 * to the real gateway with the admin credentials.
 *
 * Config (env ORCH_PF_SERVER, JSON {@link PortForwardServerConfig}); says `{ ready: ports }` over
 * IPC, one port per entry of `shapes`, in order, and `{ upgrade }` ({@link SeenUpgrade}) for every
 * upgrade request, so the bench can say which transport kubectl really used.
 */
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { ROOT } from './gateway-process';

/** The frame layout one listening port serves. */
export interface FrameShape {
  /** Payload bytes of each SPDY DATA frame (at most 2^24 - 1). */
  frameBytes: number;
  /** DATA frames per WebSocket message (plain SPDY: per socket write). */
  framesPerMessage: number;
}

export interface PortForwardServerConfig {
  gateway: string;
  /** Admin credentials for the proxied requests, PEM. */
  creds: { ca: string; cert: string; key: string };
  /** The gateway's serving certificate and key (kubectl's kubeconfig trusts its CA). */
  serving: { cert: string; key: string };
  megabytes: number;
  shapes: FrameShape[];
}

/** An upgrade the server saw (said over IPC as `{ upgrade }`): the port, the request's `Upgrade` header and the protocol negotiated. */
export interface SeenUpgrade {
  port: number;
  upgrade: string;
  protocol: string;
}

interface SpdyStreamLike extends Duplex {
  headers: Record<string, string>;
  id: number;
  reply(): void;
}
interface SessionLike {
  on(event: 'stream', cb: (s: SpdyStreamLike) => void): void;
}
type Accepted = { transport: 'websocket'; ws: WebSocket } | { transport: 'spdy'; session: SessionLike };
interface AgentStreaming {
  negotiate(req: IncomingMessage, p: { websocket: readonly string[]; spdy: readonly string[] }): { transport: 'websocket' | 'spdy'; protocol: string };
  Upgrader: new () => { accept(req: IncomingMessage, socket: Duplex, head: Buffer, choice: { transport: 'websocket' | 'spdy'; protocol: string }): Promise<Accepted> };
  SpdySession: new (transport: Duplex) => SessionLike;
  webSocketTunnel(ws: WebSocket, socket: Duplex, highWaterMark: number): Duplex;
  dataFrameHeader(streamId: number, length: number, fin: boolean): Buffer;
  STREAM_BUFFER_BYTES: number;
  PORT_FORWARD_TUNNEL_PROTOCOL: string;
  PORT_FORWARD_SPDY_PROTOCOL: string;
}

function agentStreaming(): AgentStreaming {
  const load = createRequire(__filename);
  const dir = join(ROOT, 'dist', 'apps', 'node-agent', 'src', 'streaming');
  return { ...load(join(dir, 'upgrade.js')), ...load(join(dir, 'spdy.js')), ...load(join(dir, 'port-forward.js')) } as AgentStreaming;
}

/** `frames` DATA frames of `shape.frameBytes` for stream `id`, headers included, in one buffer. */
function prebuiltMessage(a: AgentStreaming, id: number, shape: FrameShape): Buffer {
  const frame = shape.frameBytes + 8;
  const out = Buffer.alloc(frame * shape.framesPerMessage, 7);
  for (let i = 0; i < shape.framesPerMessage; i++) a.dataFrameHeader(id, shape.frameBytes, false).copy(out, i * frame);
  return out;
}

/**
 * Sends `total` bytes on data stream `data` as prebuilt messages through `send` (one WebSocket
 * message, or one socket write), waiting for `socket`'s drain when it asks to; then ends the
 * data stream and the error stream (FIN on both: kubectl closes the local connection).
 */
function serveDownload(a: AgentStreaming, shape: FrameShape, total: number, streams: { data: SpdyStreamLike; error: SpdyStreamLike }, socket: Duplex, send: (b: Buffer) => void): void {
  const message = prebuiltMessage(a, streams.data.id, shape);
  const payloadPerMessage = shape.frameBytes * shape.framesPerMessage;
  let sent = 0;
  const more = () => {
    while (sent < total) {
      const left = total - sent;
      if (left >= payloadPerMessage) {
        send(message);
        sent += payloadPerMessage;
      } else {
        send(Buffer.concat([a.dataFrameHeader(streams.data.id, left, false), message.subarray(8, 8 + left)]));
        sent = total;
      }
      if (socket.writableNeedDrain) return void socket.once('drain', more);
    }
    streams.data.end();
    streams.error.end();
  };
  // After this turn: the SYN_REPLYs, written corked by the session, go out first.
  setImmediate(more);
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.ORCH_PF_SERVER ?? '') as PortForwardServerConfig;
  const a = agentStreaming();
  const upgrader = new a.Upgrader();
  const gateway = new URL(cfg.gateway);
  const proxy = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const up = https.request({ host: gateway.hostname, port: gateway.port, method: req.method, path: req.url, headers: { ...req.headers, host: gateway.host }, ca: cfg.creds.ca, cert: cfg.creds.cert, key: cfg.creds.key }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (err) => res.destroy(err));
    req.pipe(up);
  };
  const ports: number[] = [];
  for (const shape of cfg.shapes) {
    const server = https.createServer({ cert: cfg.serving.cert, key: cfg.serving.key }, proxy);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void (async () => {
        const choice = a.negotiate(req, { websocket: [a.PORT_FORWARD_TUNNEL_PROTOCOL], spdy: [a.PORT_FORWARD_SPDY_PROTOCOL] });
        const upgrade: SeenUpgrade = { port: (server.address() as AddressInfo).port, upgrade: String(req.headers.upgrade ?? ''), protocol: choice.protocol };
        process.send!({ upgrade });
        const accepted = await upgrader.accept(req, socket, head, choice);
        const session = accepted.transport === 'spdy' ? accepted.session : new a.SpdySession(a.webSocketTunnel(accepted.ws, socket, a.STREAM_BUFFER_BYTES));
        const send = accepted.transport === 'spdy' ? (b: Buffer) => void socket.write(b) : (b: Buffer) => accepted.ws.send(b, { binary: true });
        const pairs = new Map<string, { data?: SpdyStreamLike; error?: SpdyStreamLike }>();
        session.on('stream', (s) => {
          s.reply();
          s.resume();
          const id = s.headers['requestid'] ?? '';
          const pair = pairs.get(id) ?? {};
          pairs.set(id, pair);
          pair[s.headers['streamtype'] === 'data' ? 'data' : 'error'] = s;
          if (pair.data && pair.error) {
            pairs.delete(id);
            serveDownload(a, shape, cfg.megabytes * 1048576, { data: pair.data, error: pair.error }, socket, send);
          }
        });
      })().catch(() => socket.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    ports.push((server.address() as AddressInfo).port);
  }
  process.send!({ ready: ports });
}

main().catch((err: Error) => process.send!({ error: err.stack ?? err.message }));
