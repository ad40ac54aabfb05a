import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { runComponent } from '@orch/component';
import { MetricsServerModule } from './metrics-server.module';
import { DEFAULT_API_PORT, METRICS_SERVER_FLAGS, NAME, metricsServerOptions } from './options';

/** orch metrics-server: the resource metrics API, served through the gateway. */
void runComponent({
  name: NAME,
  description: 'The orch metrics server: the resource metrics API (metrics.orch.io/v1beta1, also metrics.k8s.io/v1beta1 for kubectl top) from the node agents\' /stats/summary, served through the gateway as an aggregated API.',
  defaultPort: DEFAULT_API_PORT,
  flags: METRICS_SERVER_FLAGS,
  leaderElection: false,
  healthServer: (flags) => ({ host: flags['bind-address'], port: flags['healthz-port'], tls: false }),
  /** The application serves from bootstrap until `signal` aborts, then closes. */
  async run(component, signal) {
    const app = await NestFactory.createApplicationContext(MetricsServerModule.forRoot(component, metricsServerOptions(component)), { logger: ['error', 'warn'], abortOnError: false });
    try {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    } finally {
      await app.close();
    }
  },
}).catch((err) => {
  console.error(`${NAME}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
