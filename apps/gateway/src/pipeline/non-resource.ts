import { negotiate } from '@orch/apimachinery';
import { StatusError } from '@orch/apimachinery';
import type { HealthChecks } from '@orch/server-common';
import { renderMetrics } from '@orch/server-common';
import type { Registry as PromRegistry } from 'prom-client';
import { VERSION_INFO, type Discovery } from '../discovery/discovery';
import { OpenApiV3 } from '../openapi/service';
import type { ApiRequest } from './api-request';
import { queryBool } from './query';

export function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/[^/]+)?\/?$/.test(path);
}

/**
 * Paths outside /api/v1/... and /apis/<group>/<version>/<resource>: health, metrics, version,
 * discovery (legacy and aggregated), OpenAPI v3. /openapi/v2 is not served: kubectl falls
 * back to v3 on its 404.
 */
export class NonResourceEndpoints {
  private readonly openapi: OpenApiV3;

  constructor(
    private readonly deps: {
      discovery: Discovery;
      health: HealthChecks;
      metricsRegistry: PromRegistry;
      openapi: OpenApiV3;
      k8sAliases: boolean;
    },
  ) {
    this.openapi = deps.openapi;
  }

  /** Answers the request; returns the HTTP status. */
  async serve(r: ApiRequest): Promise<number> {
    const { req, reply, info, query } = r;
    const path = info.path.length > 1 && info.path.endsWith('/') ? info.path.slice(0, -1) : info.path;
    if (isHealthPath(path)) {
      const res = await this.deps.health.handle(path, query);
      reply.code(res.status).header('content-type', res.contentType).header('x-content-type-options', 'nosniff').send(res.body);
      return res.status;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw StatusError.methodNotSupported({ group: '', resource: path }, req.method.toLowerCase());
    }
    if (path === '/metrics') {
      const m = await renderMetrics(this.deps.metricsRegistry);
      reply.code(200).header('content-type', m.contentType).send(m.body);
      return 200;
    }
    const plain = (body: unknown, contentType = 'application/json') => {
      const text = queryBool(query, 'pretty') ? JSON.stringify(body, null, 2) : JSON.stringify(body);
      reply.code(200).header('content-type', contentType).send(Buffer.from(text));
      return 200;
    };
    const d = this.deps.discovery;
    if (path === '/version') return plain(VERSION_INFO);
    if (path === '/api' || path === '/apis') {
      const repr = negotiate(req.headers.accept, { encodings: ['json'], discovery: true });
      if (repr.kind === 'discovery') return plain(d.aggregated(path === '/api', repr.version as 'v2' | 'v2beta1'), repr.contentType);
      return plain(path === '/api' ? d.apiVersions() : d.apiGroupList());
    }
    if (info.apiPrefix === 'api' && info.apiVersion) {
      const list = d.apiResourceList('', info.apiVersion);
      if (list) return plain(list);
    }
    if (info.apiPrefix === 'apis') {
      const parts = path.split('/').filter(Boolean);
      if (parts.length === 2) {
        const g = d.apiGroup(this.aliasGroup(parts[1]));
        if (g) return plain(g);
      } else if (parts.length === 3) {
        const list = d.apiResourceList(this.aliasGroup(parts[1]), parts[2]);
        if (list) return plain(list);
      }
    }
    const openapi = this.openapi.serve(path, query, { accept: req.headers.accept, ifNoneMatch: req.headers['if-none-match'] });
    if (openapi) {
      reply.code(openapi.status).headers(openapi.headers).send(openapi.body);
      return openapi.status;
    }
    throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  }

  private aliasGroup(group: string): string {
    return this.deps.k8sAliases || !group.endsWith('.k8s.io') ? group : `\u0000${group}`;
  }
}
