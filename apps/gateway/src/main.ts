import 'reflect-metadata';
import { mkdir, readFile } from 'node:fs/promises';
import type { Http2SecureServer, Settings as Http2Settings } from 'node:http2';
import type { Server as TlsServer } from 'node:tls';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { FeatureGates } from '@orch/api';
import { ensurePki } from '@orch/auth';
import { apiServiceServingHosts, apiServiceSpecs } from './api-endpoints/api-endpoints';
import { serviceRangesFromFlags } from './registry/service-ip';
import { parseFlagsOrExit } from '@orch/server-common';
import { dataDir, Gateway } from './gateway';
import { GatewayModule } from './gateway.module';
import { MAX_REQUEST_BODY_BYTES } from './pipeline/media';
import { GATEWAY_FLAGS } from './options';
import { answerClientError, answerFrameworkError, dropAdapterPassThroughHooks, parseHttp1InJavaScript } from './server/edge';
import { verifyStoreCommand } from './verify-store';
import { watchPumpCommand } from './watch-pump';

const DESCRIPTION = `The orch gateway validates and configures data for the API objects and serves the API over HTTPS.

Commands:
  serve (default)  serve the API
  watch-pump       run only the watch pump (store change feed → NATS, leader-elected); health on --secure-port
  verify-store     check the integrity of the store these flags name (read-only, safe while gateways run); exit 1 on a problem`;

/** How long a SIGTERM waits for requests other than watches before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/** orch gateway: the API server. Flags per SPEC; see --help. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const command = argv[0] === 'verify-store' || argv[0] === 'serve' || argv[0] === 'watch-pump' ? argv[0] : 'serve';
  const { values: options } = parseFlagsOrExit({ name: command === 'serve' ? 'gateway' : `gateway ${command}`, description: DESCRIPTION }, GATEWAY_FLAGS, argv[0] === command ? argv.slice(1) : argv);
  if (command === 'verify-store') process.exit(await verifyStoreCommand(options, (line) => console.log(line)));
  if (command === 'watch-pump') {
    await watchPumpCommand(options);
    process.exit(0);
  }
  const dir = dataDir(options);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // In-cluster clients reach the API through its Services: their addresses and names are in the serving certificate.
  const apiServices = apiServiceSpecs(serviceRangesFromFlags(options, new FeatureGates(options['feature-gates'])).cidr, options['k8s-group-aliases']);
  const pki = await ensurePki(options['pki-dir'] || join(dir, 'pki'), { hosts: [...options['tls-san'], ...apiServiceServingHosts(apiServices)] });
  const cert = options['tls-cert-file'] ? await readFile(options['tls-cert-file'], 'utf8') : pki.serving.certPem;
  const key = options['tls-private-key-file'] ? await readFile(options['tls-private-key-file'], 'utf8') : pki.serving.keyPem;
  const clientCa = options['client-ca-file'] ? await readFile(options['client-ca-file'], 'utf8') : pki.ca.certPem;
  // TLS asks for certificates of the client CA and of the authenticating proxies' CA; each authenticator checks its own chain.
  const requestHeaderCa = options['requestheader-client-ca-file'] ? await readFile(options['requestheader-client-ca-file'], 'utf8') : '';

  const tls = { key, cert, ca: requestHeaderCa ? [clientCa, requestHeaderCa] : clientCa, requestCert: true, rejectUnauthorized: false };
  const http2 = options.http2;
  const adapter = new FastifyAdapter({
    // With --http2, ALPN offers h2 and http/1.1 on the same port (upgrades need HTTP/1.1); Node's
    // limits on rejected streams and invalid frames (HTTP/2 rapid reset) stay at their defaults.
    // noDelay: Node's HTTP/2 server leaves Nagle on for the HTTP/1.1 connections it accepts (its
    // https and http servers turn it off), so a response or watch event written in two parts waited
    // for the client's delayed ACK, up to 40 ms; HTTP/2 sessions turn it off themselves.
    ...(http2 ? { http2: true as const, https: { ...tls, allowHTTP1: true, noDelay: true, settings: http2Settings(options['http2-max-streams-per-connection']) } } : { https: tls }),
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    // No Nest middleware in the gateway: without middie, no onRequest hook runs an empty chain per request.
    skipMiddie: true,
    forceCloseConnections: 'idle',
    maxParamLength: 4096,
    ignoreDuplicateSlashes: true,
    logger: false,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
  dropAdapterPassThroughHooks(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot({ options, pki, clientCa }), adapter, { bodyParser: false, logger: ['error', 'warn'] });
  await app.init();
  const gateway = app.get(Gateway);
  const fastify = app.getHttpAdapter().getInstance();
  if (http2) servesHttp1Like(fastify.server as unknown as Http2SecureServer);
  parseHttp1InJavaScript(fastify.server as unknown as TlsServer);
  gateway.install(fastify);
  const host = options['bind-address'] === '0.0.0.0' ? '127.0.0.1' : options['bind-address'];
  const server = options['advertise-url'] || `https://${host.includes(':') ? `[${host}]` : host}:${options['secure-port']}`;
  // Written before the port opens: whoever sees the gateway ready finds them (npm start starts the
  // components on the first /readyz 200; before, a component could start before its kubeconfig existed).
  const kubeconfig = await gateway.writeAdminKubeconfig(server);
  if (options['write-component-kubeconfigs']) await gateway.writeComponentKubeconfigs(server);
  await app.listen(options['secure-port'], options['bind-address']);
  gateway.logger.info('serving', { server, storage: gateway.store.backend, kubeconfig });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.logger.info('shutting down', { signal });
    gateway.health.markShuttingDown();
    await new Promise((r) => setTimeout(r, options['shutdown-delay-duration']));
    const httpServer = app.getHttpServer() as { close(): void; closeAllConnections?: () => void };
    // New connections are refused before any watch ends (app.close ends them): a client whose
    // watch ends finds the server gone and waits for its return instead of backing off.
    httpServer.close();
    // HTTP/2 connections get a GOAWAY: they close once their streams have ended.
    for (const session of gateway.http2Sessions) session.close();
    // Other long-running requests (log follow, proxies) get a bounded time to finish.
    setTimeout(() => {
      gateway.logger.warn('requests still open after the shutdown grace period; closing their connections', { seconds: SHUTDOWN_GRACE_MS / 1000 });
      httpServer.closeAllConnections?.();
      for (const session of gateway.http2Sessions) session.destroy();
    }, SHUTDOWN_GRACE_MS).unref();
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * The HTTP/2 settings the gateway advertises: at most `maxStreams` concurrent streams per connection
 * (upstream --http2-max-streams-per-connection; 0 leaves Node's default).
 */
function http2Settings(maxStreams: number): Http2Settings {
  if (!Number.isInteger(maxStreams) || maxStreams < 0) throw new Error(`--http2-max-streams-per-connection must be 0 (Node's default) or more, not ${maxStreams}`);
  return maxStreams > 0 ? { maxConcurrentStreams: maxStreams } : {};
}

/**
 * Gives the HTTP/1.1 connections of an HTTP/2 server (allowHTTP1) the timeouts Fastify gives its
 * HTTP/1.1 server: an idle kept-alive connection closes after 72 s, a request's head and body may
 * take as long as they take (Node's http2 module sets no keep-alive timeout, and a 300 s request timeout).
 */
function servesHttp1Like(server: Http2SecureServer): void {
  const http1 = server as Http2SecureServer & { keepAliveTimeout?: number; requestTimeout?: number };
  http1.keepAliveTimeout = 72_000;
  http1.requestTimeout = 0;
}

main().catch((err) => {
  console.error(`gateway: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
