import http from 'node:http';
import https from 'node:https';
import { readdir, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { authRequestFromIncoming } from '@orch/auth';
import { parseTime } from '@orch/apimachinery';
import { renderMetrics, type HealthChecks, type Logger } from '@orch/server-common';
import type { Registry } from 'prom-client';
import type { Pod } from '../api/types';
import type { MachineInfo, MachineUsage } from '../node/machine';
import type { ProcessRuntime } from '../runtime/process/process-runtime';
import { formatNanos, instanceLogFiles, streamLog, type LogQuery } from '../runtime/process/logs';
import { resolvePort } from '../runtime/process/probes';
import type { Runtime } from '../runtime/runtime';
import { rejectUpgrade } from '../streaming/upgrade';
import type { NodeAuth } from './auth';
import { resourceMetrics, type PodInput, type StatsCollector } from './stats';
import { isStreamingPath, type StreamingEndpoints } from './streams';

/** What the HTTPS API serves from. */
export interface AgentView {
  nodeName: string;
  /** Pods bound to the agent's node(s), from its informer. */
  pods(): Pod[];
  pod(namespace: string, name: string): Pod | undefined;
  runtime: Runtime;
  /** The process runtime, for logs and process stats (undefined in the simulated runtime). */
  processRuntime?: ProcessRuntime;
  machine: MachineInfo;
  usage(): Promise<MachineUsage>;
  metrics: Registry;
  health: HealthChecks;
  stats: StatsCollector;
  /** Directory served by /logs/. */
  nodeLogsDir: string;
}

export interface AgentServerOptions {
  host: string;
  port: number;
  tls: { cert: string; key: string; ca?: string };
  auth: NodeAuth;
  view: AgentView;
  logger: Logger;
  /** Serves the upgrades to /exec, /attach and /portForward; its sessions end when the server closes. */
  streaming: StreamingEndpoints;
}

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function text(reply: FastifyReply, code: number, body: string): FastifyReply {
  return reply.code(code).header('content-type', 'text/plain; charset=utf-8').send(body);
}

function intParam(q: URLSearchParams, name: string, min: number): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new HttpError(400, `invalid ${name}: ${JSON.stringify(v)}`);
  return n;
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === '' || v === 'true' || v === '1';
}

/**
 * The agent's HTTPS API on :10250 (SPEC "Node agent HTTPS endpoints"): every request is
 * authenticated and authorized first (NodeAuth), then served: /healthz, /pods, /spec,
 * /stats/summary, /metrics, /metrics/resource, /containerLogs/<ns>/<pod>/<container>,
 * /logs/<path>, /podProxy/<ns>/<pod>/<[scheme:]port>/<path> (HTTP to a pod's address,
 * used by the gateway's pods/proxy and services/proxy), and the streaming endpoints /exec,
 * /attach and /portForward (WebSocket or SPDY upgrades, see streams.ts).
 */
