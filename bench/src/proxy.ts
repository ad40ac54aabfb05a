import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags } from '@orch/server-common';
import { call, percentile, target, type HttpsTarget } from './load';
import type { Row } from './report';
import { freePort } from '@orch/testing';
import { appMain, startBenchGateway } from './gateway-process';

/**
 * network-proxy benchmarks: the real gateway and proxy processes, echo backends in a child
 * process. Each figure is measured through the proxy (cluster IP) and, as the baseline,
 * against the backend directly (or, for endpoint changes, against a bare watch of the same
 * EndpointSlice update). Run alone: `node dist/bench/src/proxy.js [--duration=5s]`.
 */

const PROXY_MAIN = appMain('network-proxy');
/** Backend addresses (loopback, like pods) and the service range (loopback, reachable without root). */
const BACKEND_IPS = ['127.0.60.1', '127.0.60.2'];
const SERVICE_RANGE = '127.78.0.0/16';
const MESSAGE = Buffer.alloc(64, 'm');

/** One result row; same shape as bench/src/main.ts `Row`. */

export interface ProxyBenchOptions {
  /** Duration of each throughput/latency phase (default 5 s). */
  durationMs?: number;
  /** Concurrent connections of the parallel phases (default 64). */
  concurrency?: number;
  /** Endpoint changes timed (default 40). */
  changes?: number;
}

