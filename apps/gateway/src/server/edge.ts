import { METHODS } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@orch/apimachinery';
import { overHttp2 } from '@orch/server-common';

/** The methods the API serves (every path routes them to the pipeline). */
export const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function isApiMethod(method: string): boolean {
  return (API_METHODS as readonly string[]).includes(method);
}

/**
 * Every other method Node's HTTP parser accepts (TRACE, PROPFIND, ...), routed to
 * methodNotAllowed on every path. Routed rather than caught by a hook: Fastify answers an
 * unrouted method on a malformed URL (`PROPFIND /x/%`) from its 404 handler, hooks skipped.
 * CONNECT never reaches the routes (Node emits it as 'connect': see answerConnect).
 */
export const OTHER_METHODS = METHODS.filter((m) => !isApiMethod(m) && m !== 'CONNECT');

/**
 * Takes out of the adapter's Fastify instance the onRequest and onResponse hooks Nest's
 * FastifyAdapter adds in its constructor: they only forward to hooks set with the adapter's
 * setOnRequestHook/setOnResponseHook, which nothing in the gateway sets. Kept, they run for
 * every request, and an onResponse hook makes Fastify time each reply and listen for its
 * 'finish' and 'error'. Call right after constructing the adapter: Fastify adds those hooks in
 * its plugin queue, so they are removed by the next step of that queue, before any route takes
 * its hooks (at ready). Fastify keeps hooks under a private symbol: when that, or what the
 * queue added, is not the shape expected (one hook of each, a later Nest or Fastify), nothing is
 * removed. `removed` reports whether they were.
 */
export function dropAdapterPassThroughHooks(fastify: FastifyInstance, removed: (dropped: boolean) => void = () => undefined): void {
  fastify.after(() => {
    const symbol = Object.getOwnPropertySymbols(fastify).find((s) => s.description === 'fastify.hooks');
    const hooks = symbol && ((fastify as unknown as Record<symbol, { onRequest?: unknown; onResponse?: unknown } | undefined>)[symbol]);
    const expected = !!hooks && Array.isArray(hooks.onRequest) && Array.isArray(hooks.onResponse) && hooks.onRequest.length === 1 && hooks.onResponse.length === 1;
    if (expected) {
      (hooks.onRequest as unknown[]).length = 0;
      (hooks.onResponse as unknown[]).length = 0;
    }
    removed(expected);
  });
}

/** A closing raw HTTP/1.1 answer carrying a Status (for sockets outside Fastify). */
function rawStatusAnswer(se: StatusError, statusLine: string, extraHeaders = ''): string {
  const body = JSON.stringify(se.toStatus());
  return `HTTP/1.1 ${se.code} ${statusLine}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extraHeaders}connection: close\r\n\r\n${body}`;
}

/**
 * CONNECT (Node's 'connect' event; without a listener the socket is dropped): 405 like other
 * methods. Over HTTP/2 the event carries the stream's response, answered on the stream.
 */
export function answerConnect(socket: Duplex | Http2ServerResponse): void {
  const se = new StatusError(405, 'MethodNotAllowed', `the server does not allow the method "CONNECT": the API serves ${API_METHODS.join(', ')}`);
  if (overHttp2(socket)) {
    socket.writeHead(se.code, { 'content-type': 'application/json', allow: API_METHODS.join(', ') }).end(JSON.stringify(se.toStatus()));
    return;
  }
  socket.on('error', () => socket.destroy());
  socket.end(rawStatusAnswer(se, 'Method Not Allowed', `allow: ${API_METHODS.join(', ')}\r\n`));
}

/**
 * What the HTTP edge answers for a method the API does not have (TRACE, PROPFIND, ...): 405
 * with `Allow`, as a Status like every answer of the gateway.
 */
export function methodNotAllowed(req: FastifyRequest, reply: FastifyReply): void {
  const se = new StatusError(405, 'MethodNotAllowed', `the server does not allow the method ${JSON.stringify(req.method)}: the API serves ${API_METHODS.join(', ')}`);
  reply.code(se.code).header('allow', API_METHODS.join(', ')).header('content-type', 'application/json').send(JSON.stringify(se.toStatus()));
}

