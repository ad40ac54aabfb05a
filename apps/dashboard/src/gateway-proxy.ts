import { Agent, request as httpsRequest } from 'node:https';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex, Readable } from 'node:stream';

/** Request headers a browser call may pass on to the gateway; everything else (cookies above all) stays here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'content-length'] as const;
/** Upgrade (WebSocket) handshake headers passed on for exec/attach. */
const FORWARDED_UPGRADE_HEADERS = ['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol'] as const;
/** Response headers passed back to the browser. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'warning', 'audit-id', 'retry-after'] as const;

export interface GatewayTarget {
  /** `https://host:port` of the gateway. */
  server: string;
  /** PEM bundle the gateway's serving certificate must chain to. */
  ca: string;
}

/** A call made for the user: their token goes in the Authorization header, so the gateway's RBAC decides. */
export interface GatewayCall {
  method: string;
  /** Path and query on the gateway, e.g. `/api/v1/pods?watch=1`. */
  path: string;
  token: string;
  headers?: IncomingHttpHeaders;
  body?: Readable | Buffer;
}

function pick(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/**
 * The dashboard's only way to the cluster: requests and upgrades on the gateway made with the
 * logged-in user's bearer token. It has no credential of its own.
 */
export class GatewayProxy {
  private readonly url: URL;
  private readonly agent: Agent;

  constructor(private readonly target: GatewayTarget) {
    this.url = new URL(target.server);
    this.agent = new Agent({ keepAlive: true, ca: target.ca, maxSockets: 256 });
  }

  private options(call: GatewayCall, extra: Record<string, string>) {
    return {
      agent: this.agent,
      host: this.url.hostname,
      port: this.url.port || 443,
      servername: this.url.hostname,
      method: call.method,
      path: call.path,
      headers: { ...extra, authorization: `Bearer ${call.token}`, 'user-agent': 'orch-dashboard' },
    };
  }

  /** A buffered JSON call (login checks, access reviews): resolves with the status and parsed body. */
  async json<T = unknown>(call: Omit<GatewayCall, 'body'> & { body?: unknown }): Promise<{ status: number; body: T }> {
    const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    return new Promise((resolve, reject) => {
      const req = httpsRequest(this.options({ ...call, body: undefined }, headers), (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: the text as is
          }
          resolve({ status: res.statusCode ?? 502, body: body as T });
        });
        res.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error('the gateway did not answer in 30 s')));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A GET whose answer is read as it arrives (watches); the caller destroys the request to stop. */
  stream(call: Omit<GatewayCall, 'body' | 'method'> & { accept: string }, onAnswer: (answer: IncomingMessage) => void, onError: (err: Error) => void): ClientRequest {
    const upstream = httpsRequest(this.options({ ...call, method: 'GET' }, { accept: call.accept }), onAnswer);
    upstream.on('error', onError);
    upstream.end();
    return upstream;
  }

  /**
   * Streams one browser request to the gateway and the answer back (watches and log follows
   * included: chunks pass as they come; the upstream request ends when the browser goes away).
   */
  forward(call: GatewayCall, res: ServerResponse): void {
    const upstream = httpsRequest(this.options(call, pick(call.headers ?? {}, FORWARDED_REQUEST_HEADERS)), (answer) => {
      const headers: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
      Object.assign(headers, pick(answer.headers, FORWARDED_RESPONSE_HEADERS));
      res.writeHead(answer.statusCode ?? 502, headers);
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    res.on('close', () => upstream.destroy());
    upstream.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 502, message: `the gateway is not reachable: ${err.message}` }));
      }
    });
    if (call.body && 'pipe' in call.body) call.body.pipe(upstream);
    else upstream.end(call.body);
  }

  /**
   * Passes a WebSocket upgrade (pods/exec, pods/attach) to the gateway with the user's token and,
   * once the gateway switches protocols, splices the two sockets. A refusal (403, 404...) is
   * written back to the browser as an ordinary HTTP answer.
   */
  upgrade(call: GatewayCall, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const upstream = httpsRequest(this.options(call, pick(req.headers, FORWARDED_UPGRADE_HEADERS)));
    const fail = (status: number, body: string, contentType = 'text/plain') => {
      socket.end(`HTTP/1.1 ${status} ${status === 502 ? 'Bad Gateway' : 'Error'}\r\ncontent-type: ${contentType}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    };
    upstream.on('upgrade', (answer, upSocket, upHead) => {
      const lines = [`HTTP/1.1 101 Switching Protocols`];
      for (const name of ['upgrade', 'connection', 'sec-websocket-accept', 'sec-websocket-protocol']) {
        const v = answer.headers[name];
        if (typeof v === 'string') lines.push(`${name}: ${v}`);
      }
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      upSocket.pipe(socket).pipe(upSocket);
      const end = () => {
        upSocket.destroy();
        socket.destroy();
      };
      upSocket.on('error', end).on('close', end);
      socket.on('error', end).on('close', end);
    });
    upstream.on('response', (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => fail(answer.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'), answer.headers['content-type'] ?? 'text/plain'));
    });
    upstream.on('error', (err) => fail(502, `the gateway is not reachable: ${err.message}`));
    socket.on('error', () => upstream.destroy());
    upstream.end();
  }

  close(): void {
    this.agent.destroy();
  }
}