interface Measured {
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Runs all proxy benchmarks and returns their rows. Needs `node scripts/build.mjs` first. */
export async function runProxyBench(opts: ProxyBenchOptions = {}): Promise<Row[]> {
  const durationMs = opts.durationMs ?? 5000;
  const concurrency = opts.concurrency ?? 64;
  const rows: Row[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'orch-proxy-bench-'));
  const children: ChildProcess[] = [];
  const direct = 'direct connection to the backend';
  try {
    const backends = spawn(process.execPath, [__filename, '--backend', ...BACKEND_IPS], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(backends);
    const ports = JSON.parse(await firstLineOf(backends)) as { echo: number; greet: number };

    const gateway = await startBenchGateway(dir, [`--service-cluster-ip-range=${SERVICE_RANGE}`]);
    children.push(gateway.process);
    const api = target(gateway.url, gateway.creds, 8);
    children.push(
      spawn(process.execPath, [PROXY_MAIN, `--kubeconfig=${join(dir, 'admin.kubeconfig')}`, `--healthz-bind-address=127.0.0.1:${await freePort()}`, `--metrics-bind-address=`, '--proxy-mode=ipvs', '--ipvs-scheduler=rr', '--hostname-override=bench'], {
        // Errors only, on the bench's stderr: a proxy that refuses to start must say why.
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ORCH_LOG_LEVEL: 'error', NODE_ENV: 'production' },
      }),
    );

    // One service over one backend for the data path; one to flip between backends.
    const echoIP = await createService(api, 'echo', [
      { name: 'tcp', port: ports.echo, protocol: 'TCP' },
      { name: 'udp', port: ports.echo, protocol: 'UDP' },
    ]);
    await putSlice(api, 'echo', [BACKEND_IPS[0]], [
      { name: 'tcp', port: ports.echo, protocol: 'TCP' },
      { name: 'udp', port: ports.echo, protocol: 'UDP' },
    ]);
    await until(() => roundTrip(echoIP, ports.echo).then(() => true, () => false), 30_000, 'proxy serving the echo service');
    await until(() => udpRoundTrip(echoIP, ports.echo).then(() => true, () => false), 10_000, 'proxy serving UDP');

    // --- TCP request/response over persistent connections, 1 and N at once
    for (const n of [1, concurrency]) {
      const viaProxy = await tcpRequests(echoIP, ports.echo, n, durationMs);
      const straight = await tcpRequests(BACKEND_IPS[0], ports.echo, n, durationMs);
      rows.push({ metric: `proxy TCP round trips/s (${n} conn)`, orch: viaProxy.opsPerSecond, baseline: straight.opsPerSecond, baselineName: direct, unit: '/s', higherIsBetter: true });
      rows.push({ metric: `proxy TCP round trip p50 (${n} conn)`, orch: viaProxy.p50Ms, baseline: straight.p50Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
      rows.push({ metric: `proxy TCP round trip p99 (${n} conn)`, orch: viaProxy.p99Ms, baseline: straight.p99Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
    }
    // --- TCP bulk transfer, one connection
    const bulkProxy = await tcpBulk(echoIP, ports.echo, durationMs);
    const bulkDirect = await tcpBulk(BACKEND_IPS[0], ports.echo, durationMs);
    rows.push({ metric: 'proxy TCP bulk echo (1 conn)', orch: bulkProxy, baseline: bulkDirect, baselineName: direct, unit: 'MiB/s', higherIsBetter: true });
    // --- new connection: connect + first answer
    const connProxy = await tcpConnects(echoIP, ports.echo, durationMs);
    const connDirect = await tcpConnects(BACKEND_IPS[0], ports.echo, durationMs);
    rows.push({ metric: 'proxy TCP connect + first round trip p50', orch: connProxy.p50Ms, baseline: connDirect.p50Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
    rows.push({ metric: 'proxy TCP connect + first round trip p99', orch: connProxy.p99Ms, baseline: connDirect.p99Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
    // --- UDP request/response, 1 and N clients
    for (const n of [1, concurrency]) {
      const viaProxy = await udpRequests(echoIP, ports.echo, n, durationMs);
      const straight = await udpRequests(BACKEND_IPS[0], ports.echo, n, durationMs);
      rows.push({ metric: `proxy UDP round trips/s (${n} client${n > 1 ? 's' : ''})`, orch: viaProxy.opsPerSecond, baseline: straight.opsPerSecond, baselineName: direct, unit: '/s', higherIsBetter: true });
      rows.push({ metric: `proxy UDP round trip p50 (${n} client${n > 1 ? 's' : ''})`, orch: viaProxy.p50Ms, baseline: straight.p50Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
      rows.push({ metric: `proxy UDP round trip p99 (${n} client${n > 1 ? 's' : ''})`, orch: viaProxy.p99Ms, baseline: straight.p99Ms, baselineName: direct, unit: 'ms', higherIsBetter: false });
    }
    // --- endpoint change → the proxy uses it
    const change = await endpointChanges(api, ports.greet, opts.changes ?? 40);
    rows.push({ metric: 'endpoint change → proxy uses it, p50', orch: change.proxy.p50, baseline: change.watch.p50, baselineName: 'same update seen by a bare watch', unit: 'ms', higherIsBetter: false });
    rows.push({ metric: 'endpoint change → proxy uses it, p99', orch: change.proxy.p99, baseline: change.watch.p99, baselineName: 'same update seen by a bare watch', unit: 'ms', higherIsBetter: false });
    api.agent.destroy();
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

// ---------------------------------------------------------------- API helpers

interface SlicePort {
  name: string;
  port: number;
  protocol: string;
}

async function createService(api: HttpsTarget, name: string, ports: SlicePort[]): Promise<string> {
  const body = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })) } };
  const r = await call(api, 'POST', '/api/v1/namespaces/default/services', JSON.stringify(body));
  if (r.status !== 201) throw new Error(`create service ${name}: ${r.status} ${r.body}`);
  return JSON.parse(r.body).spec.clusterIP;
}

async function putSlice(api: HttpsTarget, service: string, ips: string[], ports: SlicePort[]): Promise<void> {
  const name = `${service}-bench`;
  const body = {
    apiVersion: 'discovery.orch.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'orch.io/service-name': service, 'endpointslice.orch.io/managed-by': 'bench.orch.io' } },
    addressType: 'IPv4',
    ports,
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'bench' })),
  };
  const r = await call(api, 'PUT', `/apis/discovery.orch.io/v1/namespaces/default/endpointslices/${name}`, JSON.stringify(body));
  if (r.status !== 200 && r.status !== 201) throw new Error(`put slice ${name}: ${r.status} ${r.body}`);
}

/**
 * Flips the `flip` service between the two backends `changes` times. Per change: from the
 * start of the PUT until (a) a new connection through the proxy greets with the new backend,
 * (b) a watch on the slices (opened beforehand) delivers the update.
 */
async function endpointChanges(api: HttpsTarget, greetPort: number, changes: number): Promise<{ proxy: { p50: number; p99: number }; watch: { p50: number; p99: number } }> {
  const ports = [{ name: 'greet', port: greetPort, protocol: 'TCP' }];
  const ip = await createService(api, 'flip', ports);
  await putSlice(api, 'flip', [BACKEND_IPS[0]], ports);
  await until(async () => (await greeting(ip, greetPort).catch(() => '')) === BACKEND_IPS[0], 30_000, 'flip served');

  const rv = JSON.parse((await call(api, 'GET', '/apis/discovery.orch.io/v1/namespaces/default/endpointslices')).body).metadata.resourceVersion;
  let onEvent: ((addr: string) => void) | undefined;
  const watch = https.get(`${api.base}/apis/discovery.orch.io/v1/namespaces/default/endpointslices?watch=1&resourceVersion=${rv}&labelSelector=orch.io/service-name%3Dflip`, { agent: api.agent }, (res) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const ev = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        onEvent?.(ev.object?.endpoints?.[0]?.addresses?.[0]);
      }
    });
  });
  const proxyMs: number[] = [];
  const watchMs: number[] = [];
  try {
    for (let i = 1; i <= changes; i++) {
      const next = BACKEND_IPS[i % 2];
      const seen = new Promise<number>((resolve) => (onEvent = (addr) => addr === next && resolve(performance.now())));
      const t0 = performance.now();
      const put = putSlice(api, 'flip', [next], ports);
      while ((await greeting(ip, greetPort).catch(() => '')) !== next) {
        if (performance.now() - t0 > 10_000) throw new Error(`the proxy did not switch to ${next} within 10 s`);
      }
      proxyMs.push(performance.now() - t0);
      let timer: NodeJS.Timeout | undefined;
      const watched = await Promise.race([seen, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 10_000)))]);
      clearTimeout(timer);
      if (watched === undefined) throw new Error('the watch did not deliver the slice update within 10 s');
      watchMs.push(watched - t0);
      await put;
    }
  } finally {
    watch.destroy();
  }
  const sum = (xs: number[]) => (xs.sort((a, b) => a - b), { p50: percentile(xs, 50), p99: percentile(xs, 99) });
  return { proxy: sum(proxyMs), watch: sum(watchMs) };
}

