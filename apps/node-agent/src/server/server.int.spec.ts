import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ensurePki, issueClientCert, selfSignedServingCert, type CertAndKey, type Pki } from '@orch/auth';
import { RestClient } from '@orch/client';
import { HealthChecks, createLogger, createMetricsRegistry } from '@orch/server-common';
import { removeDir, tempDir } from '@orch/testing';
import { SimulatedRuntime } from '../runtime/simulated/simulated-runtime';
import { NodeAuth } from './auth';
import { startAgentServer } from './server';
import { StatsCollector } from './stats';
import { StreamingEndpoints } from './streams';

/**
 * The agent's HTTPS API with its whole auth chain, over real TLS. The gateway's review APIs are
 * played by a small HTTP peer that knows two bearer tokens and denies user "mallory".
 */
let dir: string;
let pki: Pki;
let alice: CertAndKey;
let mallory: CertAndKey;
let peer: http.Server;
let client: RestClient;
const reviews: { kind: string; spec: Record<string, unknown> }[] = [];

beforeAll(async () => {
  dir = await tempDir('agent-server-');
  pki = await ensurePki(dir);
  alice = await issueClientCert(pki, { cn: 'alice', orgs: ['devs'] });
  mallory = await issueClientCert(pki, { cn: 'mallory' });
  peer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const obj = JSON.parse(body) as { kind: string; spec: Record<string, unknown> };
      reviews.push(obj);
      let status: unknown;
      if (obj.kind === 'TokenReview') {
        const users: Record<string, string> = { 'token-alice': 'alice', 'token-mallory': 'mallory' };
        const user = users[String(obj.spec.token)];
        status = user ? { authenticated: true, user: { username: user, groups: ['system:authenticated'] } } : { authenticated: false };
      } else {
        status = { allowed: obj.spec.user !== 'mallory' };
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...obj, status }));
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  client = new RestClient({ server: `http://127.0.0.1:${(peer.address() as AddressInfo).port}` }, { component: 'test' });
});
afterAll(async () => {
  client.close();
  await new Promise((r) => peer.close(r));
  await removeDir(dir);
});

async function serve(anonymous: boolean) {
  const tls = await selfSignedServingCert(['127.0.0.1'], 'agent');
  const runtime = new SimulatedRuntime('127.0.0.1');
  return startAgentServer({
    host: '127.0.0.1',
    port: 0,
    tls: { cert: tls.certPem, key: tls.keyPem, ca: pki.ca.certPem },
    auth: new NodeAuth({
      clientCaPem: pki.ca.certPem,
      anonymous,
      tokenWebhook: { client, ttlMs: 60_000 },
      authorization: { mode: 'Webhook', client, allowTtlMs: 60_000, denyTtlMs: 1_000 },
    }),
    logger: createLogger('test', { level: 'error' }),
    view: {
      nodeName: 'n1',
      pods: () => [],
      pod: () => undefined,
      runtime,
      machine: { numCores: 1, memoryCapacityBytes: 1, machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: 'k', osImage: 'o', operatingSystem: 'linux', architecture: 'amd64' },
      usage: async () => ({ memoryAvailableBytes: 1, memoryTotalBytes: 2, fsCapacityBytes: 2, fsAvailableBytes: 1, fsInodes: 2, fsInodesFree: 1, pidsMax: 2, pidsRunning: 1 }),
      metrics: createMetricsRegistry(),
      health: new HealthChecks({}),
      stats: new StatsCollector('n1', '2025-01-01T00:00:00Z'),
      nodeLogsDir: dir,
    },
    streaming: new StreamingEndpoints({ runtime, pod: () => undefined, streamCreationTimeoutMs: 30_000, idleTimeoutMs: 60_000 }),
  });
}

function get(port: number, path: string, creds: { cert?: CertAndKey; token?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, cert: creds.cert?.certPem, key: creds.cert?.keyPem, headers: creds.token ? { authorization: `Bearer ${creds.token}` } : {}, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('agent HTTPS API authentication and authorization', () => {
  let strict: { port: number; close(): Promise<void> };
  let open: { port: number; close(): Promise<void> };
  beforeAll(async () => {
    strict = await serve(false);
    open = await serve(true);
  });
  afterAll(async () => {
    await strict.close();
    await open.close();
  });

  it.each<{ name: string; anonymousAllowed: boolean; path: string; creds: () => Promise<{ cert?: CertAndKey; token?: string }>; status: number; body?: RegExp }>([
    { name: 'anonymous refused', anonymousAllowed: false, path: '/pods', creds: async () => ({}), status: 401, body: /^Unauthorized$/ },
    { name: 'anonymous allowed by the webhook', anonymousAllowed: true, path: '/pods', creds: async () => ({}), status: 200, body: /"kind":"PodList"/ },
    { name: 'client certificate', anonymousAllowed: false, path: '/healthz', creds: async () => ({ cert: alice }), status: 200, body: /^ok$/ },
    { name: 'client certificate of an unknown CA', anonymousAllowed: false, path: '/pods', creds: async () => ({ cert: await selfSignedServingCert(['x'], 'x') }), status: 401 },
    { name: 'bearer token', anonymousAllowed: false, path: '/spec/', creds: async () => ({ token: 'token-alice' }), status: 200, body: /"num_cores":1/ },
    { name: 'unknown bearer token', anonymousAllowed: true, path: '/pods', creds: async () => ({ token: 'nope' }), status: 401 },
    { name: 'denied user (certificate)', anonymousAllowed: false, path: '/stats/summary', creds: async () => ({ cert: mallory }), status: 403, body: /^Forbidden \(user=mallory, verb=get, resource=nodes, subresource=stats\)$/ },
    { name: 'denied user (token)', anonymousAllowed: false, path: '/metrics', creds: async () => ({ token: 'token-mallory' }), status: 403, body: /subresource=metrics/ },
  ])('$name → $status', async ({ anonymousAllowed, path, creds, status, body }) => {
    const r = await get(anonymousAllowed ? open.port : strict.port, path, await creds());
    expect(r.status).toBe(status);
    if (body) expect(r.body.trim()).toMatch(body);
  });

  it('asks the gateway about the node subresource of the path', async () => {
    reviews.length = 0;
    const listing = await get(strict.port, '/logs/', { cert: alice });
    expect(listing.status).toBe(200);
    expect(listing.body).toContain('<a href="ca.crt">ca.crt</a>');
    const sar = reviews.find((r) => r.kind === 'SubjectAccessReview');
    expect(sar?.spec).toMatchObject({ user: 'alice', groups: ['devs', 'system:authenticated'], resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'log', name: 'n1', namespace: '', group: '' } });
  });

  it.each([
    { path: '/logs/ca.crt', status: 200, body: /BEGIN CERTIFICATE/ },
    { path: '/logs/nope.log', status: 404 },
    { path: '/logs/..%2F..%2F..%2Fetc%2Fpasswd', status: 404 },
    { path: '/metrics/resource', status: 200, body: /^# HELP node_cpu_usage_seconds_total/ },
    { path: '/stats/summary', status: 200, body: /"nodeName":"n1"/ },
    { path: '/containerLogs/ns/missing/c', status: 404, body: /pod ns\/missing not found/ },
    { path: '/unknown', status: 404 },
  ])('serves $path → $status', async ({ path, status, body }) => {
    const r = await get(strict.port, path, { cert: alice });
    expect(r.status).toBe(status);
    if (body) expect(r.body).toMatch(body);
  });
});
