import * as net from 'node:net';
import { freePort } from '@orch/testing';
import { ApiError } from './errors';
import { ServerReachability, isConnectionError } from './reachability';

describe('isConnectionError', () => {
  it.each([
    { name: 'refused', err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), want: true },
    { name: 'reset', err: Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), want: true },
    { name: 'hang up', err: new Error('socket hang up'), want: true },
    { name: 'watch cut', err: new Error('watch connection closed before the stream ended'), want: true },
    { name: 'an API answer', err: new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: 'down' }), want: false },
    { name: 'a parse error', err: new SyntaxError('Unexpected token'), want: false },
    { name: 'not an error', err: 'ECONNREFUSED', want: false },
  ])('$name → $want', ({ err, want }) => {
    expect(isConnectionError(err)).toBe(want);
  });
});

describe('ServerReachability', () => {
  const listen = (port: number) => new Promise<net.Server>((resolve) => {
    const server = net.createServer((s) => s.destroy());
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
  const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

  it('answers false at once for a server that accepts connections', async () => {
    const port = await freePort();
    const server = await listen(port);
    try {
      expect(await new ServerReachability('127.0.0.1', port).returned(new AbortController().signal)).toBe(false);
    } finally {
      await close(server);
    }
  });

  it('tells every waiter when an unreachable server listens again, probing once for all', async () => {
    const port = await freePort();
    const reach = new ServerReachability('127.0.0.1', port, { probeIntervalMs: 20 });
    let unreachable = 0;
    const ac = new AbortController();
    const first = reach.returned(ac.signal, () => unreachable++);
    const second = reach.returned(ac.signal, () => unreachable++);
    const attempts: number[] = [];
    // Wait until both callers know the server is down, then count connections while it comes back.
    while (unreachable < 2) await new Promise((r) => setTimeout(r, 5));
    const server = await listen(port);
    server.on('connection', () => attempts.push(1));
    try {
      expect(await Promise.all([first, second])).toEqual([true, true]);
      expect(attempts).toHaveLength(1);
    } finally {
      await close(server);
    }
  });

  it('answers false when its signal aborts while the server is down', async () => {
    const reach = new ServerReachability('127.0.0.1', await freePort(), { probeIntervalMs: 20 });
    const ac = new AbortController();
    const waiting = reach.returned(ac.signal, () => ac.abort());
    expect(await waiting).toBe(false);
  });
});
