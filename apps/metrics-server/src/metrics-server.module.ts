import { Module, type DynamicModule } from '@nestjs/common';
import { MetricsApi } from './api';
import { AuthenticationSource } from './authentication-source';
import { COMPONENT, METRICS_SERVER_OPTIONS, type MetricsServerComponent, type MetricsServerOptions } from './options';
import { Scraper } from './scraper';
import { MetricsServer, SERVING_CERT, servingCert } from './serving';

/**
 * The metrics server's Nest module: the options, the serving certificate, the authentication
 * source, the scraper (scrapes from bootstrap to shutdown), the metrics API and its HTTPS
 * server (listens and registers at bootstrap, closes at shutdown).
 */
@Module({})
export class MetricsServerModule {
  static forRoot(component: MetricsServerComponent, options: MetricsServerOptions): DynamicModule {
    return {
      module: MetricsServerModule,
      providers: [
        { provide: COMPONENT, useValue: component },
        { provide: METRICS_SERVER_OPTIONS, useValue: options },
        { provide: SERVING_CERT, useFactory: () => servingCert(options) },
        AuthenticationSource,
        { provide: Scraper, useFactory: () => new Scraper(component.client, options.resolutionMs, component.logger) },
        {
          provide: MetricsApi,
          useFactory: (authentication: AuthenticationSource, scraper: Scraper) => new MetricsApi({ authenticator: () => authentication.current(), scraper, client: component.client, logger: component.logger }),
          inject: [AuthenticationSource, Scraper],
        },
        MetricsServer,
      ],
    };
  }
}
