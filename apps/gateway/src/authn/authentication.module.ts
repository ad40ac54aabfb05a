import { readFileSync } from 'node:fs';
import { Inject, Injectable, Module } from '@nestjs/common';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  LEGACY_TOKEN_LAST_USED,
  bootstrapTokenAuthenticator,
  parseTokenFile,
  publicKeysFromPem,
  serviceAccountAuthenticator,
  tokenFileAuthenticator,
  x509Authenticator,
  type AuthRequest,
  type Authenticator,
  type BootstrapTokenSecret,
  type ServiceAccountLookup,
} from '@orch/auth';
import { systemContext } from '../registry/system-context';
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

/** Static bearer tokens (`--token-auth-file`), read once at start. */
@Injectable()
@AuthenticatorProvider({ order: 30 })
export class TokenFileAuthentication implements AuthenticatorModule {
  readonly enabled: boolean;
  private readonly impl?: Authenticator;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const file = config.options['token-auth-file'];
    this.enabled = !!file;
    if (file) this.impl = tokenFileAuthenticator(parseTokenFile(readFileSync(file, 'utf8'), file));
  }

  authenticate(req: AuthRequest) {
    return this.impl ? this.impl.authenticate(req) : Promise.resolve(null);
  }
}

/** The object, or undefined when it does not exist. */
async function getOrUndefined(gateway: Gateway, resource: string, namespace: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await gateway.registry('', resource).get(namespace, name);
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * Service-account JWTs (SPEC Service account token): legacy secret tokens the
 * controller-manager signs and bound tokens from TokenRequest. Keys from
 * `--service-account-key-file` (default the cluster PKI's sa key). Always on.
 */
@Injectable()
@AuthenticatorProvider({ order: 50 })
export class ServiceAccountAuthentication implements AuthenticatorModule {
  readonly enabled = true;
  private readonly impl: Authenticator;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, @Inject(Gateway) gateway: Gateway) {
    const o = config.options;
    const files = o['service-account-key-file'];
    const keys = files.length ? files.flatMap((f) => publicKeysFromPem(readFileSync(f, 'utf8'), f)) : publicKeysFromPem(config.pki.serviceAccount.publicKeyPem, 'cluster PKI sa key');
    const lookup: ServiceAccountLookup = {
      serviceAccount: (ns, name) => getOrUndefined(gateway, 'serviceaccounts', ns, name),
      secret: (ns, name) => getOrUndefined(gateway, 'secrets', ns, name) as ReturnType<ServiceAccountLookup['secret']>,
      pod: (ns, name) => getOrUndefined(gateway, 'pods', ns, name),
      markLegacyTokenUsed: async (ns, name, date) => {
        await gateway.registry('', 'secrets').patch(ns, name, (s) => ({ ...s, metadata: { ...s.metadata, annotations: { ...(s.metadata.annotations ?? {}), [LEGACY_TOKEN_LAST_USED]: date } } }), systemContext());
      },
    };
    this.impl = serviceAccountAuthenticator({
      keys,
      issuers: o['service-account-issuer'],
      audiences: apiAudiences(config),
      ...(o['service-account-lookup'] ? { lookup } : {}),
    });
  }

  authenticate(req: AuthRequest) {
    return this.impl.authenticate(req);
  }
}

/** `--api-audiences`, defaulting to the service account issuers (upstream). */
export function apiAudiences(config: GatewayConfig): string[] {
  const a = config.options['api-audiences'];
  return a.length ? a : config.options['service-account-issuer'];
}

/** The gateway's authenticators (SPEC "Authentication" methods), each a provider enabled by its flags. */
@Module({ providers: [X509Authentication, TokenFileAuthentication, BootstrapTokenAuthentication, ServiceAccountAuthentication] })
export class AuthenticationModule {}
