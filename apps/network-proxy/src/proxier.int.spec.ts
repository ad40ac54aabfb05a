import net from 'node:net';
import { createLogger } from '@orch/server-common';
import { Registry } from 'prom-client';
import type { SchedulerName } from './balancer';
import { ProxyMetrics } from './metrics';
import { frontendKey, type Endpoint, type FrontendSpec, type Protocol, type Route } from './model';
import { BindError, Proxier, frontendFactories } from './proxier';
import { firstLine, freePortOn, tcpBackends, udpBackends, udpRequest, type TestBackends } from './testing';

// The data plane with real sockets: backends are small servers on 127.0.20.x, the service
// address is on 127.0.21.x, clients may come from 127.0.30.x.

const BACKEND_IPS = ['127.0.20.1', '127.0.20.2', '127.0.20.3'];
const VIP = '127.0.21.1';
const logger = createLogger('proxier-test', { level: 'error' });

const endpoint = (ip: string, port: number): Endpoint => ({ ip, port, key: `${ip}:${port}`, ready: true, serving: true, terminating: false, local: true });
function spec(protocol: Protocol, port: number, route: Route, affinityTimeoutMs?: number): FrontendSpec {
  return { key: frontendKey(protocol, VIP, port), protocol, ip: VIP, port, servicePort: 'default/web:http', route, affinityTimeoutMs };
}
const forward = (b: TestBackends, ips = b.ips): Route => ({ action: 'forward', endpoints: ips.map((ip) => endpoint(ip, b.port)) });
const count = (xs: string[]) => Object.fromEntries([...new Set(xs)].sort().map((x) => [x, xs.filter((y) => y === x).length]));

function newProxier(scheduler: SchedulerName): Proxier {
  const metrics = new ProxyMetrics(new Registry());
  return new Proxier({ scheduler, metrics, frontends: frontendFactories({ logger, metrics, connectTimeoutMs: 500, dropIdleMs: 5000, udpIdleMs: 500 }) });
}

/** Connects, writes `payload`, half-closes, and collects everything until the server ends. */
function exchange(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: VIP, port, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('end', () => {
      s.end();
      resolve(Buffer.concat(chunks));
    });
    s.on('error', reject);
    s.end(payload);
  });
}

