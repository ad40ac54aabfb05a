import { webcrypto } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import * as x509 from '@peculiar/x509';
import { ComponentServer, startComponentServer } from './component-server';
import { HealthChecks } from './health';
import { createMetricsRegistry } from './metrics';

interface Got {
  status: number;
  body: string;
  contentType: string | undefined;
}

function get(url: string, ca?: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] }));
    });
    req.on('error', reject);
  });
}

async function selfSigned(): Promise<{ cert: string; key: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    { name: 'CN=localhost', keys, signingAlgorithm: alg, extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }])] },
    webcrypto,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { cert: cert.toString('pem'), key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n` };
}

describe('startComponentServer', () => {
  let server: ComponentServer;
  let base: string;
  const checks = new HealthChecks().add('leaderelection', () => {
    throw new Error('lease lost');
  }, { endpoints: ['healthz', 'livez'] });

  beforeAll(async () => {
    server = await startComponentServer({ port: 0, host: '127.0.0.1', healthChecks: checks, registry: createMetricsRegistry() });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  it.each([
    { name: 'readyz', path: '/readyz', want: { status: 200, body: 'ok' } },
    { name: 'readyz verbose', path: '/readyz?verbose', want: { status: 200, body: '[+]ping ok\n[+]shutdown ok\nreadyz check passed\n' } },
    { name: 'livez failing', path: '/livez', want: { status: 500, body: '[+]ping ok\n[-]leaderelection failed: reason withheld\nlivez check failed\n' } },
    { name: 'livez with exclude', path: '/livez?exclude=leaderelection&verbose=1', want: { status: 200, body: '[+]ping ok\n[+]leaderelection excluded: ok\nlivez check passed\n' } },
    { name: 'healthz with repeated exclude', path: '/healthz?exclude=leaderelection&exclude=x', want: { status: 200, body: 'ok' } },
    { name: 'per-check path', path: '/livez/ping', want: { status: 200, body: 'ok' } },
    { name: 'per-check failing', path: '/healthz/leaderelection', want: { status: 500, body: 'internal server error: lease lost\n' } },
    { name: 'unknown check', path: '/readyz/leaderelection', want: { status: 404, body: '404 page not found\n' } },
    { name: 'unknown path', path: '/nope', want: { status: 404, body: '404 page not found\n' } },
  ])('$name', async ({ path, want }) => {
    const got = await get(`${base}${path}`);
    expect({ status: got.status, body: got.body }).toEqual(want);
    expect(got.contentType).toBe('text/plain; charset=utf-8');
  });

  it('serves /metrics', async () => {
    const got = await get(`${base}/metrics`);
    expect(got.status).toBe(200);
    expect(got.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(got.body).toContain('process_cpu_seconds_total');
  });

  it('serves HTTPS with the given certificate', async () => {
    const tls = await selfSigned();
    const s = await startComponentServer({ port: 0, host: '127.0.0.1', healthChecks: new HealthChecks(), registry: createMetricsRegistry(), tls });
    try {
      expect(await get(`https://127.0.0.1:${s.port}/healthz`, tls.cert)).toMatchObject({ status: 200, body: 'ok' });
      await expect(get(`https://127.0.0.1:${s.port}/healthz`)).rejects.toThrow(/self.signed/);
    } finally {
      await s.close();
    }
  });

  it('close stops listening', async () => {
    const s = await startComponentServer({ port: 0, host: '127.0.0.1', healthChecks: new HealthChecks(), registry: createMetricsRegistry() });
    await s.close();
    await expect(get(`http://127.0.0.1:${s.port}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
