import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable, Writable } from 'node:stream';
import { StatusError, type StatusReason } from '@orch/apimachinery';
import type { coreV1, Endpoints, Node, Served, Service } from '@orch/api';
import { issueClientCert, type CertAndKey, type Pki } from '@orch/auth';
import type { GenericStore } from '../registry/generic-store';
import type { SubresourceRequest } from './subresources';
import { queryBool } from '../pipeline/query';

/** Identity the gateway presents to node agents (upstream's apiserver-kubelet-client). */
export const NODE_CLIENT_USER = 'system:orch-apiserver-node-client';
const DEFAULT_AGENT_PORT = 10250;

type Pod = Served<coreV1.Pod>;

/** An upgrade request for a streaming subresource (pods/exec, pods/attach, pods/portforward). */
export interface StreamRequest {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  info: SubresourceRequest['info'];
  query: URLSearchParams;
  registries: SubresourceRequest['registries'];
}

/** Headers of an upgrade the node agent needs to complete it (WebSocket handshake, SPDY protocol versions). */
const UPGRADE_HEADERS = ['connection', 'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions', 'x-stream-protocol-version'];

/** Writes a Status as the HTTP answer to an upgrade request that will not be upgraded, then closes the socket. */
export function rejectStream(socket: Duplex, err: StatusError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(err.toStatus());
  socket.end(`HTTP/1.1 ${err.code} ${err.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), 1000).unref();
}

const FLAG_VALUES = new Set(['', '1', 'true', 'True']);

/** Headers never forwarded (hop-by-hop, and the caller's own credentials). */
const DROP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'content-length']);

function registry(r: Pick<SubresourceRequest, 'registries'>, resource: string): GenericStore {
  for (const [def, reg] of r.registries) if (def.group === '' && def.resource === resource) return reg as GenericStore;
  throw StatusError.internal(`resource ${resource} is not served`);
}

/** upstream net.SplitSchemeNamePort: `name`, `name:port`, `scheme:name:port`. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } {
  const parts = id.split(':');
  if (parts.length === 1) return { scheme: '', name: parts[0], port: '' };
  if (parts.length === 2) return { scheme: '', name: parts[0], port: parts[1] };
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https')) return { scheme: parts[0], name: parts[1], port: parts[2] };
  throw StatusError.badRequest(`invalid resource name ${JSON.stringify(id)}: want [scheme:]name[:port]`);
}

/** The path after `/proxy` in the raw request URL (kept as the client encoded it), and the query. */
function proxyPath(url: string): { path: string; search: string } {
  const q = url.indexOf('?');
  const raw = q < 0 ? url : url.slice(0, q);
  const m = /\/proxy(\/.*)?$/.exec(raw);
  return { path: m?.[1] ?? '/', search: q < 0 ? '' : url.slice(q) };
}

function intQuery(query: URLSearchParams, name: string, min: number): string | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min) throw StatusError.badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be ${min === 0 ? 'greater than or equal to 0' : 'greater than 0'}`);
  return v;
}

/**
 * The gateway's side of node agent streaming (upstream pod log REST, node/pod/service proxy):
 * requests go to the agent's HTTPS port (`status.addresses` InternalIP,
 * `status.daemonEndpoints.kubeletEndpoint.Port`) authenticated with the gateway's own client
 * certificate (`system:orch-apiserver-node-client`, group system:masters, issued by the
 * cluster CA at first use), and the agent's answer is streamed back. The agents' serving
 * certificates are not verified unless a CA is given (upstream's default without
 * --kubelet-certificate-authority).
 */
export class NodeProxy {
  private agent?: Promise<https.Agent>;

  constructor(private readonly deps: { pki: Pki; agentCaPem?: string }) {}

  private httpsAgent(): Promise<https.Agent> {
    this.agent ??= issueClientCert(this.deps.pki, { cn: NODE_CLIENT_USER, orgs: ['system:masters'] }).then(
      (c: CertAndKey) => new https.Agent({ keepAlive: true, cert: c.certPem, key: c.keyPem, ca: this.deps.agentCaPem, rejectUnauthorized: !!this.deps.agentCaPem }),
    );
    return this.agent;
  }

  /** The agent endpoint of a node: InternalIP (else another address) and the agent port. */
  private async nodeEndpoint(r: Pick<SubresourceRequest, 'registries'>, nodeName: string): Promise<{ host: string; port: number }> {
    const node = (await registry(r, 'nodes').get('', nodeName)) as Node;
    const addrs = node.status?.addresses ?? [];
    const addr = addrs.find((a) => a.type === 'InternalIP') ?? addrs.find((a) => a.type === 'ExternalIP') ?? addrs.find((a) => a.type === 'Hostname');
    if (!addr) throw StatusError.serviceUnavailable(`node ${nodeName} reports no address`);
    return { host: addr.address, port: node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_AGENT_PORT };
  }

