import { Injectable, Module } from '@nestjs/common';
import type { AuthorizationAttributes, Authorizer } from '@orch/auth';
import { AuthorizerProvider, authenticatedAuthorizer, publicInfoAuthorizer } from '../pipeline/authorize';

/**
 * Public information (health, version, cluster-info) for everyone, anonymous included. Runs
 * first until the bootstrap policy grants the same through RBAC.
 */
@Injectable()
@AuthorizerProvider({ mode: 'PublicInfo' })
export class PublicInfoAuthorization implements Authorizer {
  readonly name = 'PublicInfo';
  private readonly impl = publicInfoAuthorizer();
  authorize(a: AuthorizationAttributes) {
    return this.impl.authorize(a);
  }
}

/** Every authenticated user may do anything: the behaviour before RBAC, kept by the pipeline skeleton. */
@Injectable()
@AuthorizerProvider({ mode: 'AlwaysAllowAuthenticated' })
export class AuthenticatedAuthorization implements Authorizer {
  readonly name = 'AlwaysAllowAuthenticated';
  private readonly impl = authenticatedAuthorizer();
  authorize(a: AuthorizationAttributes) {
    return this.impl.authorize(a);
  }
}

/** The order of the authorization modes (until `--authorization-mode` selects them). */
export const AUTHORIZATION_MODES: readonly string[] = ['PublicInfo', 'AlwaysAllowAuthenticated'];

/** The gateway's authorization modes, each a provider; the pipeline asks them in AUTHORIZATION_MODES order. */
@Module({ providers: [PublicInfoAuthorization, AuthenticatedAuthorization] })
export class AuthorizationModule {}
