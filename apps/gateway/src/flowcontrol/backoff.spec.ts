import { createServer, request, Agent, type Server } from 'node:http';
import { connect, createServer as createH2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { StatusError } from '@orch/apimachinery';
import { holdConnectionAfter } from './backoff';

/** GET /reject answers 429 (with `Retry-After: seconds` when seconds > 0) and holds the connection; any other path 200. */
function rejectingServer(seconds: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/reject') {
      const rejection = StatusError.tooManyRequests('slow down', seconds || undefined);
      holdConnectionAfter(res, rejection);
      res.writeHead(429, rejection.headers).end();
    } else res.end('ok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function get(port: number, path: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    })
      .on('error', reject)
      .end();
  });
}

describe('a connection after a priority-and-fairness 429 (holdConnectionAfter)', () => {
  it.each<{ name: string; retryAfter: number; sameConnection: boolean; held: boolean }>([
    { name: 'its next request waits for Retry-After, then is served', retryAfter: 2, sameConnection: true, held: true },
    { name: 'another connection of the client is served at once', retryAfter: 2, sameConnection: false, held: false },
    { name: 'a 429 without Retry-After holds nothing', retryAfter: 0, sameConnection: true, held: false },
  ])('$name', async ({ retryAfter, sameConnection, held }) => {
    const server = await rejectingServer(retryAfter);
    let connections = 0;
    server.on('connection', () => connections++);
    const port = (server.address() as AddressInfo).port;
    const first = new Agent({ keepAlive: true, maxSockets: 1 });
    const other = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const rejectedAt = performance.now();
      expect(await get(port, '/reject', first)).toBe(429);
      // The 429 itself is answered at once.
      expect(performance.now() - rejectedAt).toBeLessThan(1000);
      const askedAt = performance.now();
      expect(await get(port, '/next', sameConnection ? first : other)).toBe(200);
      const waited = performance.now() - askedAt;
      if (held) expect(waited).toBeGreaterThanOrEqual(retryAfter * 1000 - 100);
      else expect(waited).toBeLessThan(1500);
      // One connection served both (keep-alive), or each its own.
      expect(connections).toBe(sameConnection ? 1 : 2);
    } finally {
      first.destroy();
      other.destroy();
      server.close();
    }
  });

  it('leaves an HTTP/2 session alone: its other streams are served at once', async () => {
    const server = createH2Server();
    server.on('request', (req, res) => {
      if (req.url === '/reject') {
        const rejection = StatusError.tooManyRequests('slow down', 2);
        holdConnectionAfter(res as never, rejection);
        res.writeHead(429, rejection.headers).end();
      } else res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const status = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': path });
        let code = 0;
        stream.on('response', (h) => (code = Number(h[':status'])));
        stream.on('end', () => resolve(code)).on('error', reject);
        stream.resume();
      });
    try {
      expect(await status('/reject')).toBe(429);
      const askedAt = performance.now();
      expect(await status('/next')).toBe(200);
      expect(performance.now() - askedAt).toBeLessThan(1500);
    } finally {
      session.close();
      server.close();
    }
  });
});
