import { Module, type DynamicModule } from '@nestjs/common';
import { COMPONENT_CONTEXT } from '@orch/component';
import { MetricsApi } from './api';
import { AuthenticationSource } from './authentication-source';
import { METRICS_SERVER_OPTIONS, type MetricsServerComponent, type MetricsServerOptions } from './options';
import { Scraper } from './scraper';
import { MetricsServer, SERVING_CERT, servingCert } from './serving';

/**
 * The metrics server's Nest module (run by `runComponentModule` for the component runtime):
 * the options, the serving certificate, the authentication source, the scraper (scrapes from
 * bootstrap to shutdown), the metrics API and its HTTPS server (listens and registers at
 * bootstrap, closes at shutdown).
 */
@Module({})
export class MetricsServerModule {
  static forRoot(options: MetricsServerOptions): DynamicModule {
    return {
      module: MetricsServerModule,
      providers: [
        { provide: METRICS_SERVER_OPTIONS, useValue: options },
        { provide: SERVING_CERT, useFactory: () => servingCert(options) },
        AuthenticationSource,
        { provide: Scraper, useFactory: (component: MetricsServerComponent) => new Scraper(component.client, options.resolutionMs, component.logger), inject: [COMPONENT_CONTEXT] },
        {
          provide: MetricsApi,
          useFactory: (component: MetricsServerComponent, authentication: AuthenticationSource, scraper: Scraper) =>
            new MetricsApi({ authenticator: () => authentication.current(), scraper, client: component.client, logger: component.logger }),
          inject: [COMPONENT_CONTEXT, AuthenticationSource, Scraper],
        },
        MetricsServer,
      ],
    };
  }
}