describe('Proxier (TCP, real sockets)', () => {
  let backends: TestBackends;
  let proxier: Proxier;
  let port: number;
  beforeAll(async () => {
    backends = await tcpBackends(BACKEND_IPS);
  });
  afterAll(async () => {
    await backends.close();
  });
  beforeEach(async () => {
    port = await freePortOn(VIP);
  });
  afterEach(async () => {
    await proxier?.close();
  });

  it.each([
    { scheduler: 'rr' as const, want: { '127.0.20.1': 4, '127.0.20.2': 4, '127.0.20.3': 4 } },
    { scheduler: 'lc' as const, want: { '127.0.20.1': 4, '127.0.20.2': 4, '127.0.20.3': 4 } },
  ])('$scheduler spreads 12 sequential connections evenly', async ({ scheduler, want }) => {
    proxier = newProxier(scheduler);
    await proxier.syncService('default/web', [spec('TCP', port, forward(backends))]);
    const got: string[] = [];
    for (let i = 0; i < 12; i++) got.push(await firstLine(VIP, port));
    expect(count(got)).toEqual(want);
  });

  it('ClientIP affinity pins each client to one backend', async () => {
    proxier = newProxier('rr');
    await proxier.syncService('default/web', [spec('TCP', port, forward(backends), 60_000)]);
    for (const client of ['127.0.30.1', '127.0.30.2', '127.0.30.3']) {
      const got: string[] = [];
      for (let i = 0; i < 6; i++) got.push(await firstLine(VIP, port, { localAddress: client }));
      expect({ client, backends: new Set(got).size }).toEqual({ client, backends: 1 });
    }
  });

  it('passes half-closes through and moves 8 MiB both ways with backpressure', async () => {
    proxier = newProxier('rr');
    await proxier.syncService('default/web', [spec('TCP', port, forward(backends, ['127.0.20.1']))]);
    const payload = Buffer.alloc(8 << 20, 'x');
    const got = await exchange(port, payload);
    // The backend greets, echoes everything, and ends only after the client's FIN reached it.
    expect(got.length).toBe('127.0.20.1\n'.length + payload.length);
    expect(got.subarray(0, 11).toString()).toBe('127.0.20.1\n');
  });

  it('skips a backend that refuses and serves from the others', async () => {
    proxier = newProxier('rr');
    const route: Route = { action: 'forward', endpoints: [endpoint('127.0.20.9', backends.port), endpoint('127.0.20.1', backends.port)] };
    await proxier.syncService('default/web', [spec('TCP', port, route)]);
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(await firstLine(VIP, port));
    expect(new Set(got)).toEqual(new Set(['127.0.20.1']));
  });

  it('keeps established connections through endpoint changes and removal; new connections are refused', async () => {
    proxier = newProxier('rr');
    await proxier.syncService('default/web', [spec('TCP', port, forward(backends, ['127.0.20.1']))]);
    const s = net.connect({ host: VIP, port });
    const received: string[] = [];
    s.on('data', (d) => received.push(d.toString()));
    await new Promise((r) => s.once('data', r));

    await proxier.syncService('default/web', [spec('TCP', port, forward(backends, ['127.0.20.2']))]);
    expect(await firstLine(VIP, port)).toBe('127.0.20.2');
    await proxier.syncService('default/web', []);
    await expect(firstLine(VIP, port)).rejects.toThrow(/ECONNREFUSED/);

    s.write('still here');
    await new Promise((r) => setTimeout(r, 100));
    expect(received.join('')).toBe('127.0.20.1\nstill here');
    s.destroy();
  });

  it('a drop route accepts and never answers', async () => {
    proxier = newProxier('rr');
    await proxier.syncService('default/web', [spec('TCP', port, { action: 'drop' })]);
    await expect(firstLine(VIP, port, { timeoutMs: 300 })).rejects.toThrow(/no answer/);
  });

  it('reports addresses it cannot bind with a clear reason and applies the rest', async () => {
    proxier = newProxier('rr');
    const specs = [
      { ...spec('TCP', port, forward(backends)), key: frontendKey('TCP', '10.255.255.1', port), ip: '10.255.255.1' },
      spec('TCP', port, forward(backends)),
    ];
    const err = await proxier.syncService('default/web', specs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BindError);
    expect((err as BindError).failures).toEqual([
      `cannot listen on 10.255.255.1:${port}/TCP for service default/web:http: 10.255.255.1 is not an address of this machine (give the gateway a local service range, e.g. --service-cluster-ip-range=127.96.0.0/16)`,
    ]);
    expect(proxier.listening()).toEqual([frontendKey('TCP', VIP, port)]);
  });
});

describe('Proxier (UDP, real sockets)', () => {
  let backends: TestBackends;
  let proxier: Proxier;
  beforeAll(async () => {
    backends = await udpBackends(BACKEND_IPS);
  });
  afterAll(async () => {
    await proxier?.close();
    await backends.close();
  });

  it('forwards datagrams per client flow, spreads new flows with rr, and follows endpoint removal', async () => {
    proxier = newProxier('rr');
    const port = await freePortOn(VIP);
    await proxier.syncService('default/dns', [spec('UDP', port, forward(backends))]);
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(await udpRequest(VIP, port, `q${i}`)); // a new client socket each time
    expect(count(answers.map((a) => a.split(':')[0]))).toEqual({ '127.0.20.1': 2, '127.0.20.2': 2, '127.0.20.3': 2 });
    expect(answers[0]).toMatch(/:q0$/);

    await proxier.syncService('default/dns', [spec('UDP', port, forward(backends, ['127.0.20.3']))]);
    expect((await udpRequest(VIP, port, 'after')).split(':')[0]).toBe('127.0.20.3');
    await proxier.syncService('default/dns', [spec('UDP', port, { action: 'drop' })]);
    await expect(udpRequest(VIP, port, 'dropped', 300)).rejects.toThrow(/no UDP answer/);
  });
});
