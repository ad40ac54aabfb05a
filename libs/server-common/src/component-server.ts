import http from 'node:http';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import Fastify, { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { HEALTH_ENDPOINTS, HealthChecks } from './health';
import type { Logger } from './logger';
import { renderMetrics } from './metrics';

export interface ComponentServerOptions {
  /** 0 picks a free port (see `ComponentServer.port`). */
  port: number;
  /** Default `0.0.0.0`, as upstream's `--bind-address`. */
  host?: string;
  healthChecks: HealthChecks;
  registry: Registry;
  /** PEM serving certificate and key; plain HTTP without it. */
  tls?: { cert: string; key: string };
  logger?: Logger;
}

export interface ComponentServer {
  /** The port actually bound. */
  port: number;
  /** Stops listening and closes idle connections. */
  close(): Promise<void>;
}

/**
 * Starts the small HTTP(S) server every component runs (scheduler :10259, controller-manager
 * :10257, network-proxy :10256): `/healthz`, `/livez`, `/readyz` with `verbose`, `exclude` and
 * per-check paths (see `HealthChecks`), and Prometheus `/metrics`. Other paths: 404 text.
 * Resolves once listening.
 */
export async function startComponentServer(opts: ComponentServerOptions): Promise<ComponentServer> {
  const tls = opts.tls;
  // One instance type for both schemes: the raw server comes from the factory.
  const app = Fastify({ serverFactory: (handler) => (tls ? https.createServer({ cert: tls.cert, key: tls.key }, handler) : http.createServer(handler)) });
  const health = async (req: FastifyRequest, reply: FastifyReply) => {
    const url = new URL(req.url, 'http://localhost');
    const r = await opts.healthChecks.handle(url.pathname, url.searchParams);
    return reply.code(r.status).header('content-type', r.contentType).header('x-content-type-options', 'nosniff').send(r.body);
  };
  for (const ep of HEALTH_ENDPOINTS) {
    app.get(`/${ep}`, health);
    app.get(`/${ep}/*`, health);
  }
  app.get('/metrics', async (_req, reply) => {
    const m = await renderMetrics(opts.registry);
    return reply.header('content-type', m.contentType).send(m.body);
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('404 page not found\n'));

  await app.listen({ port: opts.port, host: opts.host ?? '0.0.0.0' });
  const port = (app.server.address() as AddressInfo).port;
  opts.logger?.info('Serving health and metrics', { address: `${opts.tls ? 'https' : 'http'}://${opts.host ?? '0.0.0.0'}:${port}` });
  return { port, close: () => app.close() };
}