export async function startAgentServer(opts: AgentServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const app: FastifyInstance = Fastify({
    https: { cert: opts.tls.cert, key: opts.tls.key, ...(opts.tls.ca ? { ca: opts.tls.ca } : {}), requestCert: true, rejectUnauthorized: false },
    logger: false,
    forceCloseConnections: true,
    bodyLimit: 16 * 1024 * 1024,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const v = opts.view;

  app.addHook('onRequest', async (req, reply) => {
    const path = new URL(req.url, 'https://agent').pathname;
    const d = await opts.auth.check(authRequestFromIncoming(req.raw), req.method, path, v.nodeName);
    if (!d.ok) return text(reply, d.code, d.message);
  });
  app.setErrorHandler((err, _req, reply) => {
    const code = err instanceof HttpError ? err.code : 500;
    if (code >= 500) opts.logger.error('request failed', { err: err.message });
    if (!reply.sent && !reply.raw.headersSent) void text(reply, code, err.message);
  });
  app.setNotFoundHandler((_req, reply) => text(reply, 404, '404 page not found\n'));

  app.get('/healthz', async (req, reply) => {
    const r = await v.health.handle('/healthz', new URL(req.url, 'https://agent').searchParams);
    return reply.code(r.status).header('content-type', r.contentType).send(r.body);
  });
  app.get('/pods', async (_req, reply) => reply.header('content-type', 'application/json').send(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: v.pods() })));
  for (const p of ['/spec', '/spec/']) app.get(p, async (_req, reply) => reply.header('content-type', 'application/json').send(JSON.stringify(specInfo(v.machine))));
  app.get('/stats/summary', async (_req, reply) => reply.header('content-type', 'application/json').send(JSON.stringify(await summary(v))));
  app.get('/metrics', async (_req, reply) => {
    const m = await renderMetrics(v.metrics);
    return reply.header('content-type', m.contentType).send(m.body);
  });
  app.get('/metrics/resource', async (_req, reply) => reply.header('content-type', 'text/plain; version=0.0.4').send(resourceMetrics(await summary(v))));
  app.get('/containerLogs/:namespace/:pod/:container', (req, reply) => containerLogs(v, req, reply));
  app.get('/logs', (req, reply) => reply.redirect('/logs/', 301));
  app.get('/logs/*', (req, reply) => nodeLogs(v.nodeLogsDir, (req.params as { '*': string })['*'], reply));
  app.all('/podProxy/:namespace/:pod/:port/*', (req, reply) => podProxy(v, req, reply));
  app.all('/podProxy/:namespace/:pod/:port', (req, reply) => podProxy(v, req, reply));
  for (const prefix of ['/exec/*', '/attach/*', '/portForward/*']) app.all(prefix, (_req, reply) => text(reply, 400, 'Upgrade request required\n'));

  // Upgrades (WebSocket, SPDY) bypass Fastify: the same authentication and authorization, then the streaming endpoints.
  const streaming = opts.streaming;
  app.server.on('upgrade', (req: http.IncomingMessage, socket, head: Buffer) => {
    socket.on('error', () => undefined);
    const path = new URL(req.url ?? '/', 'https://agent').pathname;
    void opts.auth
      .check(authRequestFromIncoming(req), req.method ?? 'GET', path, v.nodeName)
      .then((d) => {
        if (!d.ok) return rejectUpgrade(socket, d.code, d.message);
        if (!isStreamingPath(path)) return rejectUpgrade(socket, 400, `${path} does not take upgrades (only /exec, /attach and /portForward do)`);
        return streaming.handle(req, socket, head);
      })
      .catch((err: Error) => {
        opts.logger.error('streaming request failed', { err: err.message });
        rejectUpgrade(socket, 500, err.message);
      });
  });

  await app.listen({ host: opts.host, port: opts.port });
  const port = (app.server.address() as AddressInfo).port;
  opts.logger.info('serving the node agent API', { address: `https://${opts.host}:${port}` });
  return {
    port,
    close: async () => {
      streaming.close();
      await app.close();
    },
  };
}

/** `/spec` (upstream cAdvisor MachineInfo subset). */
function specInfo(m: MachineInfo): Record<string, unknown> {
  return {
    num_cores: m.numCores,
    memory_capacity: m.memoryCapacityBytes,
    machine_id: m.machineID,
    system_uuid: m.systemUUID,
    boot_id: m.bootID,
    kernel_version: m.kernelVersion,
    os_image: m.osImage,
    operating_system: m.operatingSystem,
    architecture: m.architecture,
  };
}

async function summary(v: AgentView): Promise<Record<string, unknown>> {
  const pods: PodInput[] = [];
  for (const uid of v.runtime.podUids()) {
    const s = v.runtime.podState(uid);
    if (!s) continue;
    pods.push({
      name: s.name,
      namespace: s.namespace,
      uid,
      startTime: s.startTime,
      containers: s.containers
        .filter((c) => !c.init)
        .map((c) => {
          const pr = v.processRuntime;
          return { name: c.name, startTime: c.running?.startedAt ?? s.startTime, pid: pr?.container(uid, c.name)?.pid, ...(pr?.hasCgroups && c.running ? { usage: () => pr.containerUsage(uid, c.name) } : {}) };
        }),
    });
  }
  return v.stats.summary(await v.usage(), pods);
}

/** Streams text with back-pressure to a hijacked response. */
function writer(res: http.ServerResponse): (t: string) => Promise<void> {
  return (t) => (res.write(t) ? Promise.resolve() : new Promise((r) => res.once('drain', () => r())));
}

/**
 * `/containerLogs/<ns>/<pod>/<container>` with follow, previous, tailLines, sinceSeconds,
 * sinceTime, timestamps and limitBytes, as text/plain (chunked while following).
 */
