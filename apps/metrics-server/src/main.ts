import 'reflect-metadata';
import { componentMain } from '@orch/component';
import { MetricsServerModule } from './metrics-server.module';
import { DEFAULT_API_PORT, METRICS_SERVER_FLAGS, NAME, metricsServerOptions } from './options';

/** orch metrics-server: the resource metrics API, served through the gateway. */
componentMain({
  name: NAME,
  description: 'The orch metrics server: the resource metrics API (metrics.orch.io/v1beta1, also metrics.k8s.io/v1beta1 for kubectl top) from the node agents\' /stats/summary, served through the gateway as an aggregated API.',
  defaultPort: DEFAULT_API_PORT,
  flags: METRICS_SERVER_FLAGS,
  leaderElection: false,
  healthServer: (flags) => ({ host: flags['bind-address'], port: flags['healthz-port'], tls: false }),
  // The application serves from bootstrap until the signal aborts, then closes.
  module: (ctx) => MetricsServerModule.forRoot(metricsServerOptions(ctx)),
});
