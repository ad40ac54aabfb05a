import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLogger, parseFlagsOrExit, type FlagDefs } from '@orch/server-common';
import { Dashboard, type DashboardConfig } from './dashboard';

const FLAGS = {
  'secure-port': { type: 'int', default: 8443, description: 'HTTPS port of the dashboard.' },
  'bind-address': { type: 'string', default: '127.0.0.1', description: 'Address to listen on.' },
  server: { type: 'string', default: '', description: 'URL of the gateway (https://host:port). Required.' },
  'certificate-authority': { type: 'string', default: '', description: 'CA bundle (PEM) the gateway\'s serving certificate chains to. Required.' },
  'tls-cert-file': { type: 'string', default: '', description: 'Serving certificate (PEM), e.g. one issued by the cluster CA. Required.' },
  'tls-private-key-file': { type: 'string', default: '', description: 'Key of --tls-cert-file (PEM). Required.' },
  'ui-dir': { type: 'string', default: '', description: 'Directory of the built UI (default: the ui/ directory beside the compiled app).' },
  'session-idle-timeout': { type: 'duration', default: 30 * 60_000, description: 'A session unused this long ends.' },
  'session-max-lifetime': { type: 'duration', default: 12 * 3600_000, description: 'A session ends this long after login.' },
  'max-sessions': { type: 'int', default: 10_000, description: 'At most this many sessions at once (the least recently used ends).' },
} satisfies FlagDefs;

/** Ends the session sweeper and the gateway connections with Nest. */
@Injectable()
class DashboardLifecycle implements OnApplicationShutdown {
  constructor(@Inject(Dashboard) private readonly dashboard: Dashboard) {}

  onApplicationShutdown(): void {
    this.dashboard.close();
  }
}

@Module({})
class DashboardModule {
  static forRoot(config: DashboardConfig): DynamicModule {
    return {
      module: DashboardModule,
      providers: [{ provide: Dashboard, useFactory: () => new Dashboard(config) }, DashboardLifecycle],
    };
  }
}

/** orch dashboard: the web UI, a client of the gateway that acts with each user's own token. */
async function main(): Promise<void> {
  const { values: f } = parseFlagsOrExit({ name: 'dashboard', description: 'The orch dashboard: a web UI that sees and operates the cluster with the logged-in user\'s own token (RBAC decides), served over HTTPS.' }, FLAGS);
  for (const name of ['server', 'certificate-authority', 'tls-cert-file', 'tls-private-key-file'] as const) {
    if (!f[name]) {
      console.error(`dashboard: --${name} is required`);
      process.exit(2);
    }
  }
  const logger = createLogger('dashboard');
  const [cert, key, ca] = await Promise.all([readFile(f['tls-cert-file'], 'utf8'), readFile(f['tls-private-key-file'], 'utf8'), readFile(f['certificate-authority'], 'utf8')]);
  const config: DashboardConfig = {
    gateway: { server: f.server, ca },
    uiDir: resolve(f['ui-dir'] || join(__dirname, '..', 'ui')),
    sessions: { idleTimeoutMs: f['session-idle-timeout'], maxLifetimeMs: f['session-max-lifetime'], maxSessions: f['max-sessions'] },
    logger,
  };
  const adapter = new FastifyAdapter({ https: { key, cert }, logger: false, forceCloseConnections: true, maxParamLength: 4096 });
  const app = await NestFactory.create<NestFastifyApplication>(DashboardModule.forRoot(config), adapter, { bodyParser: false, logger: ['error', 'warn'] });
  await app.init();
  app.get(Dashboard).install(app.getHttpAdapter().getInstance(), app.getHttpServer() as Server);
  await app.listen(f['secure-port'], f['bind-address']);
  const host = f['bind-address'] === '0.0.0.0' ? '127.0.0.1' : f['bind-address'];
  logger.info('serving the dashboard', { url: `https://${host.includes(':') ? `[${host}]` : host}:${f['secure-port']}`, gateway: f.server });
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err) => {
  console.error(`dashboard: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
