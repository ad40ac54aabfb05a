import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { StatusError, type KubeObject, type StatusReason } from '@orch/apimachinery';
import { issueClientCert, type CertAndKey, type Pki } from '@orch/auth';
import type { GenericStore } from '../registry/generic-store';
import type { SubresourceRequest } from './subresources';
import { queryBool } from '../pipeline/query';

/** Identity the gateway presents to node agents (upstream's apiserver-kubelet-client). */
export const NODE_CLIENT_USER = 'system:orch-apiserver-node-client';
const DEFAULT_AGENT_PORT = 10250;

interface NodeLike extends KubeObject {
  status?: { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
}
interface PodLike extends KubeObject {
  spec?: { nodeName?: string; containers?: { name: string; ports?: { name?: string; containerPort: number }[] }[]; initContainers?: { name: string }[] };
}
interface ServiceLike extends KubeObject {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}
interface EndpointsLike extends KubeObject {
  subsets?: { addresses?: { ip: string; nodeName?: string; targetRef?: { kind?: string; name?: string; namespace?: string } }[]; ports?: { name?: string; port: number }[] }[];
}

/** Headers never forwarded (hop-by-hop, and the caller's own credentials). */
const DROP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'content-length']);

function registry(r: SubresourceRequest, resource: string): GenericStore {
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
  private async nodeEndpoint(r: SubresourceRequest, nodeName: string): Promise<{ host: string; port: number }> {
    const node = (await registry(r, 'nodes').get('', nodeName)) as NodeLike;
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
    const pod = (await registry(r, 'pods').get(info.namespace, info.name)) as PodLike;
    const containers = (pod.spec?.containers ?? []).map((c) => c.name);
    const inits = (pod.spec?.initContainers ?? []).map((c) => c.name);
    let container = query.get('container') ?? '';
    if (!container) {
      if (containers.length !== 1) {
        throw StatusError.badRequest(`a container name must be specified for pod ${info.name}, choose one of: [${containers.join(' ')}]${inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''}`);
      }
      container = containers[0];
    } else if (!containers.includes(container) && !inits.includes(container)) {
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
    const pod = (await registry(r, 'pods').get(r.info.namespace, id.name)) as PodLike;
    const port = id.port || String(pod.spec?.containers?.flatMap((c) => c.ports ?? [])[0]?.containerPort ?? 80);
    return this.viaAgent(r, pod, id.scheme, port);
  }

  /** services/proxy: to a ready endpoint of the service port, through that pod's node agent. */
  async serviceProxy(r: SubresourceRequest): Promise<number> {
    const id = splitSchemeNamePort(r.info.name);
    const svc = (await registry(r, 'services').get(r.info.namespace, id.name)) as ServiceLike;
    const ports = svc.spec?.ports ?? [];
    const sp = id.port ? ports.find((p) => p.name === id.port || String(p.port) === id.port) : ports[0];
    if (!sp) throw StatusError.serviceUnavailable(`no service port ${JSON.stringify(id.port)} found for service "${id.name}"`);
    let eps: EndpointsLike;
    try {
      eps = (await registry(r, 'endpoints').get(r.info.namespace, id.name)) as EndpointsLike;
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
    const pod = (await registry(r, 'pods').get(r.info.namespace, pick.pod)) as PodLike;
    return this.viaAgent(r, pod, id.scheme, String(pick.port));
  }

  private async viaAgent(r: SubresourceRequest, pod: PodLike, scheme: string, port: string): Promise<number> {
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

function reasonFor(code: number): StatusReason {
  const m: Record<number, StatusReason> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 503: 'ServiceUnavailable' };
  return m[code] ?? 'InternalError';
}

function forwardedHeaders(r: SubresourceRequest): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(r.req.headers)) if (v !== undefined && !DROP_HEADERS.has(k) && !k.startsWith('impersonate-')) out[k] = v;
  const b = body(r);
  if (b) out['content-length'] = String(b.length);
  return out;
}

function body(r: SubresourceRequest): Buffer | undefined {
  const b = r.req.body;
  return Buffer.isBuffer(b) && b.length > 0 ? b : undefined;
}

