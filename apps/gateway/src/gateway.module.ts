import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { globalModule } from '@orch/component';
import { AdmissionModule } from './admission/admission.module';
import { AuthenticationModule } from './authn/authentication.module';
import { AuthorizationModule } from './authz/authorization.module';
import { Gateway } from './gateway';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import { PipelineComposer } from './pipeline/pipeline-composer';

/**
 * Shuts the gateway down with Nest: before the HTTP server closes (which waits for open
 * connections) watches end, so a watch never holds the process up; after, the watch cache
 * stops and the store closes.
 */
@Injectable()
class GatewayLifecycle implements BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  beforeApplicationShutdown(): void {
    this.gateway.endWatches();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gateway.close();
  }
}

/** The configuration and the Gateway composition root, visible to every feature module (the providers of the core module, a {@link globalModule}). */
function coreProviders(config: GatewayConfig): Provider[] {
  return [{ provide: GATEWAY_CONFIG, useValue: config }, { provide: Gateway, useFactory: () => Gateway.create(config.options, config.pki) }];
}

/**
 * The gateway's Nest module: the Gateway plus the feature modules whose providers make up the
 * request pipeline's pluggable stages (authenticators, authorization modes, admission plugins).
 */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      imports: [globalModule('GatewayCoreModule', coreProviders(config)), DiscoveryModule, AuthenticationModule, AuthorizationModule, AdmissionModule],
      providers: [PipelineComposer, GatewayLifecycle],
    };
  }
}
