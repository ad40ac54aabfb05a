import { Inject, Injectable, Module } from '@nestjs/common';
import { StatusError } from '@orch/apimachinery';
import { BOOTSTRAP_TOKEN_SECRET_PREFIX, bootstrapTokenAuthenticator, x509Authenticator, type AuthRequest, type Authenticator, type BootstrapTokenSecret } from '@orch/auth';
import { Gateway } from '../gateway';
import { GATEWAY_CONFIG, type GatewayConfig } from '../gateway-config';
import { AuthenticatorProvider } from '../pipeline/authenticate';

/** An authenticator provider: `enabled` says whether the flags turn it on. */
export interface AuthenticatorModule extends Authenticator {
  readonly enabled: boolean;
}

/** X.509 client certificates (`--client-ca-file`, default the cluster CA). Always on. */
@Injectable()
@AuthenticatorProvider({ order: 10 })
export class X509Authentication implements AuthenticatorModule {
  readonly enabled = true;
  private readonly impl: Authenticator;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.impl = x509Authenticator({ clientCa: config.clientCa });
  }

  authenticate(req: AuthRequest) {
    return this.impl.authenticate(req);
  }
}

/** Bootstrap tokens (`--enable-bootstrap-token-auth`): secrets `orch-system/bootstrap-token-<id>`. */
@Injectable()
@AuthenticatorProvider({ order: 40 })
export class BootstrapTokenAuthentication implements AuthenticatorModule {
  readonly enabled: boolean;
  private readonly impl: Authenticator;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, @Inject(Gateway) gateway: Gateway) {
    this.enabled = config.options['enable-bootstrap-token-auth'];
    this.impl = bootstrapTokenAuthenticator(async (id): Promise<BootstrapTokenSecret | undefined> => {
      try {
        return (await gateway.registry('', 'secrets').get('orch-system', `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`)) as BootstrapTokenSecret;
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) return undefined;
        throw err;
      }
    });
  }

  authenticate(req: AuthRequest) {
    return this.impl.authenticate(req);
  }
}

/** The gateway's authenticators (SPEC "Authentication" methods), each a provider enabled by its flags. */
@Module({ providers: [X509Authentication, BootstrapTokenAuthentication] })
export class AuthenticationModule {}
