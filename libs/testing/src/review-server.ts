import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** What a review handler sees of a call. */
export interface ReviewCall {
  path: string;
  body: Record<string, unknown>;
  /** Common name of the caller's client certificate, when it sent one the server's `clientCa` verifies. */
  clientName?: string;
  authorization?: string;
}

export interface ReviewServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  caPem: string;
  calls: ReviewCall[];
  stop(): Promise<void>;
}

/**
 * A real HTTPS JSON webhook on a free loopback port (TokenReview, SubjectAccessReview...):
 * every POST body is parsed and handed to `handler`, whose return value is the JSON answer;
 * `'fail'` answers HTTP 500. With `clientCa`, callers' client certificates are verified.
 */
export async function startReviewServer(
  tls: { certPem: string; keyPem: string; caPem: string },
  handler: (call: ReviewCall) => unknown,
  opts: { clientCa?: string } = {},
): Promise<ReviewServer> {
  const calls: ReviewCall[] = [];
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem, ...(opts.clientCa ? { ca: opts.clientCa, requestCert: true, rejectUnauthorized: false } : {}) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = req.socket as TLSSocket;
      const peer = opts.clientCa && socket.authorized ? socket.getPeerCertificate() : undefined;
      const call: ReviewCall = {
        path: new URL(req.url ?? '/', 'https://x').pathname,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>,
        ...(peer?.subject?.CN ? { clientName: String(peer.subject.CN) } : {}),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      };
      calls.push(call);
      const answer = handler(call);
      if (answer === 'fail') return void res.writeHead(500).end('failing on purpose');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: tls.caPem,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
