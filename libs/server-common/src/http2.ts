import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/**
 * The request or response (or what Node's 'connect' event hands over) is a stream of an HTTP/2
 * connection, not an HTTP/1.1 message or a raw socket: connection-level headers (`connection`,
 * `transfer-encoding`) are forbidden on its response, it is written through its own `stream`,
 * and the connection's socket is shared by the other streams (never written to or closed for
 * one request; `stream.session.socket` is the TLS connection).
 */
export function overHttp2<T extends object>(message: T): message is Extract<T, Http2ServerRequest | Http2ServerResponse> {
  return 'stream' in message;
}