// ---------------------------------------------------------------- load generators

/** n persistent connections, each sending 64 bytes and waiting for the echo, for durationMs. */
async function tcpRequests(host: string, port: number, n: number, durationMs: number): Promise<Measured> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const s = await connect(host, port);
      try {
        while (performance.now() < end) {
          const t = performance.now();
          await echo(s, MESSAGE);
          latencies.push(performance.now() - t);
        }
      } finally {
        s.destroy();
      }
    }),
  );
  return summarize(latencies, (performance.now() - started) / 1000);
}

/** New connection per request: connect, one 64-byte round trip, close. */
async function tcpConnects(host: string, port: number, durationMs: number): Promise<Measured> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  const started = performance.now();
  while (performance.now() < end) {
    const t = performance.now();
    await roundTrip(host, port);
    latencies.push(performance.now() - t);
  }
  return summarize(latencies, (performance.now() - started) / 1000);
}

/** One connection streaming 64 KiB writes with backpressure while reading the echo; MiB/s received. */
async function tcpBulk(host: string, port: number, durationMs: number): Promise<number> {
  const s = await connect(host, port);
  const chunk = Buffer.alloc(64 * 1024, 'b');
  let received = 0;
  s.on('data', (d: Buffer) => (received += d.length));
  const started = performance.now();
  const end = started + durationMs;
  while (performance.now() < end) {
    if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  }
  const seconds = (performance.now() - started) / 1000;
  s.destroy();
  return received / (1 << 20) / seconds;
}

