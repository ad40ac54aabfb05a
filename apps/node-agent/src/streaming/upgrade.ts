import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SpdySession } from './spdy';

/**
 * Protocol negotiation of streaming requests (upstream httpstream / wsstream): a request
 * asking for `Upgrade: websocket` gets a WebSocket with the first subprotocol of ours it
 * offers; one asking for `Upgrade: SPDY/3.1` gets a SPDY session with the first
 * `X-Stream-Protocol-Version` of its list that we serve. Anything else is an HTTP error on the
 * raw socket, so a client can fall back to its other transport.
 */

export type Accepted = { transport: 'websocket'; ws: WebSocket; protocol: string } | { transport: 'spdy'; session: SpdySession; protocol: string };

/** The protocols one endpoint serves, per transport, in order of preference. */
export interface EndpointProtocols {
  websocket: readonly string[];
  spdy: readonly string[];
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
export function rejectUpgrade(socket: Duplex, code: number, message: string): void {
  if (socket.destroyed) return;
  const body = Buffer.from(message.endsWith('\n') ? message : `${message}\n`);
  socket.end(`HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`);
  setTimeout(() => socket.destroy(), 1000).unref();
}

function headerList(v: string | string[] | undefined): string[] {
  return (Array.isArray(v) ? v : v ? [v] : []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
}

/** An error to answer instead of upgrading. */
export class UpgradeError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The transport and protocol a request gets, or an {@link UpgradeError}. */
export function negotiate(req: IncomingMessage, protocols: EndpointProtocols): { transport: 'websocket' | 'spdy'; protocol: string } {
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (upgrade === 'websocket') {
    const offered = headerList(req.headers['sec-websocket-protocol']);
    // A client that names no subprotocol speaks the first (oldest) channel protocol.
    if (offered.length === 0) return { transport: 'websocket', protocol: '' };
    const protocol = offered.find((p) => protocols.websocket.includes(p));
    if (!protocol) throw new UpgradeError(400, `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(offered)}, server supports ${JSON.stringify(protocols.websocket)}`);
    return { transport: 'websocket', protocol };
  }
  if (upgrade === 'spdy/3.1') {
    const offered = headerList(req.headers['x-stream-protocol-version']);
    const protocol = offered.find((p) => protocols.spdy.includes(p));
    if (!protocol) throw new UpgradeError(403, `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(offered)}, server accepts ${JSON.stringify(protocols.spdy)}`);
    return { transport: 'spdy', protocol };
  }
  throw new UpgradeError(400, `unable to upgrade: unsupported upgrade ${JSON.stringify(req.headers.upgrade ?? '')} (want websocket or SPDY/3.1)`);
}

/** Completes upgrades chosen by {@link negotiate}. */
export class Upgrader {
  private readonly chosen = new WeakMap<IncomingMessage, string>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (_offered, req) => this.chosen.get(req) || false,
  });

  /** Switches protocols. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, choice: { transport: 'websocket' | 'spdy'; protocol: string }): Promise<Accepted> {
    (socket as Duplex & { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
    if (choice.transport === 'spdy') {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${choice.protocol}\r\n\r\n`);
      if (head.length) socket.unshift(head);
      return Promise.resolve({ transport: 'spdy', session: new SpdySession(socket), protocol: choice.protocol });
    }
    this.chosen.set(req, choice.protocol);
    // `ws` refuses subprotocols that are not RFC 7230 tokens ("SPDY/3.1+portforward.k8s.io" has a
    // '/'), answering 400 — and kubectl then silently falls back to SPDY. The choice is made
    // already (handleProtocols answers it), so ws is shown the offer in a token-safe spelling.
    const offered = req.headers['sec-websocket-protocol'];
    if (offered !== undefined) req.headers['sec-websocket-protocol'] = headerList(offered).map(encodeURIComponent).join(', ');
    return new Promise((resolve) => this.wss.handleUpgrade(req, socket, head, (ws) => resolve({ transport: 'websocket', ws, protocol: choice.protocol })));
  }
}
