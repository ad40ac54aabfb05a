import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Catalog } from '@orch/api';
import type { Authenticator, Authorizer } from '@orch/auth';
import type { Logger } from '@orch/server-common';
import type { AuthenticationFailureLimit } from '../authn/failure-limit';
import { parseRequestInfo } from '../request/request-info';
import type { ApiRequest } from './api-request';
import type { AdmissionChain } from './admit';
import { admitStage } from './admit';
import { authenticateStage } from './authenticate';
import { authorizeStage } from './authorize';
import { decodeStage } from './decode';
import type { Aggregator } from '../aggregation/aggregator';
import { aggregateStage } from '../aggregation/stage';
import { deprecationStage, type requestedDeprecatedApisGauge } from '../deprecation/deprecation';
import type { FlowControl } from '../flowcontrol/flow-control';
import { maxInFlightStage, type MaxInFlightLimits } from '../flowcontrol/max-inflight';
import { flowControlStage } from '../flowcontrol/stage';
import type { Encoder } from './encode';
import { impersonateStage } from './impersonate';
import { invokeStage, type InvokeDeps } from './invoke';
import { resolveStage } from './resolve';

/** One step of the request path. Reads what earlier stages set on the request, sets its own part, throws a StatusError to answer with an error. */
export interface Stage {
  readonly name: string;
  run(r: ApiRequest): void | Promise<void>;
}

export interface PipelineDeps extends InvokeDeps {
  catalog: Catalog;
  authenticator: Authenticator;
  authorizer: Authorizer;
  admission: AdmissionChain;
  encoder: Encoder;
  logger: Logger;
  /** API Priority and Fairness (absent: --enable-priority-and-fairness=false). */
  flowControl?: FlowControl;
  /** API aggregation: group versions served by extension servers (APIServices). */
  aggregator?: Aggregator;
  /** apiserver_requested_deprecated_apis (absent in tests without metrics). */
  deprecatedApis?: ReturnType<typeof requestedDeprecatedApisGauge>;
  /** Without API Priority and Fairness: the plain in-flight limits. */
  maxInFlight: MaxInFlightLimits;
  options: { anonymousAuth: boolean; k8sAliases: boolean };
  /** --authentication-failure-limit (absent when 0). */
  authenticationFailures?: AuthenticationFailureLimit;
}

/**
 * The gateway's request path, in order (ARCHITECTURE §3; upstream DefaultBuildHandlerChain
 * plus the REST handlers). Every request — reads, writes, watches, logs, proxies and
 * exec-style streams — passes the same authentication and authorization stages.
 *
 *   request-info → authenticate → impersonate → flow-control → authorize → aggregate → resolve → deprecation → decode → admit → invoke → encode
 */
export function buildPipeline(d: PipelineDeps): readonly Stage[] {
  return [
    { name: 'request-info', run: (r) => void (r.info = parseRequestInfo(r.req.method, r.path, r.query)) },
    { name: 'authenticate', run: authenticateStage(d.authenticator, d.options, d.authenticationFailures) },
    { name: 'impersonate', run: impersonateStage(d.authorizer, d.logger) },
    { name: 'flow-control', run: d.flowControl ? flowControlStage(d.flowControl) : maxInFlightStage(d.maxInFlight) },
    { name: 'authorize', run: authorizeStage(d.authorizer) },
    { name: 'aggregate', run: aggregateStage(d.aggregator) },
    { name: 'resolve', run: resolveStage(d.catalog, d.options) },
    { name: 'deprecation', run: deprecationStage(d.catalog, d.deprecatedApis) },
    { name: 'decode', run: decodeStage },
    { name: 'admit', run: admitStage(d.admission) },
    { name: 'invoke', run: invokeStage(d) },
    { name: 'encode', run: d.encoder.stage },
  ];
}

/** A fresh request record (the request-info stage fills `info`). */
export function newApiRequest(req: FastifyRequest, reply: FastifyReply): ApiRequest {
  const url = req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return {
    req,
    reply,
    path,
    query: new URLSearchParams(q < 0 ? '' : url.slice(q + 1)),
    info: { isResourceRequest: false, path, verb: req.method.toLowerCase(), apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', rest: [] },
    status: 500,
    done: false,
  };
}

/**
 * Runs the stages in order until one answers (`done`) or throws. A stage that finishes
 * synchronously is not awaited: a get passes ~10 such stages, each await a microtask turn.
 */
export async function runPipeline(stages: readonly Stage[], r: ApiRequest): Promise<void> {
  for (const stage of stages) {
    const running = stage.run(r);
    if (running) await running;
    if (r.done) return;
  }
}
