import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { ServiceAccountTokenIssuer, authorizerChain, privilegedGroupAuthorizer, unionAuthenticator, type Authenticator, type Authorizer } from '@orch/auth';
import { apiAudiences, type AuthenticatorModule } from '../authn/authentication.module';
import { GATEWAY_CONFIG, type GatewayConfig } from '../gateway-config';
import { AdmissionState } from '../admission/admission-state';
import { selectAdmissionPlugins } from '../admission/plugins';
import { Gateway } from '../gateway';
import { AdmissionChain, AdmissionPluginProvider, type AdmissionPlugin } from './admit';
import { AuthenticatorProvider } from './authenticate';
import { AuthorizerProvider } from './authorize';

/**
 * Composes the request pipeline once at start-up from the providers the modules registered
 * (NestJS on the composition side only; requests never go through Nest): the enabled
 * authenticators in their order, `system:masters` then the `--authorization-mode` modes in
 * flag order, the admission plugins the admission flags select (plus the always-on checks)
 * in plugin order. Hands them to the Gateway, which builds the pipeline.
 */
@Injectable()
export class PipelineComposer implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(Gateway) private readonly gateway: Gateway,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(AdmissionState) private readonly admissionState: AdmissionState,
  ) {}

  onModuleInit(): void {
    this.gateway.wire({ authenticator: this.authenticator(), authorizer: this.authorizer(), admission: this.admission(), tokens: this.tokens() });
  }

  private authenticator(): Authenticator {
    const found = this.discovery.getProviders({ metadataKey: AuthenticatorProvider.KEY }).map((w) => ({
      impl: w.instance as AuthenticatorModule,
      order: this.discovery.getMetadataByDecorator(AuthenticatorProvider, w)?.order ?? 0,
    }));
    return unionAuthenticator(found.filter((a) => a.impl.enabled).sort((a, b) => a.order - b.order).map((a) => a.impl));
  }

  private authorizer(): Authorizer {
    const byMode = new Map<string, Authorizer>();
    for (const w of this.discovery.getProviders({ metadataKey: AuthorizerProvider.KEY })) {
      const mode = this.discovery.getMetadataByDecorator(AuthorizerProvider, w)?.mode;
      if (mode) byMode.set(mode, w.instance as Authorizer);
    }
    const modes = this.gateway.options['authorization-mode'];
    if (modes.length === 0) throw new Error('--authorization-mode must name at least one mode');
    const chosen = modes.map((m) => {
      const a = byMode.get(m);
      if (!a) throw new Error(`--authorization-mode: unknown or unsupported mode ${JSON.stringify(m)} (supported: ${[...byMode.keys()].join(', ')})`);
      return a;
    });
    return authorizerChain([privilegedGroupAuthorizer(), ...chosen]);
  }

  /** TokenRequest signing: `--service-account-signing-key-file` (default the cluster PKI sa key), the first issuer. */
  private tokens(): { issuer: ServiceAccountTokenIssuer; apiAudiences: string[] } {
    const o = this.config.options;
    const file = o['service-account-signing-key-file'];
    const key = file ? readFileSync(file, 'utf8') : this.config.pki.serviceAccount.privateKeyPem;
    return { issuer: new ServiceAccountTokenIssuer(key, o['service-account-issuer'][0] ?? 'https://orch.default.svc'), apiAudiences: apiAudiences(this.config) };
  }

  /**
   * The plugins --enable-admission-plugins / --disable-admission-plugins select (an unknown
   * name, or a configuration for a plugin that takes none, fails start-up).
   */
  private admission(): AdmissionChain {
    const provided = this.discovery.getProviders({ metadataKey: AdmissionPluginProvider.KEY }).map((w) => w.instance as AdmissionPlugin);
    const options = this.gateway.options;
    const chosen = selectAdmissionPlugins(
      provided.filter((p) => !p.alwaysOn).map((p) => p.name),
      options['enable-admission-plugins'],
      options['disable-admission-plugins'],
      this.admissionState.configuredPlugins,
    );
    // Audit annotations (PodSecurity audit, policies' auditAnnotations) go to the log as audit records.
    const audit = this.gateway.logger.with({ audit: 'admission' });
    return AdmissionChain.ordered(
      provided.filter((p) => p.alwaysOn || chosen.includes(p.name)),
      (annotations, request) => audit.info('admission audit annotations', { ...request, resource: request.resource.resource, group: request.resource.group, annotations }),
    );
  }
}
