import { Agent, request } from 'node:https';
import type { admissionregistrationV1 } from '@orch/api';
import { readResponseBody } from './response-body';
import type { ServiceResolver } from './service-resolver';

/**
 * Where a webhook is: the API's WebhookClientConfig (an https URL, or a Service with path and port;
 * the base64 PEM CA bundle that signs its serving certificate, system roots when absent), with the
 * gateway's own credentials towards it (authentication and authorization webhooks' kubeconfig files).
 */
export interface WebhookClientConfig extends admissionregistrationV1.WebhookClientConfig {
  clientCertPem?: string;
  clientKeyPem?: string;
  bearerToken?: string;
}

/** A webhook call that failed (unreachable, timed out, non-2xx, not JSON); the message says which. */
export class WebhookError extends Error {
  override name = 'WebhookError';
}

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** Keep-alive agents by CA bundle and server name: a webhook's TLS connections are reused across calls. */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 256;

function agentFor(ca: string | undefined, servername: string | undefined, cert?: string, key?: string): Agent {
  const id = `${servername ?? ''}\u0000${ca ?? ''}\u0000${cert ?? ''}`;
  let agent = agents.get(id);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 64, ca, servername, ...(cert && key ? { cert, key } : {}) });
    if (agents.size >= MAX_AGENTS) agents.delete(agents.keys().next().value!);
    agents.set(id, agent);
  }
  return agent;
}

/**
 * Calls webhooks over HTTPS: POSTs a JSON body and returns the parsed JSON answer. The
 * server's certificate is verified against the config's caBundle (for a Service, under its
 * `<name>.<namespace>.svc` name); every call has a timeout. Connections are kept alive and
 * reused per CA bundle and server name (admission webhooks are called on every request).
 */
export class WebhookClient {
  constructor(private readonly services: ServiceResolver) {}

  async post(config: WebhookClientConfig, body: unknown, timeoutMs: number): Promise<unknown> {
    let host: string;
    let port: number;
    let path: string;
    let servername: string | undefined;
    if (config.url) {
      const u = new URL(config.url);
      host = u.hostname.replace(/^\[|\]$/g, '');
      port = Number(u.port || 443);
      path = `${u.pathname}${u.search}`;
      servername = u.hostname;
    } else if (config.service) {
      const s = config.service;
      const resolved = await this.services.resolve(s.namespace, s.name, s.port ?? 443);
      host = resolved.host;
      port = resolved.port;
      path = s.path || '/';
      servername = resolved.serverName;
    } else {
      throw new WebhookError('the webhook has neither url nor service');
    }
    const ca = config.caBundle ? Buffer.from(config.caBundle, 'base64').toString('utf8') : undefined;
    const sni = servername && /^[\d.:]+$/.test(servername) ? undefined : servername;
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host,
          port,
          path,
          method: 'POST',
          agent: agentFor(ca, sni, config.clientCertPem, config.clientKeyPem),
          ca,
          servername: sni,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'content-length': payload.length,
            ...(config.bearerToken ? { authorization: `Bearer ${config.bearerToken}` } : {}),
          },
          timeout: timeoutMs,
        },
        (res) => {
          void readResponseBody(res, MAX_RESPONSE_BYTES).then(
            (body) => {
              const text = body.toString('utf8');
              if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) return reject(new WebhookError(`the server responded with HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
              try {
                resolve(JSON.parse(text));
              } catch {
                reject(new WebhookError('the response is not JSON'));
              }
            },
            (e: Error) => reject(new WebhookError(e.message)),
          );
        },
      );
      req.on('timeout', () => req.destroy(new WebhookError(`the call timed out after ${timeoutMs} ms`)));
      req.on('error', (e) => reject(e instanceof WebhookError ? e : new WebhookError(e.message)));
      req.end(payload);
    });
  }
}
