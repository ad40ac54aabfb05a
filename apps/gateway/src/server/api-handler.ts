import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpRequestMetrics } from '@orch/server-common';
import type { RequestInfo } from '../request/request-info';
import { attributesOf, authorizeOrThrow } from '../pipeline/authorize';
import { toStatusError } from '../pipeline/encode';
import { buildPipeline, newApiRequest, runPipeline, type PipelineDeps, type Stage } from '../pipeline/pipeline';
import { requestTarget, requestUser, type ApiRequest } from '../pipeline/api-request';
import { StatusError } from '@orch/apimachinery';
import { isLongRunning } from '../flowcontrol/stage';
import { FixedDelayDeadlines } from './deadlines';
import { rejectStream } from './node-proxy';

import { errorInRequestedGroup } from '../pipeline/encode';

export { toStatusError } from '../pipeline/encode';

export interface ApiHandlerDeps extends PipelineDeps {
  requestMetrics: HttpRequestMetrics;
  /** --request-timeout: requests other than watches and streams answer 504 after this long. */
  requestTimeoutMs: number;
}

/**
 * Fastify's handler for every path: runs the request pipeline (pipeline/pipeline.ts shows the
 * stages in order), answers errors as Status, and records request metrics.
 */
export class ApiHandler {
  private readonly stages: readonly Stage[];
  private readonly admit: Stage;
  private readonly timeouts: FixedDelayDeadlines<ApiRequest>;

  constructor(private readonly deps: ApiHandlerDeps) {
    this.stages = buildPipeline(deps);
    this.timeouts = new FixedDelayDeadlines(deps.requestTimeoutMs, (r) => void this.timeOut(r));
    this.admit = this.stages.find((s) => s.name === 'admit')!;
  }

  /** Ends every open watch stream cleanly (graceful shutdown). */
  closeAllWatches(): void {
    this.deps.watches.closeAll();
  }

  /** Never throws: errors become Status responses. */
  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const started = process.hrtime.bigint();
    const r = newApiRequest(req, reply);
    const deadline = this.timeouts.add(r);
    try {
      await runPipeline(this.stages, r);
    } catch (err) {
      // An error that is not a Status is a bug (500): its stack goes to the log (Fastify's own logger is off).
      if (!(err instanceof StatusError)) this.deps.logger.error('request failed', { verb: r.info?.verb, path: r.path, err: (err as Error)?.stack ?? String(err) });
      // Errors of requests to a *.k8s.io alias name the group asked for.
      const served = r.target?.def.group ?? '';
      r.status = await this.deps.encoder.sendError(req, reply, errorInRequestedGroup(err, served, r.info.apiGroup));
    } finally {
      this.timeouts.cancel(deadline);
      this.observe(r.info, r.status, started);
    }
  }

  /**
   * --request-timeout passed: a request that is neither a watch nor a stream and has not
   * answered yet gets 504 Timeout now (upstream WithTimeoutForNonLongRunningRequests). Its work
   * is not interrupted and may still take effect; its own answer is dropped.
   */
  private async timeOut(r: ApiRequest): Promise<void> {
    if (r.done || r.reply.sent || r.reply.raw.headersSent || isLongRunning(r.info)) return;
    const seconds = this.deps.requestTimeoutMs / 1000;
    const err = new StatusError(504, 'Timeout', `Timeout: request did not complete within the allowed duration (--request-timeout=${seconds}s); it may still take effect`);
    r.status = await this.deps.encoder.sendError(r.req, r.reply, err);
  }

  /**
   * Upgrade requests (pods/exec, pods/attach, pods/portforward over WebSocket or SPDY) arrive
   * outside Fastify's routes: they pass the same stages up to resolve (request-info,
   * authenticate, impersonate, authorize, resolve), then the admit stage (CONNECT, as for
   * proxy requests), then the subresource streams to the node agent. A WebSocket upgrade is
   * a GET, so `create` on the subresource is authorized as well (upstream's
   * AuthorizePodWebsocketUpgradeCreatePermission).
   */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const started = process.hrtime.bigint();
    // The stages read method, url, headers and the raw request: an upgrade has all of them.
    const asFastify = { raw: req, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers } as unknown as FastifyRequest;
    const r = newApiRequest(asFastify, undefined as unknown as FastifyReply);
    try {
      const until = this.stages.findIndex((s) => s.name === 'resolve');
      await runPipeline(this.stages.slice(0, until + 1), r);
      if (r.info.verb !== 'create') await authorizeOrThrow(this.deps.authorizer, { ...attributesOf(r.info, requestUser(r)), verb: 'create' });
      await this.admit.run(r);
      const target = requestTarget(r);
      await this.deps.subresources.stream({ req, socket, head, info: r.info, query: r.query, def: target.def, registries: this.deps.registries });
      r.status = 101;
    } catch (err) {
      const se = toStatusError(err);
      r.status = se.code;
      rejectStream(socket, se);
    } finally {
      this.observe(r.info, r.status, started);
    }
  }

  private observe(info: RequestInfo, code: number, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const labels = {
      verb: String(info.verb).toUpperCase(),
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      scope: !info.isResourceRequest ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
      component: 'apiserver',
    };
    if (info.verb === 'watch') this.deps.requestMetrics.count(labels, code);
    else this.deps.requestMetrics.observe(labels, code, seconds);
  }
}
