import https from 'node:https';
import type { KubeObject } from '@orch/apimachinery';

/** admissionregistration WebhookClientConfig. */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  /** Base64 PEM bundle verifying the webhook's serving certificate; absent: the system roots. */
  caBundle?: string;
}

/** Where a call goes: the address to connect to and the name the certificate must carry. */
export interface WebhookTarget {
  url: URL;
  /** TLS server name (SNI and certificate check): the URL host, or `<service>.<namespace>.svc`. */
  serverName: string;
}

/** A failure calling a webhook (unreachable, timeout, bad TLS, bad response): subject to failurePolicy. */
export class WebhookCallError extends Error {}

interface ServiceLike extends KubeObject {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}

interface EndpointsLike extends KubeObject {
  subsets?: { addresses?: { ip: string }[]; ports?: { name?: string; port: number }[] }[];
}

/**
 * The address of a webhook: its URL, or — for a Service — a ready endpoint of the service
 * port (default 443) it names, reached by IP with the service's DNS name for TLS.
 * `pick` chooses among several ready addresses (round robin by the caller).
 */
export function resolveTarget(config: WebhookClientConfig, lookup: { service(ns: string, name: string): ServiceLike | undefined; endpoints(ns: string, name: string): EndpointsLike | undefined }, pick = 0): WebhookTarget {
  if (config.url) {
    const url = new URL(config.url);
    return { url, serverName: url.hostname.replace(/^\[|\]$/g, '') };
  }
  const ref = config.service;
  if (!ref) throw new WebhookCallError('webhook clientConfig has neither url nor service');
  const svc = lookup.service(ref.namespace, ref.name);
  if (!svc) throw new WebhookCallError(`service "${ref.namespace}/${ref.name}" not found`);
  const wanted = ref.port ?? 443;
  const port = svc.spec?.ports?.find((p) => p.port === wanted);
  if (!port) throw new WebhookCallError(`service "${ref.namespace}/${ref.name}" has no port ${wanted}`);
  const eps = lookup.endpoints(ref.namespace, ref.name);
  const candidates: { ip: string; port: number }[] = [];
  for (const subset of eps?.subsets ?? []) {
    const target = subset.ports?.find((p) => (port.name ? p.name === port.name : true) && (typeof port.targetPort !== 'number' || p.port === port.targetPort)) ?? subset.ports?.[0];
    if (!target) continue;
    for (const addr of subset.addresses ?? []) candidates.push({ ip: addr.ip, port: target.port });
  }
  if (candidates.length === 0) throw new WebhookCallError(`service "${ref.namespace}/${ref.name}" has no ready endpoints`);
  const c = candidates[pick % candidates.length];
  const host = c.ip.includes(':') ? `[${c.ip}]` : c.ip;
  return { url: new URL(`https://${host}:${c.port}${ref.path ?? ''}`), serverName: `${ref.name}.${ref.namespace}.svc` };
}

/** Keep-alive agents by CA bundle and server name (a webhook's connections are reused across requests). */
const agents = new Map<string, https.Agent>();

function agentFor(caBundle: string | undefined, serverName: string): https.Agent {
  const key = `${serverName}\u0000${caBundle ?? ''}`;
  let agent = agents.get(key);
  if (!agent) {
    const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
    agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca, servername: serverName });
    if (agents.size > 256) agents.delete(agents.keys().next().value!);
    agents.set(key, agent);
  }
  return agent;
}

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/**
 * POSTs `body` (JSON) to the webhook and returns its parsed JSON answer. Throws
 * {@link WebhookCallError} on any failure, including a timeout after `timeoutSeconds` (the
 * timeout is also passed as `?timeout=<n>s`, as upstream does).
 */
export function callWebhook(target: WebhookTarget, caBundle: string | undefined, body: unknown, timeoutSeconds: number): Promise<unknown> {
  const url = new URL(target.url);
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        agent: agentFor(caBundle, target.serverName),
        servername: target.serverName,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': payload.length },
        timeout: timeoutSeconds * 1000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new WebhookCallError('response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return reject(new WebhookCallError(`the server responded with the status code ${res.statusCode}: ${text.slice(0, 256)}`));
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new WebhookCallError('the response is not JSON'));
          }
        });
        res.on('error', (e) => reject(new WebhookCallError(e.message)));
      },
    );
    const timer = setTimeout(() => req.destroy(new WebhookCallError('context deadline exceeded')), timeoutSeconds * 1000);
    req.on('timeout', () => req.destroy(new WebhookCallError('context deadline exceeded')));
    req.on('error', (e) => reject(e instanceof WebhookCallError ? e : new WebhookCallError(e.message)));
    req.on('close', () => clearTimeout(timer));
    req.end(payload);
  });
}