/** n UDP clients, each sending 64 bytes and waiting for the echo, for durationMs. */
async function udpRequests(host: string, port: number, n: number, durationMs: number): Promise<Measured> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
      try {
        while (performance.now() < end) {
          const t = performance.now();
          const ok = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => (s.off('message', on), resolve(false)), 1000);
            const on = () => (clearTimeout(timer), resolve(true));
            s.once('message', on);
            s.send(MESSAGE, port, host);
          });
          if (ok) latencies.push(performance.now() - t);
        }
      } finally {
        s.close();
      }
    }),
  );
  return summarize(latencies, (performance.now() - started) / 1000);
}

function summarize(latencies: number[], seconds: number): Measured {
  latencies.sort((a, b) => a - b);
  return { opsPerSecond: latencies.length / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

// ---------------------------------------------------------------- sockets

function connect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Writes msg and resolves once as many bytes came back. */
function echo(s: net.Socket, msg: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    let got = 0;
    const onData = (d: Buffer) => {
      got += d.length;
      if (got >= msg.length) {
        s.off('data', onData);
        s.off('error', reject);
        resolve();
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.write(msg);
  });
}

async function roundTrip(host: string, port: number): Promise<void> {
  const s = await connect(host, port);
  try {
    await echo(s, MESSAGE);
  } finally {
    s.destroy();
  }
}

function udpRoundTrip(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => (s.close(), reject(new Error('no UDP answer'))), 500);
    s.once('message', () => (clearTimeout(timer), s.close(), resolve()));
    s.send(MESSAGE, port, host);
  });
}

/** The greeting (backend address) of a new connection to the greet port. */
function greeting(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port });
    let buf = '';
    s.setTimeout(1000, () => (s.destroy(), reject(new Error('silence'))));
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

// ---------------------------------------------------------------- process helpers

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function firstLineOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`backend process exited with ${code}`)));
  });
}

/**
 * The backend process: on each address, a TCP+UDP echo server on one port and a TCP server
 * on another that greets with the address. Prints `{"echo":P,"greet":Q}` once listening.
 */
async function serveBackends(ips: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      let echoPort = 0;
      let greetPort = 0;
      for (const ip of ips) {
        const e = net.createServer((s) => (s.setNoDelay(true), s.on('error', () => s.destroy()), s.pipe(s)));
        await new Promise<void>((res, rej) => e.once('error', rej).listen({ host: ip, port: echoPort, exclusive: true }, res));
        echoPort = (e.address() as net.AddressInfo).port;
        const u = dgram.createSocket('udp4');
        u.on('message', (m, r) => u.send(m, r.port, r.address));
        await new Promise<void>((res, rej) => (u.once('error', rej), u.bind({ address: ip, port: echoPort, exclusive: true }, res)));
        const g = net.createServer((s) => (s.on('error', () => s.destroy()), s.end(`${ip}\n`)));
        await new Promise<void>((res, rej) => g.once('error', rej).listen({ host: ip, port: greetPort, exclusive: true }, res));
        greetPort = (g.address() as net.AddressInfo).port;
      }
      process.stdout.write(`${JSON.stringify({ echo: echoPort, greet: greetPort })}\n`);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
}

function printRows(rows: Row[]): void {
  const fmt = (v: number) => (Number.isFinite(v) ? (v >= 100 ? v.toFixed(0) : v.toFixed(2)) : 'n/a');
  console.log('\n| metric | orch | baseline | baseline is | orch / baseline |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.metric} | ${fmt(r.orch)} ${r.unit} | ${fmt(r.baseline)} ${r.unit} | ${r.baselineName} | ${fmt(r.orch / r.baseline)}x |`);
}

if (require.main === module) {
  if (process.argv[2] === '--backend') {
    void serveBackends(process.argv.slice(3));
  } else {
    const FLAGS = {
      duration: { type: 'duration', default: 5000, description: 'Duration of each phase.' },
      concurrency: { type: 'int', default: 64, description: 'Connections of the parallel phases.' },
      changes: { type: 'int', default: 40, description: 'Endpoint changes timed.' },
    } as const;
    const { values } = parseFlags(FLAGS, process.argv.slice(2));
    runProxyBench({ durationMs: values.duration, concurrency: values.concurrency, changes: values.changes })
      .then(printRows)
      .catch((err) => {
        console.error(err);
        process.exit(1);
      });
  }
}
