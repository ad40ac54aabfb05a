import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GroupVersionKind, ResourceDef, SubresourceDef } from '@orch/api';
import type { DeleteOptions, KubeObject } from '@orch/apimachinery';
import type { UserInfo } from '@orch/auth';
import type { KeyValue } from '@orch/storage';
import type { RequestContext } from '../registry/strategy';
import type { RequestInfo } from '../request/request-info';
import type { Representation } from '../server/representation';
import type { FieldValidation } from './decode';
import type { RequestAdmission } from './admit';
import type { StoredList } from './stored-protobuf';

/** The body of a request once the decode stage has read it (one decoder for every body). */
export type DecodedRequestBody =
  /** An object of the target kind (create, update, subresource and virtual writes). */
  | { type: 'object'; object: KubeObject }
  /** A patch: a function from the current object to the patched one, result checked like a body. */
  | { type: 'patch'; contentType: string; apply: (current: KubeObject) => KubeObject }
  /** A server-side apply configuration (`application/apply-patch+yaml`). */
  | { type: 'apply'; config: KubeObject }
  /** DeleteOptions of delete and deletecollection (body and query parameters merged). */
  | { type: 'deleteOptions'; options: DeleteOptions }
  /** Streamed or proxied bodies are passed on unread (proxy, exec-style streams). */
  | { type: 'none' };

/**
 * The resolved target of a resource request (resolve stage): the catalog entry, the
 * subresource, the kind a body must have, and the per-request context handed to the registry.
 */
export interface ResolvedTarget {
  def: ResourceDef;
  /** The subresource's catalog entry when the URL names one. */
  sub?: SubresourceDef;
  /** The kind a request body must be (the subresource's kind for subresources). */
  bodyKind: GroupVersionKind;
  /** The namespace the registry is asked for ('' for cluster-scoped resources). */
  namespace: string;
  ctx: RequestContext;
  repr: Representation;
  fieldValidation: FieldValidation;
}

/**
 * One request as it travels through the pipeline's stages (pipeline.ts). Each stage reads
 * what earlier stages set and sets its own field; nothing is set twice. `done` is set by the
 * stage that wrote the response (or hijacked the socket for a stream); later stages are skipped.
 */
export interface ApiRequest {
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly path: string;
  readonly query: URLSearchParams;
  /** request-info stage. */
  info: RequestInfo;
  /** authenticate stage: who sent the request (before impersonation). */
  authenticatedUser?: UserInfo;
  /** impersonate stage: who the request acts as (the authenticated user unless impersonating). */
  user?: UserInfo;
  /** resolve stage (resource requests only). */
  target?: ResolvedTarget;
  /** decode stage (resource requests only). */
  body?: DecodedRequestBody;
  /** admit stage: admission of this request, handed to the registry. */
  admission?: RequestAdmission;
  /**
   * invoke stage: what to send (the encode stage writes it): `body`, or JSON text to send as it
   * is (`rawJson`), or the stored values of an object (protobuf) or of a list page (plain JSON
   * in the served group, or protobuf) to be written from (`stored`).
   */
  result?: { status: number; body: unknown; rawJson?: string; stored?: { object: KeyValue } | { list: StoredList } };
  /** HTTP status sent (for metrics). */
  status: number;
  done: boolean;
}

/** The user of a request past the impersonate stage. */
export function requestUser(r: ApiRequest): UserInfo {
  if (!r.user) throw new Error('pipeline: user read before the impersonate stage');
  return r.user;
}

/** The target of a resource request past the resolve stage. */
export function requestTarget(r: ApiRequest): ResolvedTarget {
  if (!r.target) throw new Error('pipeline: target read before the resolve stage');
  return r.target;
}

export type { KubeObject };
