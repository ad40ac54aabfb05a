import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Probe } from '../../api/types';
import { ProbeWorker, resolvePort, runProbe, type ProbeResult, type ProbeTarget } from './probes';

let httpServer: http.Server;
let tcpServer: net.Server;
let httpPort: number;
let tcpPort: number;
let closedPort: number;

beforeAll(async () => {
  httpServer = http.createServer((req, res) => {
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 1500);
    if (req.url === '/header') return void res.writeHead(req.headers['x-probe'] === 'yes' ? 200 : 403).end();
    res.writeHead(req.url === '/ok' ? 200 : req.url === '/redirect' ? 302 : 500).end();
  });
  tcpServer = net.createServer((s) => s.end());
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => tcpServer.listen(0, '127.0.0.1', r));
  httpPort = (httpServer.address() as AddressInfo).port;
  tcpPort = (tcpServer.address() as AddressInfo).port;
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
});
afterAll(async () => {
  await new Promise((r) => httpServer.close(r));
  await new Promise((r) => tcpServer.close(r));
});

const target = (): ProbeTarget => ({ podIP: '127.0.0.1', env: { PATH: process.env.PATH ?? '', WANT: 'ok' }, cwd: process.cwd(), ports: [{ name: 'web', containerPort: httpPort }] });

describe('runProbe', () => {
  it.each<{ name: string; probe: () => Probe; ok: boolean; message?: RegExp }>([
    { name: 'http 200', probe: () => ({ httpGet: { port: httpPort, path: '/ok' } }), ok: true },
    { name: 'http by port name', probe: () => ({ httpGet: { port: 'web', path: 'ok' } }), ok: true },
    { name: 'http 3xx counts as success', probe: () => ({ httpGet: { port: httpPort, path: '/redirect' } }), ok: true },
    { name: 'http 500', probe: () => ({ httpGet: { port: httpPort, path: '/fail' } }), ok: false, message: /statuscode: 500/ },
    { name: 'http headers', probe: () => ({ httpGet: { port: httpPort, path: '/header', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } }), ok: true },
    { name: 'http timeout', probe: () => ({ httpGet: { port: httpPort, path: '/slow' }, timeoutSeconds: 1 }), ok: false, message: /deadline exceeded/ },
    { name: 'http refused', probe: () => ({ httpGet: { port: closedPort } }), ok: false, message: /ECONNREFUSED/ },
    { name: 'tcp open', probe: () => ({ tcpSocket: { port: tcpPort } }), ok: true },
    { name: 'tcp closed', probe: () => ({ tcpSocket: { port: closedPort } }), ok: false, message: /dial tcp/ },
    { name: 'exec exit 0 with the container env', probe: () => ({ exec: { command: ['sh', '-c', 'test "$WANT" = ok'] } }), ok: true },
    { name: 'exec failure output', probe: () => ({ exec: { command: ['sh', '-c', 'echo broken; exit 3'] } }), ok: false, message: /^broken$/ },
    { name: 'exec timeout', probe: () => ({ exec: { command: ['sleep', '5'] }, timeoutSeconds: 1 }), ok: false, message: /timed out/ },
    { name: 'exec missing binary', probe: () => ({ exec: { command: ['no-such-binary-xyz'] } }), ok: false, message: /ENOENT/ },
    { name: 'no handler', probe: () => ({}), ok: false, message: /no handler/ },
  ])('$name', async ({ probe, ok, message }) => {
    const r = await runProbe(probe(), target());
    expect(r.ok).toBe(ok);
    if (message) expect(r.message).toMatch(message);
  });

  it('resolves named ports and rejects unknown names', () => {
    expect(resolvePort('8080', [])).toBe(8080);
    expect(() => resolvePort('metrics', [])).toThrow(/not a port name/);
  });
});

describe('ProbeWorker thresholds', () => {
  /** A worker driven by a scripted sequence of results; returns the flips it reported. */
  async function flips(kind: 'liveness' | 'readiness' | 'startup', results: boolean[], probe: Probe): Promise<string[]> {
    const seen: string[] = [];
    let i = 0;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const run = async (): Promise<ProbeResult> => {
      const ok = results[i++];
      if (i >= results.length) setImmediate(done);
      return { ok, message: ok ? undefined : 'bad' };
    };
    const w = new ProbeWorker(kind, { periodSeconds: 0.001, ...probe }, target(), (_k, ok) => seen.push(ok ? 'up' : 'down'), run);
    w.start();
    await finished;
    w.stop();
    return seen;
  }

  it.each<{ name: string; kind: 'liveness' | 'readiness' | 'startup'; results: boolean[]; probe: Probe; want: string[] }>([
    { name: 'liveness flips down after failureThreshold', kind: 'liveness', results: [true, false, false, false], probe: { failureThreshold: 3 }, want: ['down'] },
    { name: 'liveness tolerates isolated failures', kind: 'liveness', results: [false, false, true, false, false], probe: { failureThreshold: 3 }, want: [] },
    { name: 'readiness needs successThreshold', kind: 'readiness', results: [true, true, false, true, true, true], probe: { successThreshold: 3, failureThreshold: 1 }, want: ['up'] },
    { name: 'readiness up then down', kind: 'readiness', results: [true, false], probe: { failureThreshold: 1 }, want: ['up', 'down'] },
    { name: 'startup succeeds', kind: 'startup', results: [false, true], probe: {}, want: ['up'] },
    { name: 'startup gives up', kind: 'startup', results: [false, false], probe: { failureThreshold: 2 }, want: ['down'] },
  ])('$name', async ({ kind, results, probe, want }) => {
    expect(await flips(kind, results, probe)).toEqual(want);
  });
});
