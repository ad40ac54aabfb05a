import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { freePort, httpProbe, startProcess, type RunningProcess } from '@orch/testing';
import type { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './controllers/support/cluster';

// The real gateway and network-proxy processes: Services and EndpointSlices are written
// through the API (slices directly, so this does not depend on the endpointslice
// controller); clients connect to cluster IPs (a loopback range) and node ports, backends
// are small servers in this process on 127.0.40.x.

const ROOT = join(__dirname, '..');
const PROXY_MAIN = join(ROOT, 'dist', 'apps', 'network-proxy', 'src', 'main.js');
const NODE = 'node-a';
const BACKENDS = ['127.0.40.1', '127.0.40.2', '127.0.40.3'];
const SERVICES = '/api/v1/namespaces/default/services';
const SLICES = '/apis/discovery.orch.io/v1/namespaces/default/endpointslices';
/** A node port window below the ephemeral range, different per run. */
const NODE_PORT_BASE = 30000 + Math.floor(Math.random() * 26) * 100;

interface Backends {
  port: number;
  close(): Promise<void>;
}

/** TCP servers on every BACKENDS address and one port: each greets with its address, then echoes. */
async function tcpBackends(): Promise<Backends> {
  for (let attempt = 0; ; attempt++) {
    const servers: net.Server[] = [];
    const sockets = new Set<net.Socket>();
    try {
      let port = 0;
      for (const ip of BACKENDS) {
        const server = net.createServer((s) => {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
          s.write(`${ip}\n`);
          s.pipe(s);
        });
        await new Promise<void>((resolve, reject) => server.once('error', reject).listen({ host: ip, port, exclusive: true }, resolve));
        servers.push(server);
        port = (server.address() as net.AddressInfo).port;
      }
      return { port, close: async () => (sockets.forEach((s) => s.destroy()), void (await Promise.all(servers.map((s) => new Promise((r) => s.close(r)))))) };
    } catch (err) {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      if (attempt >= 5) throw err;
    }
  }
}

/** UDP servers on BACKENDS: each answers `<ip>:<payload>`. */
async function udpBackends(port: number): Promise<Backends> {
  const sockets = await Promise.all(
    BACKENDS.map(
      (ip) =>
        new Promise<dgram.Socket>((resolve, reject) => {
          const s = dgram.createSocket('udp4');
          s.on('message', (m, r) => s.send(Buffer.concat([Buffer.from(`${ip}:`), m]), r.port, r.address));
          s.once('error', reject);
          s.bind({ address: ip, port, exclusive: true }, () => resolve(s));
        }),
    ),
  );
  return { port, close: async () => void (await Promise.all(sockets.map((s) => new Promise((r) => s.close(() => r(undefined)))))) };
}

/** The first line the server sends on a new connection; rejects on refusal or silence. */
function firstLine(host: string, port: number, opts: { localAddress?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, localAddress: opts.localAddress });
    let buf = '';
    s.setTimeout(opts.timeoutMs ?? 2000, () => {
      s.destroy();
      reject(new Error('silence'));
    });
    s.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\n')) {
        s.destroy();
        resolve(buf.slice(0, buf.indexOf('\n')));
      }
    });
    s.on('error', reject);
  });
}

/** What a new connection gets: the backend's name, `refused`, or `dropped` (accepted, no answer). */
async function outcome(host: string, port: number, localAddress?: string): Promise<string> {
  try {
    return await firstLine(host, port, { localAddress, timeoutMs: 400 });
  } catch (err) {
    const msg = (err as Error).message;
    return msg.includes('ECONNREFUSED') ? 'refused' : msg === 'silence' ? 'dropped' : msg;
  }
}

function udpRequest(host: string, port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => (s.close(), reject(new Error('no UDP answer'))), 1000);
    s.on('message', (m) => (clearTimeout(timer), s.close(), resolve(m.toString())));
    s.send(payload, port, host);
  });
}

const tally = (xs: string[]) => Object.fromEntries([...new Set(xs)].sort().map((x) => [x, xs.filter((y) => y === x).length]));

