import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpRequestMetrics } from '@orch/server-common';
import type { RequestInfo } from '../request/request-info';
import { buildPipeline, newApiRequest, runPipeline, type PipelineDeps, type Stage } from '../pipeline/pipeline';

import { errorInRequestedGroup } from '../pipeline/encode';

export { toStatusError } from '../pipeline/encode';

export interface ApiHandlerDeps extends PipelineDeps {
  requestMetrics: HttpRequestMetrics;
}

/**
 * Fastify's handler for every path: runs the request pipeline (pipeline/pipeline.ts shows the
 * stages in order), answers errors as Status, and records request metrics.
 */
export class ApiHandler {
  private readonly stages: readonly Stage[];

  constructor(private readonly deps: ApiHandlerDeps) {
    this.stages = buildPipeline(deps);
  }

  /** Ends every open watch stream cleanly (graceful shutdown). */
  closeAllWatches(): void {
    this.deps.watches.closeAll();
  }

  /** Never throws: errors become Status responses. */
  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const started = process.hrtime.bigint();
    const r = newApiRequest(req, reply);
    try {
      await runPipeline(this.stages, r);
    } catch (err) {
      // Errors of requests to a *.k8s.io alias name the group asked for.
      const served = r.target?.def.group ?? '';
      r.status = await this.deps.encoder.sendError(req, reply, errorInRequestedGroup(err, served, r.info.apiGroup));
    } finally {
      this.observe(r.info, r.status, started);
    }
  }

  private observe(info: RequestInfo, code: number, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const labels = {
      verb: String(info.verb).toUpperCase() === info.verb ? info.verb : String(info.verb).toUpperCase(),
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      scope: !info.isResourceRequest ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
      component: 'apiserver',
    };
    if (info.verb === 'watch') this.deps.requestMetrics.total.inc({ ...labels, code: String(code) });
    else this.deps.requestMetrics.observe(labels, code, seconds);
  }
}