/**
 * Errors Fastify meets before any route (a URL whose percent-encoding is malformed, `%ZZ`):
 * a 400 Status naming the problem instead of Fastify's own error body.
 */
export function answerFrameworkError(err: Error & { code?: string }, _req: FastifyRequest, reply: FastifyReply): void {
  const message = err.code === 'FST_ERR_BAD_URL' ? `the URL is not valid: ${err.message}` : `the request could not be routed: ${err.message}`;
  reply.code(400).header('content-type', 'application/json').send(JSON.stringify(StatusError.badRequest(message).toStatus()));
}

/**
 * Has Node's HTTP/1.1 server read an HTTP/1.1 connection of `server` through JavaScript 'data'
 * events instead of straight from the TLS handle once an answer fills the connection's send
 * buffer. Node 20 pauses a connection's parser when the next request's head arrives while the
 * socket still needs to drain, and the TLS handle then feeds the paused parser the rest of what it
 * decrypted anyway: the parser fails with HPE_PAUSED and the connection is dropped with the
 * client's body unread, so a client posting large bodies on a kept-alive connection read
 * ECONNRESET (a plain Node https server answering a turn after each 700 KB POST: 6 of 150
 * requests). A 'data' listener makes Node's server stop consuming the handle (its socket listener
 * wrapper does), and a paused socket then holds the bytes back. The switch is made by the first
 * write the socket refuses (the moment it needs to drain, before any later request is read):
 * connections whose answers fit the send buffer, nearly all, keep the cheaper native path
 * (parsing every connection in JavaScript cost ~19 % more gateway CPU per create in the bench).
 * Not covered: a pipelining client whose later answers queue behind an unfinished one without a
 * refused write. HTTP/2 sessions read their sockets themselves and are left alone. Must be
 * called after the server's own connection listener was added (its constructor adds it).
 */
export function parseHttp1InJavaScript(server: TlsServer): void {
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === 'h2' || socket.destroyed) return;
    const nativeWrite = socket.write;
    socket.write = function writeUntilRefused(this: TLSSocket, ...args: unknown[]): boolean {
      const accepted = (nativeWrite as (...a: unknown[]) => boolean).apply(this, args);
      if (!accepted) {
        this.write = nativeWrite;
        this.on('data', ignoreData);
      }
      return accepted;
    } as TLSSocket['write'];
  });
}

function ignoreData(): void {}

/** Node's HTTP parser codes that mean the request line and headers are too large. */
const TOO_LARGE = new Set(['HPE_HEADER_OVERFLOW']);

/**
 * Answers a request the HTTP parser refused (bad method token, malformed header, request line
 * and headers over Node's limit): a 400 Status naming the problem on a closing connection,
 * instead of Node's bare status line. The parser's state is lost, so the connection ends.
 * A TLS renegotiation the client starts after its certificate was read (peerCertificateFromSocket
 * disables it) closes the connection at once: no request is served after it.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || (err.code === 'ECONNRESET' && socket.destroyed) || err.code === 'ERR_TLS_RENEGOTIATION_DISABLED') {
    socket.destroy();
    return;
  }
  const message = TOO_LARGE.has(err.code ?? '')
    ? 'the request line and headers are too large (limit 16 KiB): shorten the URL (query parameters such as labelSelector) or the headers'
    : `the request could not be parsed as HTTP/1.1 (${err.code ?? 'error'}: ${err.message})`;
  socket.end(rawStatusAnswer(StatusError.badRequest(message), 'Bad Request'));
}

/**
 * How long a closing connection goes on reading what its client still sends (Go waits 500 ms,
 * rstAvoidanceDelay; a client on a loaded machine may need longer to read the answer).
 */
const LINGER_MS = 2000;

/**
 * Makes the coming close of a connection whose request body was not read (413 on the
 * Content-Length alone, with `connection: close`) a lingering one, as Go's server does
 * (closeWriteAndWait): the answer and a FIN go out, then what the client still sends is read
 * and dropped until it closes or LINGER_MS pass. Closed at once, the socket would be reset
 * with unread input, and a client still writing its body would get EPIPE or ECONNRESET instead
 * of the answer. (Node's server closes an answered `connection: close` socket through
 * destroySoon.)
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.on('error', () => this.destroy());
    this.end();
    this.resume();
  };
}
