import { DiscoveryService } from '@nestjs/core';
import { StatusError } from '@orch/apimachinery';
import { ALLOW, ANONYMOUS_USER, NO_OPINION, type AuthorizationAttributes, type AuthorizationResult, type Authorizer, type UserInfo } from '@orch/auth';
import type { RequestInfo } from '../request/request-info';
import type { ApiRequest } from './api-request';
import { requestUser } from './api-request';

/**
 * Marks a NestJS provider class as an authorization mode; `mode` is the name used in
 * `--authorization-mode` (RBAC, Node, ...). The gateway module orders them by that flag.
 */
export const AuthorizerProvider = DiscoveryService.createDecorator<{ mode: string }>();

/** The attributes of a request for `user` (SPEC "Request verb mapping for authorization"). */
export function attributesOf(info: RequestInfo, user: UserInfo): AuthorizationAttributes {
  return {
    user,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    verb: String(info.verb),
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

/**
 * The 403 of a denied request in upstream's wording:
 * `User "u" cannot list resource "pods" in API group "" in the namespace "default"[: reason]`.
 */
export function forbidden(a: AuthorizationAttributes, reason: string): StatusError {
  const tail = reason ? `: ${reason}` : '';
  if (!a.isResourceRequest) return StatusError.forbidden(undefined, '', `User "${a.user.username}" cannot ${a.verb} path "${a.path}"${tail}`);
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : a.resource === 'namespaces' ? '' : ' at the cluster scope';
  return StatusError.forbidden(
    { group: a.apiGroup, resource: a.resource },
    a.name,
    `User "${a.user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}"${scope}${tail}`,
  );
}

/** Asks `authorizer`; anything but `allow` is a 403 (default deny). */
export async function authorizeOrThrow(authorizer: Authorizer, a: AuthorizationAttributes): Promise<void> {
  const res = await authorizer.authorize(a);
  if (res.decision !== 'allow') throw forbidden(a, res.reason);
}

/** The authorize stage: the request's own attributes, as its (impersonated) user. */
export function authorizeStage(authorizer: Authorizer): (r: ApiRequest) => Promise<void> {
  return (r) => authorizeOrThrow(authorizer, attributesOf(r.info, requestUser(r)));
}

// ------------------------------------------------------------ transitional modes

/** Paths anyone may read, authenticated or not (upstream system:public-info-viewer). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/[^/]+)?\/?$/.test(path);
}

/**
 * Reading the signed cluster-info config map is open to anyone: joining nodes fetch it before
 * they have credentials (upstream grants get on it to system:unauthenticated).
 */
function isClusterInfoRead(a: AuthorizationAttributes): boolean {
  return a.isResourceRequest && a.verb === 'get' && a.apiGroup === '' && a.resource === 'configmaps' && a.namespace === 'orch-public' && a.name === 'cluster-info' && !a.subresource;
}

/**
 * Allows what everyone may do, anonymous included: read health and version, and get the
 * signed cluster-info config map (the public-info-viewer and bootstrap-signer rules).
 */
export function publicInfoAuthorizer(): Authorizer {
  return {
    name: 'PublicInfo',
    authorize(a): AuthorizationResult {
      if (!a.isResourceRequest && (a.verb === 'get' || a.verb === 'head') && (PUBLIC_PATHS.has(a.path) || isHealthPath(a.path))) return ALLOW('public info');
      if (isClusterInfoRead(a)) return ALLOW('cluster-info is public');
      return NO_OPINION();
    },
  };
}

/** Allows every authenticated user everything (the behaviour before RBAC; anonymous gets no opinion). */
export function authenticatedAuthorizer(): Authorizer {
  return {
    name: 'AlwaysAllowAuthenticated',
    authorize: (a) => (a.user.username === ANONYMOUS_USER ? NO_OPINION() : ALLOW('authenticated users may do anything')),
  };
}
