import { Module, type DynamicModule, type OnApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Pki } from '@orch/auth';
import { Gateway } from './gateway';
import type { GatewayOptions } from './options';

/** Closes the gateway (watches, cache, store) when Nest shuts down. */
@Injectable()
class GatewayLifecycle implements OnApplicationShutdown {
  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  async onApplicationShutdown(): Promise<void> {
    await this.gateway.close();
  }
}

/** The gateway's Nest module: provides the Gateway composition root. */
@Module({})
export class GatewayModule {
  static forRoot(options: GatewayOptions, pki: Pki, clientCa: string): DynamicModule {
    return {
      module: GatewayModule,
      providers: [{ provide: Gateway, useFactory: () => Gateway.create(options, pki, clientCa) }, GatewayLifecycle],
      exports: [Gateway],
    };
  }
}
