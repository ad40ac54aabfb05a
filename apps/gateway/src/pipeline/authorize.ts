import { DiscoveryService } from '@nestjs/core';
import { StatusError } from '@orch/apimachinery';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, UserInfo } from '@orch/auth';
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

/**
 * Asks `authorizer`; anything but `allow` is a 403 (default deny). Without a promise when the
 * authorizer answers without one: then a denial is thrown, not a rejected promise.
 */
export function authorizeOrThrow(authorizer: Authorizer, a: AuthorizationAttributes): void | Promise<void> {
  const res = authorizer.authorize(a);
  if (res instanceof Promise) return res.then((settled) => allowedOrThrow(a, settled));
  allowedOrThrow(a, res);
}

function allowedOrThrow(a: AuthorizationAttributes, res: AuthorizationResult): void {
  if (res.decision !== 'allow') throw forbidden(a, res.reason);
}

/** The authorize stage: the request's own attributes, as its (impersonated) user. */
export function authorizeStage(authorizer: Authorizer): (r: ApiRequest) => void | Promise<void> {
  return (r) => authorizeOrThrow(authorizer, attributesOf(r.info, requestUser(r)));
}
