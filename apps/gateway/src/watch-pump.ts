import { hostname } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@orch/auth';
import { createLogger, createMetricsRegistry, HealthChecks, startComponentServer } from '@orch/server-common';
import { createWatchPump, dataDir, openStore, openWatchBackends } from './gateway';
import type { GatewayOptions } from './options';

/**
 * `gateway watch-pump`: only the pump, in a process of its own, so reading the store's change
 * feed never waits behind a replica's requests and watch writes (gateways then run with
 * `--watch-pump=false`). Several may run: one leads, the others stand by, following the bus to
 * know where the leader got to, so a successor continues exactly there (no gap for replicas to
 * repair). Serves /healthz, /livez, /readyz and /metrics over HTTPS on --secure-port.
 * Resolves when stopped by SIGTERM or SIGINT.
 */
export async function watchPumpCommand(options: GatewayOptions): Promise<void> {
  const logger = createLogger('watch-pump');
  const log = (message: string) => logger.warn(message);
  if (!options['nats-url'] && !process.env.ORCH_NATS_URL) throw new Error('watch-pump needs --nats-url (or $ORCH_NATS_URL): gateways receive its events over NATS');
  const retention = options['watch-history-retention'];
  const store = await openStore(options, retention);
  const { bus, history } = await openWatchBackends(options, store, retention, logger);
  // Where the last leader got to: what it published (heard on the bus) or, before anything was
  // heard, the store's revision now (replicas behind it follow the store until they catch up).
  let position = await store.currentRevision();
  const heard = bus.subscribe((batch) => {
    const last = batch.events.length > 0 ? batch.events[batch.events.length - 1].revision : batch.after;
    if (last > position) position = last;
  });
  const pump = createWatchPump(store, bus, history, { identity: `${hostname()}:watch-pump:${options['secure-port']}`, startPosition: () => Math.max(position, pump.publishedRevision()), log });
  const health = new HealthChecks();
  health.add('nats', () => {
    if (!bus.connected()) throw new Error('not connected to NATS');
  });
  health.add(store.backend, async () => void (await store.currentRevision()));
  const pki = await ensurePki(options['pki-dir'] || join(dataDir(options), 'pki'), { hosts: options['tls-san'] });
  const server = await startComponentServer({ port: options['secure-port'], host: options['bind-address'], healthChecks: health, registry: createMetricsRegistry(), tls: { cert: pki.serving.certPem, key: pki.serving.keyPem }, logger });
  pump.start();
  logger.info('watch pump started', { port: server.port, bus: bus.name, history: history.scope });
  await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  }).then((signal) => logger.info('shutting down', { signal }));
  health.markShuttingDown();
  await pump.stop();
  heard.unsubscribe();
  await server.close();
  await Promise.all([bus.close(), history.close()]);
  await store.close();
}
