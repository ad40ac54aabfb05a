import { isNotFound, type RestClient } from '@orch/client';
import type { Logger } from '@orch/server-common';
import { CONFIGMAPS, SECRETS, type ConfigMap, type Pod, type Secret } from '../api/types';
import type { ObjectSource } from './process/env';

/** Config maps and secrets read through the gateway (404 → undefined). */
export function apiObjectSource(client: RestClient): ObjectSource {
  const get = async <T>(def: typeof CONFIGMAPS | typeof SECRETS, ns: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.resource(def, ns).get(name)) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return { configMap: (ns, name) => get<ConfigMap>(CONFIGMAPS, ns, name), secret: (ns, name) => get<Secret>(SECRETS, ns, name) };
}

/**
 * Service-account tokens for pods through the TokenRequest API (`serviceaccounts/<sa>/token`),
 * bound to the pod, cached until 80% of their lifetime. When the gateway does not serve
 * TokenRequest (404/405: an older gateway, or one being upgraded), pods get no token file for
 * now and the agent asks again after a backoff (10 s doubling to 5 min), logging once per outage.
 */
export function tokenSource(
  client: Pick<RestClient, 'request'>,
  logger: Pick<Logger, 'warn' | 'info'>,
  now: () => number = Date.now,
): (pod: Pod, audience: string | undefined, expirationSeconds: number) => Promise<string | undefined> {
  const cache = new Map<string, { token: string; refreshAt: number }>();
  const unserved = { until: 0, backoffMs: 0 };
  return async (pod, audience, expirationSeconds) => {
    const key = `${pod.metadata.uid}/${audience ?? ''}/${expirationSeconds}`;
    const hit = cache.get(key);
    if (hit && hit.refreshAt > now()) return hit.token;
    if (unserved.until > now()) return undefined;
    const ns = pod.metadata.namespace ?? 'default';
    const sa = pod.spec.serviceAccountName || 'default';
    try {
      const tr = await client.request<{ status?: { token?: string; expirationTimestamp?: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`,
        body: {
          apiVersion: 'authentication.orch.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: audience ? [audience] : [], expirationSeconds, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid } },
        },
      });
      if (unserved.backoffMs) logger.info('the gateway serves serviceaccounts/token (TokenRequest) again');
      unserved.backoffMs = 0;
      unserved.until = 0;
      const token = tr.status?.token;
      if (!token) return undefined;
      cache.set(key, { token, refreshAt: now() + expirationSeconds * 800 });
      return token;
    } catch (err) {
      const code = (err as { code?: number }).code;
      // A 404 naming the account is about this pod (its service account is gone), not about the API.
      const aboutAccount = (err as { status?: { details?: { kind?: string } } }).status?.details?.kind === 'serviceaccounts';
      if ((code === 404 && !aboutAccount) || code === 405) {
        if (!unserved.backoffMs) logger.warn('the gateway does not serve serviceaccounts/token (TokenRequest): pods get ca.crt and namespace but no token file until it does');
        unserved.backoffMs = Math.min(TOKEN_API_MAX_BACKOFF_MS, unserved.backoffMs ? unserved.backoffMs * 2 : TOKEN_API_FIRST_BACKOFF_MS);
        unserved.until = now() + unserved.backoffMs;
      } else {
        logger.warn('cannot get a service-account token for a pod; its token file is left out for now', { pod: `${ns}/${pod.metadata.name}`, err: (err as Error).message });
      }
      return undefined;
    }
  };
}

const TOKEN_API_FIRST_BACKOFF_MS = 10_000;
const TOKEN_API_MAX_BACKOFF_MS = 5 * 60_000;