interface EndpointRow {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

describe('network-proxy (real gateway and proxy processes)', () => {
  let gw: GatewayProcess;
  let api: ApiClient;
  let proxy: RunningProcess;
  let healthPort: number;
  let metricsPort: number;
  let tcp: Backends;
  let udp: Backends;

  beforeAll(async () => {
    if (!existsSync(PROXY_MAIN)) throw new Error(`${PROXY_MAIN} is missing: run "node scripts/build.mjs" first`);
    tcp = await tcpBackends();
    udp = await udpBackends(tcp.port);
    gw = await startGateway({ args: ['--service-cluster-ip-range=127.77.0.0/16', `--service-node-port-range=${NODE_PORT_BASE}-${NODE_PORT_BASE + 99}`] });
    api = gw.admin;
    healthPort = await freePort();
    metricsPort = await freePort();
    proxy = await startProcess({
      cmd: process.execPath,
      args: [
        PROXY_MAIN,
        `--kubeconfig=${gw.kubeconfig}`,
        `--healthz-bind-address=127.0.0.1:${healthPort}`,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        '--proxy-mode=ipvs',
        '--ipvs-scheduler=rr',
        `--hostname-override=${NODE}`,
        '--nodeport-addresses=127.0.0.1/32',
      ],
      env: { ORCH_LOG_LEVEL: 'warn' },
      readyProbe: httpProbe(`http://127.0.0.1:${metricsPort}/readyz`),
      timeoutMs: 30_000,
    });
  }, 90_000);

  afterAll(async () => {
    await proxy?.stop();
    await gw?.stop();
    await tcp?.close();
    await udp?.close();
  });

  /** Creates a service; returns its cluster IP and node ports by port name. */
  async function createService(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}): Promise<{ ip: string; nodePort: Record<string, number> }> {
    const r = await api.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name, labels }, spec });
    if (r.status !== 201) throw new Error(`create service ${name}: ${r.status} ${r.text}`);
    const nodePort = Object.fromEntries((r.json.spec.ports ?? []).map((p: { name: string; nodePort?: number }) => [p.name, p.nodePort]));
    return { ip: r.json.spec.clusterIP, nodePort };
  }

  /** Writes the one EndpointSlice of a service (PUT creates or replaces it). */
  async function setEndpoints(service: string, rows: EndpointRow[], ports = [{ name: 'http', port: tcp.port, protocol: 'TCP' }]): Promise<void> {
    const name = `${service}-e2e`;
    const slice = {
      apiVersion: 'discovery.orch.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, labels: { 'orch.io/service-name': service, 'endpointslice.orch.io/managed-by': 'e2e.orch.io' } },
      addressType: 'IPv4',
      ports,
      endpoints: rows.map((r) => ({
        addresses: [r.ip],
        nodeName: r.node ?? NODE,
        conditions: { ready: r.ready ?? true, serving: r.serving ?? r.ready ?? true, terminating: r.terminating ?? false },
      })),
    };
    const res = await api.put(`${SLICES}/${name}`, slice);
    if (res.status !== 200 && res.status !== 201) throw new Error(`put slice ${name}: ${res.status} ${res.text}`);
  }

  /** Polls until a new connection's outcome is `want`. */
  const becomes = (host: string, port: number, want: string) => eventually(`${host}:${port} → ${want}`, async () => ((await outcome(host, port)) === want ? true : undefined), 15_000, 50);

  it('requests through the cluster IP and the NodePort reach every backend; rr spreads them evenly', async () => {
    const svc = await createService('web', { type: 'NodePort', ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    await setEndpoints('web', BACKENDS.map((ip) => ({ ip })));
    for (const [host, port] of [
      [svc.ip, 8080],
      ['127.0.0.1', svc.nodePort.http],
    ] as const) {
      await eventually(`${host}:${port} serves`, async () => (BACKENDS.includes(await outcome(host, port)) ? true : undefined));
      const got: string[] = [];
      for (let i = 0; i < 30; i++) got.push(await firstLine(host, port));
      expect({ host, spread: tally(got) }).toEqual({ host, spread: Object.fromEntries(BACKENDS.map((b) => [b, 10])) });
    }
  });

  it('ClientIP session affinity pins each client to one backend', async () => {
    const svc = await createService('sticky', { sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 8080 }] });
    await setEndpoints('sticky', BACKENDS.map((ip) => ({ ip })));
    await eventually('sticky serves', async () => (BACKENDS.includes(await outcome(svc.ip, 8080)) ? true : undefined));
    const pinned = new Set<string>();
    for (const client of ['127.0.50.1', '127.0.50.2', '127.0.50.3', '127.0.50.4']) {
      const got = new Set<string>();
      for (let i = 0; i < 10; i++) got.add(await firstLine(svc.ip, 8080, { localAddress: client }));
      expect({ client, backends: got.size }).toEqual({ client, backends: 1 });
      pinned.add([...got][0]);
    }
    expect(pinned.size).toBeGreaterThan(1); // different clients are not all pinned to one backend
  });

  it('scale to 0 → connections refused; back → served again; an open connection survives both', async () => {
    const svc = await createService('scale', { type: 'NodePort', ports: [{ name: 'http', port: 8080 }] });
    await setEndpoints('scale', [{ ip: BACKENDS[0] }]);
    await becomes(svc.ip, 8080, BACKENDS[0]);

    const open = net.connect({ host: svc.ip, port: 8080 });
    const received: string[] = [];
    open.on('data', (d) => received.push(d.toString()));
    await new Promise((r) => open.once('data', r));

    await setEndpoints('scale', []);
    await becomes(svc.ip, 8080, 'refused');
    expect(await outcome('127.0.0.1', svc.nodePort.http)).toBe('refused');

    await setEndpoints('scale', [{ ip: BACKENDS[1] }]);
    await becomes(svc.ip, 8080, BACKENDS[1]);
    await becomes('127.0.0.1', svc.nodePort.http, BACKENDS[1]);

    open.write('ping');
    await eventually('the open connection still echoes', () => (received.join('') === `${BACKENDS[0]}\nping` ? true : undefined), 5000, 20);
    open.destroy();
  });

  it('internalTrafficPolicy Local: only node-local endpoints; none local → dropped; terminating local ones are the fallback', async () => {
    const svc = await createService('local-in', { internalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 8080 }] });
    await setEndpoints('local-in', [{ ip: BACKENDS[0] }, { ip: BACKENDS[1], node: 'node-b' }, { ip: BACKENDS[2], node: 'node-b' }]);
    await becomes(svc.ip, 8080, BACKENDS[0]);
    const got = new Set<string>();
    for (let i = 0; i < 9; i++) got.add(await firstLine(svc.ip, 8080));
    expect([...got]).toEqual([BACKENDS[0]]);

    await setEndpoints('local-in', [{ ip: BACKENDS[1], node: 'node-b' }]);
    await becomes(svc.ip, 8080, 'dropped');

    // Every local endpoint terminating (but serving): those are used (ProxyTerminatingEndpoints).
    await setEndpoints('local-in', [{ ip: BACKENDS[2], ready: false, serving: true, terminating: true }, { ip: BACKENDS[1], node: 'node-b' }]);
    await becomes(svc.ip, 8080, BACKENDS[2]);
  });

  it('externalTrafficPolicy Local: the NodePort forwards only to local endpoints; none local → not forwarded', async () => {
    const svc = await createService('local-ext', { type: 'NodePort', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 8080 }] });
    const nodePort = svc.nodePort.http;
    await setEndpoints('local-ext', [{ ip: BACKENDS[0], node: 'node-b' }, { ip: BACKENDS[1] }]);
    await becomes('127.0.0.1', nodePort, BACKENDS[1]);
    const viaNodePort = new Set<string>();
    for (let i = 0; i < 6; i++) viaNodePort.add(await firstLine('127.0.0.1', nodePort));
    expect([...viaNodePort]).toEqual([BACKENDS[1]]);

    await setEndpoints('local-ext', [{ ip: BACKENDS[0], node: 'node-b' }]);
    await becomes('127.0.0.1', nodePort, 'dropped');
    // The cluster IP (internal policy Cluster) still reaches the remote endpoint.
    expect(await outcome(svc.ip, 8080)).toBe(BACKENDS[0]);
  });

  it('services labelled service.orch.io/service-proxy-name are left alone', async () => {
    const svc = await createService('custom', { ports: [{ name: 'http', port: 8080 }] }, { 'service.orch.io/service-proxy-name': 'someone-else' });
    await setEndpoints('custom', [{ ip: BACKENDS[0] }]);
    // A regular service created afterwards is served, so the proxy has seen both by now.
    const control = await createService('control', { ports: [{ name: 'http', port: 8080 }] });
    await setEndpoints('control', [{ ip: BACKENDS[0] }]);
    await becomes(control.ip, 8080, BACKENDS[0]);
    expect(await outcome(svc.ip, 8080)).toBe('refused');
  });

  it('forwards UDP through the cluster IP', async () => {
    const svc = await createService('dns', { ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }] });
    await setEndpoints('dns', BACKENDS.map((ip) => ({ ip })), [{ name: 'dns', port: udp.port, protocol: 'UDP' }]);
    const answer = await eventually('UDP answer', () => udpRequest(svc.ip, 5353, 'query').catch(() => undefined), 15_000, 50);
    expect(answer).toMatch(/^127\.0\.40\.\d:query$/);
    const from = new Set<string>();
    for (let i = 0; i < 6; i++) from.add((await udpRequest(svc.ip, 5353, `q${i}`)).split(':')[0]);
    expect(from.size).toBe(3);
  });

  it('serves health on plain HTTP at --healthz-bind-address (as upstream, for load balancer probes) and health plus metrics on the metrics port', async () => {
    const healthz = await new Promise<number>((resolve, reject) => http.get(`http://127.0.0.1:${healthPort}/healthz`, (r) => (r.resume(), resolve(r.statusCode ?? 0))).on('error', reject));
    expect(healthz).toBe(200);
    const metrics = await new Promise<string>((resolve, reject) =>
      http.get(`http://127.0.0.1:${metricsPort}/metrics`, (r) => {
        let body = '';
        r.on('data', (d) => (body += d));
        r.on('end', () => resolve(body));
      }).on('error', reject),
    );
    expect(metrics).toMatch(/orchproxy_connections_total\{protocol="TCP",result="forwarded"\} \d+/);
    expect(metrics).toMatch(/orchproxy_sync_proxy_rules_duration_seconds_count \d+/);
  });
});