  /**
   * GET pods/log: checks the options and the container, then streams
   * `/containerLogs/<ns>/<pod>/<container>` from the pod's node as text/plain.
   */
  async podLog(r: SubresourceRequest): Promise<number> {
    const { info, query } = r;
    const pod = (await registry(r, 'pods').get(info.namespace, info.name)) as Pod;
    const containers = (pod.spec?.containers ?? []).map((c) => c.name);
    const inits = (pod.spec?.initContainers ?? []).map((c) => c.name);
    const ephemeral = (pod.spec?.ephemeralContainers ?? []).map((c) => c.name);
    let container = query.get('container') ?? '';
    if (!container) {
      if (containers.length !== 1) {
        throw StatusError.badRequest(`a container name must be specified for pod ${info.name}, choose one of: [${containers.join(' ')}]${inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''}`);
      }
      container = containers[0];
    } else if (!containers.includes(container) && !inits.includes(container) && !ephemeral.includes(container)) {
      throw StatusError.badRequest(`container ${container} is not valid for pod ${info.name}`);
    }
    const out = new URLSearchParams();
    for (const flag of ['follow', 'previous', 'timestamps']) {
      if (queryBool(query, flag)) out.set(flag, 'true');
    }
    const tail = intQuery(query, 'tailLines', 0);
    const since = intQuery(query, 'sinceSeconds', 1);
    const limit = intQuery(query, 'limitBytes', 1);
    const sinceTime = query.get('sinceTime');
    if (since && sinceTime) throw StatusError.badRequest('at most one of `sinceTime` or `sinceSeconds` may be specified');
    if (tail !== undefined) out.set('tailLines', tail);
    if (since) out.set('sinceSeconds', since);
    if (sinceTime) out.set('sinceTime', sinceTime);
    if (limit) out.set('limitBytes', limit);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) throw StatusError.badRequest(`pod ${info.name} does not have a host assigned`);
    const ep = await this.nodeEndpoint(r, nodeName);
    const path = `/containerLogs/${encodeURIComponent(info.namespace)}/${encodeURIComponent(info.name)}/${encodeURIComponent(container)}${out.size ? `?${out}` : ''}`;
    return this.forward(r, ep, 'GET', path, { accept: 'text/plain' }, undefined, 'text/plain');
  }

  /** nodes/proxy: `/api/v1/nodes/<[scheme:]name[:port]>/proxy/<path>` → the agent (or the node's port). */
  async nodeProxy(r: SubresourceRequest): Promise<number> {
    const id = splitSchemeNamePort(r.info.name);
    const ep = await this.nodeEndpoint(r, id.name);
    const port = id.port ? Number(id.port) : ep.port;
    if (!Number.isInteger(port) || port <= 0) throw StatusError.badRequest(`invalid port ${JSON.stringify(id.port)}`);
    const { path, search } = proxyPath(r.req.url);
    return this.forward(r, { host: ep.host, port }, r.req.method, `${path}${search}`, forwardedHeaders(r), body(r));
  }

  /** pods/proxy: through the pod's node agent (`/podProxy/...`) to the pod's address and port. */
  async podProxy(r: SubresourceRequest): Promise<number> {
    const id = splitSchemeNamePort(r.info.name);
    const pod = (await registry(r, 'pods').get(r.info.namespace, id.name)) as Pod;
    const port = id.port || String(pod.spec?.containers?.flatMap((c) => c.ports ?? [])[0]?.containerPort ?? 80);
    return this.viaAgent(r, pod, id.scheme, port);
  }

  /** services/proxy: to a ready endpoint of the service port, through that pod's node agent. */
  async serviceProxy(r: SubresourceRequest): Promise<number> {
    const id = splitSchemeNamePort(r.info.name);
    const svc = (await registry(r, 'services').get(r.info.namespace, id.name)) as Service;
    const ports = svc.spec?.ports ?? [];
    const sp = id.port ? ports.find((p) => p.name === id.port || String(p.port) === id.port) : ports[0];
    if (!sp) throw StatusError.serviceUnavailable(`no service port ${JSON.stringify(id.port)} found for service "${id.name}"`);
    let eps: Endpoints;
    try {
      eps = (await registry(r, 'endpoints').get(r.info.namespace, id.name)) as Endpoints;
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) throw StatusError.serviceUnavailable(`no endpoints available for service "${id.name}"`);
      throw err;
    }
    const candidates = (eps.subsets ?? []).flatMap((s) => {
      const port = (s.ports ?? []).find((p) => (p.name ?? '') === (sp.name ?? '')) ?? (s.ports?.length === 1 ? s.ports[0] : undefined);
      return port ? (s.addresses ?? []).filter((a) => a.targetRef?.kind === 'Pod' && a.targetRef.name).map((a) => ({ pod: a.targetRef!.name!, port: port.port })) : [];
    });
    if (candidates.length === 0) throw StatusError.serviceUnavailable(`no endpoints available for service "${id.name}"`);
    const pick = candidates[Math.floor(Math.random() * candidates.length)];
    const pod = (await registry(r, 'pods').get(r.info.namespace, pick.pod)) as Pod;
    return this.viaAgent(r, pod, id.scheme, String(pick.port));
  }

  /**
   * pods/exec, pods/attach, pods/portforward (upstream's upgrade-aware proxy): checks the pod
   * and the options, then sends the upgrade to the node agent's `/exec`, `/attach` or
   * `/portForward` (the API's stdin/stdout/stderr become the node API's input/output/error)
   * and, once the agent switched protocols, splices the client's connection to the agent's.
   * The protocols themselves (WebSocket channels, SPDY) are the agent's business. Either
   * side closing closes both.
   */
  async podStream(r: StreamRequest): Promise<void> {
    const { info, query } = r;
    const pod = (await registry(r, 'pods').get(info.namespace, info.name)) as Pod;
    const phase = pod.status?.phase;
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) throw StatusError.badRequest(`pod ${info.name} does not have a host assigned`);
    let path: string;
    const out = new URLSearchParams();
    if (info.subresource === 'portforward') {
      if (phase !== 'Running') throw StatusError.badRequest(`unable to forward port because pod is not running. Current status=${phase ?? 'Unknown'}`);
      for (const p of query.getAll('ports')) out.append('ports', p);
      path = `/portForward/${encodeURIComponent(info.namespace)}/${encodeURIComponent(info.name)}/${encodeURIComponent(pod.metadata.uid ?? '')}`;
    } else {
      if (phase === 'Succeeded' || phase === 'Failed') throw StatusError.badRequest(`cannot ${info.subresource} into a container in a completed pod; current phase is ${phase}`);
      const container = streamContainer(pod, query.get('container') ?? '', info.name);
      const flags: [string, string][] = [['stdin', 'input'], ['stdout', 'output'], ['stderr', 'error'], ['tty', 'tty']];
      for (const [api, node] of flags) if (query.has(api) && FLAG_VALUES.has(query.get(api)!)) out.set(node, '1');
      if (!out.has('input') && !out.has('output') && !out.has('error')) throw StatusError.badRequest('you must specify at least 1 of stdin, stdout, stderr');
      if (info.subresource === 'exec') {
        const command = query.getAll('command');
        if (command.length === 0) throw StatusError.badRequest('you must specify at least one command for the container');
        for (const c of command) out.append('command', c);
      }
      path = `/${info.subresource}/${encodeURIComponent(info.namespace)}/${encodeURIComponent(info.name)}/${encodeURIComponent(pod.metadata.uid ?? '')}/${encodeURIComponent(container)}`;
    }
    const ep = await this.nodeEndpoint(r, nodeName);
    const agent = await this.httpsAgent();
    const headers: Record<string, string | string[]> = {};
    for (const h of UPGRADE_HEADERS) {
      const v = r.req.headers[h];
      if (v !== undefined) headers[h] = v;
    }
    const upstream = https.request({
      host: ep.host,
      port: ep.port,
      method: r.req.method,
      path: `${path}${out.size ? `?${out}` : ''}`,
      headers,
      cert: agent.options.cert,
      key: agent.options.key,
      ca: agent.options.ca,
      rejectUnauthorized: agent.options.rejectUnauthorized,
      agent: false,
    });
    r.socket.once('close', () => upstream.destroy());
    await new Promise<void>((resolve) => {
      upstream.once('upgrade', (res, agentSocket, agentHead) => {
        const lines = [`HTTP/1.1 ${res.statusCode} ${res.statusMessage ?? 'Switching Protocols'}`];
        for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        r.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (agentHead.length) r.socket.write(agentHead);
        if (r.head.length) agentSocket.write(r.head);
        const s = r.socket as Duplex & { setNoDelay?: (b: boolean) => void };
        s.setNoDelay?.(true);
        agentSocket.setNoDelay(true);
        relay(agentSocket, r.socket);
        relay(r.socket, agentSocket);
        const done = () => {
          agentSocket.destroy();
          r.socket.destroy();
          resolve();
        };
        agentSocket.once('close', done);
        r.socket.once('close', done);
        agentSocket.on('error', done);
        r.socket.on('error', done);
      });
      upstream.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const code = res.statusCode ?? 502;
          const message = Buffer.concat(chunks).toString('utf8').trim() || `the node agent answered ${code}`;
          rejectStream(r.socket, new StatusError(code, reasonFor(code), message));
          resolve();
        });
      });
      upstream.once('error', (err) => {
        rejectStream(r.socket, StatusError.internal(`error dialing the node agent at ${ep.host}:${ep.port}: ${err.message}`));
        resolve();
      });
      upstream.end();
    });
  }

  private async viaAgent(r: SubresourceRequest, pod: Pod, scheme: string, port: string): Promise<number> {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) throw StatusError.serviceUnavailable(`pod ${pod.metadata.name} does not have a host assigned`);
    const ep = await this.nodeEndpoint(r, nodeName);
    const { path, search } = proxyPath(r.req.url);
    const target = `/podProxy/${encodeURIComponent(pod.metadata.namespace ?? '')}/${encodeURIComponent(pod.metadata.name ?? '')}/${scheme ? `${scheme}:` : ''}${encodeURIComponent(port)}${path}${search}`;
    return this.forward(r, ep, r.req.method, target, forwardedHeaders(r), body(r));
  }

  /**
   * Sends one request to a node agent and streams its answer back. A non-2xx answer of the
   * log endpoint becomes a Status with the agent's message (as upstream does); proxied
   * answers pass through as they are.
   */
  private async forward(r: SubresourceRequest, ep: { host: string; port: number }, method: string, path: string, headers: Record<string, string | string[]>, payload: Buffer | undefined, contentType?: string): Promise<number> {
    const agent = await this.httpsAgent();
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = https.request({ host: ep.host, port: ep.port, method, path, headers, agent }, resolve);
      req.on('error', (err) => reject(StatusError.internal(`error trying to reach the node agent at ${ep.host}:${ep.port}: ${err.message}`)));
      r.req.raw.on('close', () => req.destroy());
      req.end(payload);
    });
    const code = res.statusCode ?? 502;
    if (contentType && (code < 200 || code > 299)) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const message = Buffer.concat(chunks).toString('utf8').trim() || `the node agent answered ${code}`;
      throw new StatusError(code, reasonFor(code), message);
    }
    const reply = r.reply;
    if (!reply) throw StatusError.internal('streaming is not available for this request');
    reply.hijack();
    const headersOut: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !DROP_HEADERS.has(k)) headersOut[k] = v;
    if (contentType) headersOut['content-type'] = contentType;
    reply.raw.writeHead(code, headersOut);
    await new Promise<void>((resolve) => {
      res.pipe(reply.raw);
      res.on('end', () => resolve());
      res.on('error', () => {
        reply.raw.destroy();
        resolve();
      });
      reply.raw.on('close', () => {
        res.destroy();
        resolve();
      });
    });
    return code;
  }
}

