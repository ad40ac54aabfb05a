import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  JwtAuthenticator,
  JwtAuthenticatorSet,
  LEGACY_TOKEN_LAST_USED,
  oidcFlagsConfig,
  parseAuthenticationConfig,
  requestHeaderAuthenticator,
  webhookTokenAuthenticator,
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
import { reviewPoster } from '../webhooks/review-poster';

/** An authenticator provider: `enabled` says whether the flags turn it on. */
export interface AuthenticatorModule extends Authenticator {
  readonly enabled: boolean;
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

/** An authenticator provider that passes each request to the authenticator its flags built (none built: no user). */
abstract class DelegatingAuthentication implements AuthenticatorModule {
  protected impl?: Authenticator;

  constructor(readonly enabled: boolean) {}

  authenticate(req: AuthRequest) {
    return this.impl ? this.impl.authenticate(req) : Promise.resolve(null);
  }
}

/** X.509 client certificates (`--client-ca-file`, default the cluster CA). Always on. */
@Injectable()
@AuthenticatorProvider({ order: 10 })
export class X509Authentication extends DelegatingAuthentication {
  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    super(true);
    this.impl = x509Authenticator({ clientCa: config.clientCa });
  }
}

/**
 * The authenticating proxy (`--requestheader-client-ca-file` and the other `--requestheader-*`
 * flags): a client certificate of that CA (with an allowed name) makes the X-Remote-* headers
 * the user. The TLS server asks for client certificates of this CA too (main.ts).
 */
@Injectable()
@AuthenticatorProvider({ order: 5 })
export class RequestHeaderAuthentication extends DelegatingAuthentication {
  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const o = config.options;
    const file = o['requestheader-client-ca-file'];
    super(!!file);
    if (file) {
      this.impl = requestHeaderAuthenticator({
        clientCa: readFileSync(file, 'utf8'),
        allowedNames: o['requestheader-allowed-names'],
        usernameHeaders: o['requestheader-username-headers'],
        groupHeaders: o['requestheader-group-headers'],
        extraHeaderPrefixes: o['requestheader-extra-headers-prefix'],
      });
    }
  }
}