async function containerLogs(v: AgentView, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { namespace, pod: name, container } = req.params as { namespace: string; pod: string; container: string };
  const q = new URL(req.url, 'https://agent').searchParams;
  const pod = v.pod(namespace, name);
  if (!pod) throw new HttpError(404, `pod ${namespace}/${name} not found`);
  const uid = pod.metadata.uid ?? '';
  const query: LogQuery = {
    follow: boolParam(q, 'follow'),
    timestamps: boolParam(q, 'timestamps'),
    tailLines: intParam(q, 'tailLines', 0),
    limitBytes: intParam(q, 'limitBytes', 1),
  };
  const sinceSeconds = intParam(q, 'sinceSeconds', 1);
  const sinceTime = q.get('sinceTime');
  if (sinceSeconds !== undefined) query.since = formatNanos(BigInt(Date.now() - sinceSeconds * 1000) * 1_000_000n);
  else if (sinceTime) {
    let ms: number;
    try {
      ms = parseTime(sinceTime);
    } catch {
      throw new HttpError(400, `invalid sinceTime: ${JSON.stringify(sinceTime)}`);
    }
    query.since = formatNanos(BigInt(ms) * 1_000_000n);
  }
  const cr = v.processRuntime?.container(uid, container);
  const known = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].some((c) => c.name === container);
  if (!known) throw new HttpError(400, `container ${container} is not valid for pod ${name}`);
  if (!v.processRuntime) {
    reply.header('content-type', 'text/plain').send('');
    return;
  }
  if (!cr || !cr.everStarted) {
    const waiting = cr?.waiting?.reason ?? 'ContainerCreating';
    throw new HttpError(400, `container "${container}" in pod "${name}" is waiting to start: ${waiting}`);
  }
  const previous = boolParam(q, 'previous');
  if (previous && cr.restartCount === 0) throw new HttpError(400, `previous terminated container "${container}" in pod "${name}" not found`);
  const instance = previous ? cr.restartCount - 1 : cr.restartCount;
  const files = await instanceLogFiles(cr.logDirectory, instance);
  const live = previous ? undefined : cr.logWriter;
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/plain', ...(query.follow ? { 'transfer-encoding': 'chunked', 'cache-control': 'no-cache' } : {}) });
  const ac = new AbortController();
  res.on('close', () => ac.abort());
  try {
    await streamLog(files, live, query, writer(res), ac.signal);
  } finally {
    res.end();
  }
}

/** `/logs/<path>`: a listing of a directory (HTML, like upstream's file server) or a file's bytes. */
async function nodeLogs(dir: string, rel: string, reply: FastifyReply): Promise<FastifyReply> {
  // Normalizing an absolute path drops every leading `..`: nothing outside `dir` is reachable.
  const path = join(dir, normalize(`/${rel}`));
  let st;
  try {
    st = await stat(path);
  } catch {
    throw new HttpError(404, '404 page not found\n');
  }
  if (st.isDirectory()) {
    const entries = await readdir(path, { withFileTypes: true });
    const items = entries
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((e) => {
        const n = `${e.name}${e.isDirectory() ? '/' : ''}`;
        return `<a href="${encodeURI(n)}">${n.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</a>`;
      });
    return reply.header('content-type', 'text/html; charset=utf-8').send(`<pre>\n${items.join('\n')}\n</pre>\n`);
  }
  return reply.header('content-type', 'text/plain; charset=utf-8').send(createReadStream(path));
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization']);

/** Forwards a request to a pod's address (`/podProxy/<ns>/<pod>/<[scheme:]port>/<path>`). */
async function podProxy(v: AgentView, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const params = req.params as { namespace: string; pod: string; port: string; '*'?: string };
  const pod = v.pod(params.namespace, params.pod);
  if (!pod) throw new HttpError(404, `pod ${params.namespace}/${params.pod} not found`);
  const ip = v.runtime.podState(pod.metadata.uid ?? '')?.podIP ?? pod.status?.podIP;
  if (!ip) throw new HttpError(503, `pod ${params.namespace}/${params.pod} has no IP address yet`);
  const [scheme, portName] = params.port.includes(':') ? (params.port.split(':', 2) as [string, string]) : ['http', params.port];
  if (scheme !== 'http' && scheme !== 'https') throw new HttpError(400, `unsupported scheme ${JSON.stringify(scheme)}`);
  let port: number;
  try {
    port = resolvePort(portName, pod.spec.containers.flatMap((c) => c.ports ?? []));
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  const search = new URL(req.url, 'https://agent').search;
  const headers: Record<string, string | string[]> = {};
  for (const [k, val] of Object.entries(req.headers)) if (val !== undefined && !HOP_BY_HOP.has(k)) headers[k] = val;
  const transport = scheme === 'https' ? https : http;
  const body = req.body as Buffer | undefined;
  await new Promise<void>((resolve) => {
    const upstream = transport.request(
      { host: ip, port, method: req.method, path: `/${params['*'] ?? ''}${search}`, headers, rejectUnauthorized: false },
      (res) => {
        reply.hijack();
        const out: Record<string, string | string[]> = {};
        for (const [k, val] of Object.entries(res.headers)) if (val !== undefined && !HOP_BY_HOP.has(k)) out[k] = val;
        reply.raw.writeHead(res.statusCode ?? 502, out);
        res.pipe(reply.raw);
        res.on('end', () => resolve());
        res.on('error', () => resolve());
      },
    );
    upstream.on('error', (err) => {
      if (!reply.sent) void text(reply, 502, `error trying to reach pod ${params.namespace}/${params.pod} at ${ip}:${port}: ${err.message}`);
      resolve();
    });
    upstream.end(body && body.length ? body : undefined);
  });
}