/** Bytes a relay lets pile up unsent before it stops reading its source. */
const RELAY_BUFFER_BYTES = 1024 * 1024;

/**
 * Copies `from` to `to` (ending `to` when `from` ends), coalescing writes: what arrives within
 * one turn of the event loop (a TLS socket hands over 16 KiB records one by one) goes out in
 * one write — one TLS encryption call and one system call instead of one per record. Reading
 * stops while more than {@link RELAY_BUFFER_BYTES} wait to be sent.
 */
export function relay(from: Readable, to: Writable): void {
  let corked = false;
  const uncork = () => {
    corked = false;
    to.uncork();
  };
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed) return;
    if (!corked) {
      corked = true;
      to.cork();
      setImmediate(uncork);
    }
    to.write(chunk);
    if (to.writableLength > RELAY_BUFFER_BYTES && !from.isPaused()) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
  from.once('end', () => {
    if (corked) uncork();
    to.end();
  });
}

/** The container a stream is for: the one asked for, else the pod's only container. */
function streamContainer(pod: Pod, asked: string, podName: string): string {
  const containers = (pod.spec?.containers ?? []).map((c) => c.name);
  const others = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name);
  if (!asked) {
    if (containers.length !== 1) throw StatusError.badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`);
    return containers[0];
  }
  if (!containers.includes(asked) && !others.includes(asked)) throw StatusError.badRequest(`container ${asked} is not valid for pod ${podName}`);
  return asked;
}

function reasonFor(code: number): StatusReason {
  const m: Record<number, StatusReason> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 503: 'ServiceUnavailable' };
  return m[code] ?? 'InternalError';
}

function forwardedHeaders(r: SubresourceRequest): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // HTTP/2 pseudo-headers (`:authority`, `:path`, ...) are not headers of the agent's HTTP/1.1 request.
  for (const [k, v] of Object.entries(r.req.headers)) if (v !== undefined && !DROP_HEADERS.has(k) && !k.startsWith('impersonate-') && !k.startsWith(':')) out[k] = v;
  const b = body(r);
  if (b) out['content-length'] = String(b.length);
  return out;
}

function body(r: SubresourceRequest): Buffer | undefined {
  const b = r.req.body;
  return Buffer.isBuffer(b) && b.length > 0 ? b : undefined;
}

