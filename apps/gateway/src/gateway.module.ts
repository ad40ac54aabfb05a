import { Global, Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AdmissionModule } from './admission/admission.module';
import { AuthenticationModule } from './authn/authentication.module';
import { AuthorizationModule } from './authz/authorization.module';
import { Gateway } from './gateway';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import { PipelineComposer } from './pipeline/pipeline-composer';

/** Closes the gateway (watches, cache, store) when Nest shuts down. */
@Injectable()
class GatewayLifecycle implements OnApplicationShutdown {
  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  async onApplicationShutdown(): Promise<void> {
    await this.gateway.close();
  }
}

/** The configuration and the Gateway composition root, visible to every feature module. */
@Global()
@Module({})
class GatewayCoreModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayCoreModule,
      providers: [{ provide: GATEWAY_CONFIG, useValue: config }, { provide: Gateway, useFactory: () => Gateway.create(config.options, config.pki) }],
      exports: [GATEWAY_CONFIG, Gateway],
    };
  }
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
      imports: [GatewayCoreModule.forRoot(config), DiscoveryModule, AuthenticationModule, AuthorizationModule, AdmissionModule],
      providers: [PipelineComposer, GatewayLifecycle],
    };
  }
}
