import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { authorizerChain, unionAuthenticator, type Authenticator, type Authorizer } from '@orch/auth';
import type { AuthenticatorModule } from '../authn/authentication.module';
import { AUTHORIZATION_MODES } from '../authz/authorization.module';
import { selectAdmissionPlugins } from '../admission/plugins';
import { Gateway } from '../gateway';
import { AdmissionChain, AdmissionPluginProvider, type AdmissionPlugin } from './admit';
import { AuthenticatorProvider } from './authenticate';
import { AuthorizerProvider } from './authorize';

/**
 * Composes the request pipeline once at start-up from the providers the modules registered
 * (NestJS on the composition side only; requests never go through Nest): the enabled
 * authenticators in their order, the authorization modes in mode order, the admission
 * plugins in plugin order. Hands them to the Gateway, which builds the pipeline.
 */
@Injectable()
export class PipelineComposer implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(Gateway) private readonly gateway: Gateway,
  ) {}

  onModuleInit(): void {
    this.gateway.wire({ authenticator: this.authenticator(), authorizer: this.authorizer(), admission: this.admission() });
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
    return authorizerChain(
      AUTHORIZATION_MODES.map((m) => {
        const a = byMode.get(m);
        if (!a) throw new Error(`authorization mode ${m} has no provider`);
        return a;
      }),
    );
  }

  /** The plugins --enable-admission-plugins / --disable-admission-plugins select (an unknown name fails start-up). */
  private admission(): AdmissionChain {
    const provided = this.discovery.getProviders({ metadataKey: AdmissionPluginProvider.KEY }).map((w) => w.instance as AdmissionPlugin);
    const options = this.gateway.options;
    const chosen = selectAdmissionPlugins(
      provided.map((p) => p.name),
      options['enable-admission-plugins'],
      options['disable-admission-plugins'],
    );
    // Audit annotations (PodSecurity audit, policies' auditAnnotations) go to the log as audit records.
    const audit = this.gateway.logger.with({ audit: 'admission' });
    return AdmissionChain.ordered(
      provided.filter((p) => chosen.includes(p.name)),
      (annotations, request) => audit.info('admission audit annotations', { ...request, resource: request.resource.resource, group: request.resource.group, annotations }),
    );
  }
}
