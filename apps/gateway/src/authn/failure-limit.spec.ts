import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Registry } from 'prom-client';
import { StatusError } from '@orch/apimachinery';
import { selfSignedServingCert } from '@orch/auth';
import { createLogger } from '@orch/server-common';
import { GATEWAY_FLAGS, type GatewayOptions } from '../options';
import { AuthenticationFailureLimit } from './failure-limit';

const FLAGS = {
  'authentication-failure-limit': 3,
  'authentication-failure-window': 10_000,
  'authentication-failure-cooloff': 60_000,
  'authentication-failure-max-sources': 100,
  'authentication-failure-exempt-cidrs': ['127.0.0.1/32'],
} satisfies Partial<GatewayOptions>;

function limit(flags: Partial<typeof FLAGS> = {}) {
  const metrics = new Registry();
  const lines: string[] = [];
  const l = AuthenticationFailureLimit.fromFlags({ ...FLAGS, ...flags }, { metrics, logger: createLogger('gateway', { write: (line) => lines.push(line), format: 'json' }) });
  return { l: l!, metrics, lines };
}

/** Stands for a connection's socket (only its peer address is read). */
const from = (remoteAddress: string) => ({ remoteAddress }) as Socket;

describe('AuthenticationFailureLimit.fromFlags', () => {
  it.each<{ name: string; flags: Partial<typeof FLAGS>; message: string }>([
    { name: 'a negative limit', flags: { 'authentication-failure-limit': -1 }, message: '--authentication-failure-limit must be 0 (off) or more, not -1' },
    { name: 'no window', flags: { 'authentication-failure-window': 0 }, message: '--authentication-failure-window must be more than 0' },
    { name: 'no cool-off', flags: { 'authentication-failure-cooloff': 0 }, message: '--authentication-failure-cooloff must be more than 0' },
    { name: 'no room', flags: { 'authentication-failure-max-sources': 0 }, message: '--authentication-failure-max-sources must be more than 0' },
    { name: 'a host name to exempt', flags: { 'authentication-failure-exempt-cidrs': ['localhost'] }, message: '--authentication-failure-exempt-cidrs: "localhost" is not an IP address or CIDR' },
  ])('refuses $name', ({ flags, message }) => {
    expect(() => limit(flags)).toThrow(message);
  });

  it('is off with --authentication-failure-limit=0, whatever the other flags say', () => {
    expect(AuthenticationFailureLimit.fromFlags({ ...FLAGS, 'authentication-failure-limit': 0, 'authentication-failure-window': 0 }, { metrics: new Registry(), logger: createLogger('gateway') })).toBeUndefined();
  });
});

describe('AuthenticationFailureLimit with the default flags', () => {
  const defaults = {
    'authentication-failure-limit': GATEWAY_FLAGS['authentication-failure-limit'].default,
    'authentication-failure-window': GATEWAY_FLAGS['authentication-failure-window'].default,
    'authentication-failure-cooloff': GATEWAY_FLAGS['authentication-failure-cooloff'].default,
    'authentication-failure-max-sources': GATEWAY_FLAGS['authentication-failure-max-sources'].default,
    'authentication-failure-exempt-cidrs': GATEWAY_FLAGS['authentication-failure-exempt-cidrs'].default,
  };

  // The local components connect from the host's loopback address: no flood can lock them out.
  it.each<{ address: string; refused: boolean }>([
    { address: '127.0.0.1', refused: false },
    { address: '::ffff:127.0.0.1', refused: false },
    { address: '::1', refused: false },
    { address: '127.0.0.2', refused: true },
    { address: '127.10.0.5', refused: true },
    { address: '192.0.2.10', refused: true },
  ])('$address after 1,000 failures: refused $refused', ({ address, refused }) => {
    const l = AuthenticationFailureLimit.fromFlags(defaults, { metrics: new Registry(), logger: createLogger('gateway', { write: () => undefined }) })!;
    for (let i = 0; i < 1000; i++) l.failed(from(address));
    const answer = (() => {
      try {
        l.refuseRequest(from(address));
        return 'served';
      } catch (err) {
        return (err as StatusError).code;
      }
    })();
    expect(answer).toBe(refused ? 429 : 'served');
  });
});

describe('AuthenticationFailureLimit on requests', () => {
  it('after the limit: 429 with Retry-After and Connection: close; one log line and one count per source', async () => {
    const { l, metrics, lines } = limit();
    for (let i = 0; i < 10; i++) l.failed(from('203.0.113.7'));
    let thrown: unknown;
    try {
      l.refuseRequest(from('203.0.113.7'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StatusError);
    const se = thrown as StatusError;
    expect([se.code, se.reason, se.headers, se.details]).toEqual([429, 'TooManyRequests', { 'Retry-After': '60', connection: 'close' }, { retryAfterSeconds: 60 }]);
    expect(() => l.refuseRequest(from('203.0.113.8'))).not.toThrow();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', source: '203.0.113.7', limit: 3, window: '10s', cooloff: '1m0s' });
    const text = await metrics.metrics();
    expect(text).toContain('apiserver_authentication_failure_limited_total 1');
    expect(text).toContain('apiserver_authentication_failure_refused_total{at="request"} 1');
    expect(text).toContain('apiserver_authentication_failure_tracked_sources 1');
  });

  it('the exempt address is never refused', () => {
    const { l, lines } = limit();
    for (let i = 0; i < 100; i++) l.failed(from('127.0.0.1'));
    expect(() => l.refuseRequest(from('127.0.0.1'))).not.toThrow();
    expect(lines).toEqual([]);
  });
});

describe('AuthenticationFailureLimit.guard: before the TLS handshake', () => {
  let server: https.Server;
  let port: number;
  let ca: string;
  const seen = { secure: [] as string[], tlsErrors: 0 };

  beforeAll(async () => {
    const cert = await selfSignedServingCert(['127.0.0.1'], 'guard-test');
    ca = cert.caPem;
    server = https.createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => res.end('ok'));
    server.on('secureConnection', (s) => seen.secure.push(s.remoteAddress!));
    server.on('tlsClientError', () => seen.tlsErrors++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  }, 30_000);
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** A GET on a fresh connection from `localAddress`: the body, or the error code. */
  const get = (localAddress: string) =>
    new Promise<string>((resolve) => {
      const req = https.get({ host: '127.0.0.1', port, path: '/', ca, localAddress, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });

  it('resets a refused source on connection, before TLS; other sources are served', async () => {
    const { l, metrics } = limit({ 'authentication-failure-exempt-cidrs': [] });
    l.guard(server);
    expect(await get('127.0.0.2')).toBe('ok');
    for (let i = 0; i < 3; i++) l.failed(from('127.0.0.2'));
    seen.secure.length = 0;
    seen.tlsErrors = 0;
    const answers = await Promise.all([get('127.0.0.2'), get('127.0.0.2'), get('127.0.0.1'), get('127.0.0.3')]);
    expect(answers).toEqual(['ECONNRESET', 'ECONNRESET', 'ok', 'ok']);
    // The refused connections never reached the TLS layer: no handshake, no TLS error.
    expect([seen.secure.sort(), seen.tlsErrors]).toEqual([['127.0.0.1', '127.0.0.3'], 0]);
    expect(await metrics.metrics()).toContain('apiserver_authentication_failure_refused_total{at="connection"} 2');
  });

  it('refuses to wrap a server whose connection listeners it does not know', () => {
    const odd = https.createServer();
    odd.on('connection', () => undefined);
    expect(() => limit().l.guard(odd)).toThrow('the HTTPS server has 2 connection listeners');
  });
});