/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`): bearer tokens no
 * other authenticator took are sent to the webhook as TokenReview v1, answers cached
 * `--authentication-token-webhook-cache-ttl`. Last in the union (upstream order).
 */
@Injectable()
@AuthenticatorProvider({ order: 70 })
export class WebhookTokenAuthentication extends DelegatingAuthentication implements OnModuleInit {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(Gateway) private readonly gateway: Gateway,
  ) {
    super(!!config.options['authentication-token-webhook-config-file']);
    const version = config.options['authentication-token-webhook-version'];
    if (this.enabled && version !== 'v1') throw new Error(`--authentication-token-webhook-version: unsupported version ${JSON.stringify(version)} (supported: v1)`);
  }

  async onModuleInit(): Promise<void> {
    const o = this.config.options;
    if (!this.enabled) return;
    const post = await reviewPoster(this.gateway.webhooks, o['authentication-token-webhook-config-file'], 'authentication-token-webhook-config-file');
    this.impl = webhookTokenAuthenticator(post, { cacheTtlMs: o['authentication-token-webhook-cache-ttl'] });
  }
}

/** Bootstrap tokens (`--enable-bootstrap-token-auth`): secrets `orch-system/bootstrap-token-<id>`. */
@Injectable()
@AuthenticatorProvider({ order: 40 })
export class BootstrapTokenAuthentication extends DelegatingAuthentication {
  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, @Inject(Gateway) gateway: Gateway) {
    super(config.options['enable-bootstrap-token-auth']);
    this.impl = bootstrapTokenAuthenticator(async (id) => (await getOrUndefined(gateway, 'secrets', 'orch-system', `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`)) as BootstrapTokenSecret | undefined);
  }
}

/** Static bearer tokens (`--token-auth-file`), read once at start. */
@Injectable()
@AuthenticatorProvider({ order: 30 })
export class TokenFileAuthentication extends DelegatingAuthentication {
  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const file = config.options['token-auth-file'];
    super(!!file);
    if (file) this.impl = tokenFileAuthenticator(parseTokenFile(readFileSync(file, 'utf8'), file));
  }
}

/**
 * Service-account JWTs (SPEC Service account token): legacy secret tokens the
 * controller-manager signs and bound tokens from TokenRequest. Keys from
 * `--service-account-key-file` (default the cluster PKI's sa key). Always on.
 */
@Injectable()
@AuthenticatorProvider({ order: 50 })
export class ServiceAccountAuthentication extends DelegatingAuthentication {
  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, @Inject(Gateway) gateway: Gateway) {
    super(true);
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
}

/**
 * JWT issuers (SPEC "Token from the identity provider", "Authentication configuration file"):
 * either the one `--oidc-*` describes or the `jwt` list of `--authentication-config`, never
 * both (start-up error). The file is read at start (an invalid file fails start-up) and
 * checked every second: a changed, valid file replaces the issuers (and empties the token
 * cache) without a restart; an invalid one is logged and the last good one kept.
 */
@Injectable()
@AuthenticatorProvider({ order: 60 })
export class JwtAuthentication implements AuthenticatorModule, OnApplicationShutdown {
  readonly enabled: boolean;
  private readonly set = new JwtAuthenticatorSet();
  private timer?: NodeJS.Timeout;
  private loadedDigest = '';

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(Gateway) private readonly gateway: Gateway,
  ) {
    const o = config.options;
    const file = o['authentication-config'];
    const oidcFlags = (Object.keys(o) as (keyof typeof o)[]).filter((k) => k.startsWith('oidc-') && JSON.stringify(o[k]) !== JSON.stringify(OIDC_DEFAULTS[k as keyof typeof OIDC_DEFAULTS]));
    if (file && oidcFlags.length) throw new Error(`--authentication-config and --${oidcFlags.join(', --')} cannot be used together: put the issuer into the file`);
    this.enabled = !!file || !!o['oidc-issuer-url'];
    if (file) {
      const text = readFileSync(file, 'utf8');
      this.install(text);
      this.timer = setInterval(() => void this.reload(file), AUTHENTICATION_CONFIG_POLL_MS);
      this.timer.unref();
    } else if (o['oidc-issuer-url']) {
      const config = oidcFlagsConfig({
        issuerUrl: o['oidc-issuer-url'],
        clientId: o['oidc-client-id'],
        usernameClaim: o['oidc-username-claim'],
        usernamePrefix: o['oidc-username-prefix'],
        groupsClaim: o['oidc-groups-claim'],
        groupsPrefix: o['oidc-groups-prefix'],
        requiredClaims: o['oidc-required-claim'],
        caPem: o['oidc-ca-file'] ? readFileSync(o['oidc-ca-file'], 'utf8') : undefined,
        signingAlgs: o['oidc-signing-algs'],
      });
      this.replace([new JwtAuthenticator(config)]);
    }
  }

  /** Parses `text` and installs its issuers; throws an AuthenticationConfigError naming the fields. */
  private install(text: string): void {
    const configs = parseAuthenticationConfig(text, this.config.options['authentication-config'], { serviceAccountIssuers: this.config.options['service-account-issuer'] });
    this.replace(configs.map((c) => new JwtAuthenticator(c)));
    this.loadedDigest = digest(text);
  }

  private replace(authenticators: JwtAuthenticator[]): void {
    this.set.replace(authenticators);
    for (const a of authenticators) {
      void a.start().then(() => {
        if (a.keyError) this.gateway.logger.warn('jwt authenticator: cannot fetch the issuer\'s keys yet; its tokens are refused until it can', { issuer: a.issuerUrl, err: a.keyError });
      });
    }
  }

  private async reload(file: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      this.gateway.logger.warn('--authentication-config: cannot read the file; keeping the last good configuration', { file, err: (err as Error).message });
      return;
    }
    if (digest(text) === this.loadedDigest) return;
    try {
      this.install(text);
      this.gateway.logger.info('--authentication-config: reloaded', { file, issuers: this.set.issuers.map((a) => a.issuerUrl) });
    } catch (err) {
      this.loadedDigest = digest(text);
      this.gateway.logger.error('--authentication-config: the changed file is invalid; keeping the last good configuration', { file, err: (err as Error).message });
    }
  }

  authenticate(req: AuthRequest) {
    return this.set.authenticate(req);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}

/** How often `--authentication-config` is checked for changes. */
const AUTHENTICATION_CONFIG_POLL_MS = 1000;

/** The `--oidc-*` defaults: a flag at its default does not count as set. */
const OIDC_DEFAULTS = {
  'oidc-issuer-url': '',
  'oidc-client-id': '',
  'oidc-username-claim': 'sub',
  'oidc-username-prefix': '',
  'oidc-groups-claim': '',
  'oidc-groups-prefix': '',
  'oidc-required-claim': [] as string[],
  'oidc-ca-file': '',
  'oidc-signing-algs': ['RS256'],
};

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** `--api-audiences`, defaulting to the service account issuers (upstream). */
export function apiAudiences(config: GatewayConfig): string[] {
  const a = config.options['api-audiences'];
  return a.length ? a : config.options['service-account-issuer'];
}

/** The gateway's authenticators (SPEC "Authentication" methods), each a provider enabled by its flags. */
@Module({ providers: [RequestHeaderAuthentication, X509Authentication, TokenFileAuthentication, BootstrapTokenAuthentication, ServiceAccountAuthentication, JwtAuthentication, WebhookTokenAuthentication] })
export class AuthenticationModule {}
