import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { authorizationV1 } from '@orch/api';
import { parseLabelSelector } from '@orch/apimachinery';
import type { RestClient } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { RequestAuthenticator, User } from './authentication';
import type { NodeSample, PodSample, Scraper, Usage } from './scraper';

/** The groups served: the orch name and, for stock clients (`kubectl top` hard-codes it), metrics.k8s.io. */
export const METRICS_GROUPS = ['metrics.orch.io', 'metrics.k8s.io'];
export const METRICS_VERSION = 'v1beta1';

/** Authorization decisions are remembered this long (upstream delegated authorizer cache: 10 s). */
const DECISION_TTL_MS = 10_000;

/** CPU as upstream metrics-server reports it (nanocores, `123456789n`). */
export function cpuQuantity(cores: number): string {
  return `${Math.round(cores * 1e9)}n`;
}

/** Memory in KiB (`1234Ki`), as upstream reports it. */
export function memoryQuantity(bytes: number): string {
  return `${Math.round(bytes / 1024)}Ki`;
}

function usage(u: Usage): { cpu: string; memory: string } {
  return { cpu: cpuQuantity(u.cpuCores), memory: memoryQuantity(u.memoryBytes) };
}

function windowText(seconds: number): string {
  return `${seconds.toFixed(3)}s`;
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

interface Target {
  group: string;
  verb: 'get' | 'list';
  resource: 'nodes' | 'pods';
  namespace: string;
  name: string;
}

/** Parses `/apis/<group>/v1beta1/(nodes[/<name>] | pods | namespaces/<ns>/pods[/<name>])`. */
export function parsePath(path: string): Target | 'discovery' | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'apis' || !METRICS_GROUPS.includes(parts[1] ?? '') || parts[2] !== METRICS_VERSION) return undefined;
  const group = parts[1];
  const rest = parts.slice(3);
  if (rest.length === 0) return 'discovery';
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest.splice(0, 2);
  }
  const resource = rest[0];
  if ((resource !== 'nodes' && resource !== 'pods') || rest.length > 2 || (resource === 'nodes' && namespace)) return undefined;
  return { group, verb: rest[1] ? 'get' : 'list', resource, namespace, name: rest[1] ?? '' };
}

/**
 * The metrics API (`metrics.orch.io/v1beta1`, also as `metrics.k8s.io/v1beta1`): NodeMetrics and
 * PodMetrics (get and list, label selectors) from the scraper's latest figures. Every request
 * is authenticated (front proxy or client certificate) and authorized by a
 * SubjectAccessReview to the gateway (delegated authorization, cached briefly).
 */
export class MetricsApi {
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();

  constructor(
    private readonly deps: { authenticator: () => RequestAuthenticator; scraper: Scraper; client: RestClient; logger: Logger },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (code: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    try {
      const url = new URL(req.url ?? '/', 'https://localhost');
      const socket = req.socket as TLSSocket;
      const user = this.deps.authenticator().authenticate(socket.getPeerCertificate?.()?.raw, req.headers);
      if (!user) return send(401, status(401, 'Unauthorized', 'Unauthorized'));
      const target = parsePath(url.pathname);
      if (target === undefined) return send(404, status(404, 'NotFound', 'the server could not find the requested resource'));
      if (req.method !== 'GET') return send(405, status(405, 'MethodNotAllowed', `${req.method} is not supported`));
      if (target === 'discovery') return send(200, this.discovery(url.pathname.split('/')[2]));
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') return send(405, status(405, 'MethodNotAllowed', 'watch is not supported on metrics'));
      if (!(await this.allowed(user, target))) {
        const scope = target.namespace ? ` in the namespace "${target.namespace}"` : ' at the cluster scope';
        return send(403, status(403, 'Forbidden', `${target.resource}.${target.group} is forbidden: User "${user.username}" cannot ${target.verb} resource "${target.resource}" in API group "${target.group}"${scope}`));
      }
      const selector = parseLabelSelector(url.searchParams.get('labelSelector') ?? '');
      const apiVersion = `${target.group}/${METRICS_VERSION}`;
      if (target.resource === 'nodes') {
        const items = this.deps.scraper.nodeMetrics().filter((n) => (!target.name || n.name === target.name) && selector.matches(n.labels)).map((n) => nodeMetrics(n, apiVersion));
        if (target.verb === 'get') return items[0] ? send(200, items[0]) : send(404, status(404, 'NotFound', `nodemetrics.${target.group} "${target.name}" not found`));
        return send(200, { kind: 'NodeMetricsList', apiVersion, metadata: {}, items });
      }
      const items = this.deps.scraper
        .podMetrics()
        .filter((p) => (!target.namespace || p.namespace === target.namespace) && (!target.name || p.name === target.name) && selector.matches(p.labels))
        .map((p) => podMetrics(p, apiVersion));
      if (target.verb === 'get') return items[0] ? send(200, items[0]) : send(404, status(404, 'NotFound', `podmetrics.${target.group} "${target.name}" not found`));
      return send(200, { kind: 'PodMetricsList', apiVersion, metadata: {}, items });
    } catch (err) {
      this.deps.logger.error('request failed', { error: (err as Error).message });
      if (!res.headersSent) send(500, status(500, 'InternalError', (err as Error).message));
    }
  }

  private discovery(group: string): Record<string, unknown> {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${group}/${METRICS_VERSION}`,
      resources: [
        { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
        { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
      ],
    };
  }

  /** A SubjectAccessReview to the gateway for the request (cached per user and attributes). */
  private async allowed(user: User, t: Target): Promise<boolean> {
    const attributes = { group: t.group, version: METRICS_VERSION, resource: t.resource, verb: t.verb, namespace: t.namespace, name: t.name };
    const key = JSON.stringify([user.username, [...user.groups].sort(), attributes]);
    const cached = this.decisions.get(key);
    if (cached && cached.until > Date.now()) return cached.allowed;
    const body: authorizationV1.SubjectAccessReview = { apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: { user: user.username, groups: user.groups, extra: user.extra, resourceAttributes: attributes } };
    const review = await this.deps.client.request<authorizationV1.SubjectAccessReview>({ method: 'POST', path: '/apis/authorization.orch.io/v1/subjectaccessreviews', body });
    const allowed = review.status?.allowed === true;
    if (this.decisions.size > 10_000) this.decisions.clear();
    this.decisions.set(key, { allowed, until: Date.now() + DECISION_TTL_MS });
    return allowed;
  }
}

function nodeMetrics(n: NodeSample, apiVersion: string): Record<string, unknown> {
  return { kind: 'NodeMetrics', apiVersion, metadata: { name: n.name, labels: n.labels, creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }, timestamp: n.timestamp, window: windowText(n.windowSeconds), usage: usage(n.usage) };
}

function podMetrics(p: PodSample, apiVersion: string): Record<string, unknown> {
  return {
    kind: 'PodMetrics',
    apiVersion,
    metadata: { name: p.name, namespace: p.namespace, labels: p.labels, creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
    timestamp: p.timestamp,
    window: windowText(p.windowSeconds),
    containers: p.containers.map((c) => ({ name: c.name, usage: usage(c.usage) })),
  };
}
