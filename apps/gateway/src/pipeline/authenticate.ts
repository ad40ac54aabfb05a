import { DiscoveryService } from '@nestjs/core';
import { StatusError } from '@orch/apimachinery';
import { anonymousUser, authRequestFromIncoming, type Authenticator, type UserInfo } from '@orch/auth';
import type { AuthenticationFailureLimit } from '../authn/failure-limit';
import type { ApiRequest } from './api-request';

/**
 * Marks a NestJS provider class as an authenticator. `order` fixes its place in the union
 * (lower first; upstream order: x509, request header, token file, bootstrap, service
 * account, OIDC, webhook). The provider decides from its flags whether it is enabled.
 */
export const AuthenticatorProvider = DiscoveryService.createDecorator<{ order: number }>();

const ANONYMOUS: UserInfo = anonymousUser();

/**
 * The authenticate stage (SPEC "Authentication"): the union of authenticators decides.
 * A credential an authenticator rejects, or an Authorization header no authenticator
 * claims, is 401, never anonymous. A request with no
 * credential is `system:anonymous` in `system:unauthenticated` when `anonymousAuth` is on;
 * otherwise 401 on every path, health and version included (upstream `--anonymous-auth=false`).
 * With `failures` (`--authentication-failure-limit`), a request from a source over the limit
 * is 429 before any authenticator runs, and every 401 counts against its source.
 */
export function authenticateStage(authenticator: Authenticator, opts: { anonymousAuth: boolean }, failures?: AuthenticationFailureLimit): (r: ApiRequest) => Promise<void> {
  const authenticate = async (r: ApiRequest) => {
    const user = await authenticator.authenticate(authRequestFromIncoming(r.req.raw));
    if (user) {
      r.authenticatedUser = user;
      return;
    }
    // A credential nobody accepted is a failed login, not an anonymous request (upstream: invalid bearer token).
    if (r.req.headers.authorization !== undefined) throw StatusError.unauthorized();
    if (!opts.anonymousAuth) throw StatusError.unauthorized();
    r.authenticatedUser = ANONYMOUS;
  };
  if (!failures) return authenticate;
  return async (r) => {
    const socket = r.req.raw.socket;
    failures.refuseRequest(socket);
    try {
      await authenticate(r);
    } catch (err) {
      if (err instanceof StatusError && err.code === 401) failures.failed(socket);
      throw err;
    }
  };
}
