import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { StatusError } from '@orch/apimachinery';
import { selfSignedServingCert, writeAtomic } from '@orch/auth';
import { RestClient } from '@orch/client';
import { COMPONENT_CONTEXT, clientConfigFrom } from '@orch/component';
import { MetricsApi } from './api';
import { METRICS_SERVER_OPTIONS, NAME, NAMESPACE, type MetricsServerComponent, type MetricsServerOptions } from './options';
import { registerMetricsApi } from './registration';
import { Scraper } from './scraper';

/** The serving certificate and the CA the gateway checks it with. */
export interface ServingCert {
  cert: string;
  key: string;
  ca: string;
}

/** Nest injection token of the {@link ServingCert}. */
export const SERVING_CERT = Symbol('ServingCert');

/** The serving certificate: the given files, else one issued by a CA of its own kept in the cert directory (created on first start). */
export async function servingCert(options: MetricsServerOptions): Promise<ServingCert> {
  const { certFile, keyFile, certDir } = options.tls;
  if (certFile) {
    const cert = await readFile(certFile, 'utf8');
    return { cert, key: await readFile(keyFile, 'utf8'), ca: cert };
  }
  const dir = certDir || join(process.env.ORCH_DATA_DIR || '.orch', NAME);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    return { cert: await readFile(join(dir, 'tls.crt'), 'utf8'), key: await readFile(join(dir, 'tls.key'), 'utf8'), ca: await readFile(join(dir, 'ca.crt'), 'utf8') };
  } catch {
    const hosts = [options.advertiseAddress, '127.0.0.1', 'localhost', `${NAME}.${NAMESPACE}.svc`];
    const issued = await selfSignedServingCert(hosts, NAME);
    await writeAtomic(join(dir, 'tls.key'), issued.keyPem, 0o600);
    await writeAtomic(join(dir, 'tls.crt'), issued.certPem, 0o644);
    await writeAtomic(join(dir, 'ca.crt'), issued.caPem, 0o644);
    return { cert: issued.certPem, key: issued.keyPem, ca: issued.caPem };
  }
}

/**
 * The metrics API's HTTPS server. At bootstrap it listens (client certificates asked for but
 * checked per request: front proxy or client CA), adds the `metric-storage-ready` readiness
 * check (ready once a scrape produced figures) and, with `--register`, registers the API with
 * the gateway; at shutdown it closes.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly server: Server;

  constructor(
    @Inject(COMPONENT_CONTEXT) private readonly component: MetricsServerComponent,
    @Inject(METRICS_SERVER_OPTIONS) private readonly options: MetricsServerOptions,
    @Inject(SERVING_CERT) private readonly tls: ServingCert,
    @Inject(MetricsApi) api: MetricsApi,
    @Inject(Scraper) private readonly scraper: Scraper,
  ) {
    this.server = createServer({ cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: false }, (req, res) => void api.handle(req, res));
  }

  async onApplicationBootstrap(): Promise<void> {
    const { bindAddress, port } = this.options;
    await new Promise<void>((resolve, reject) => this.server.once('error', reject).listen(port, bindAddress, resolve));
    this.component.health.add(
      'metric-storage-ready',
      () => {
        if (this.scraper.nodeMetrics().length === 0) throw new StatusError(503, 'ServiceUnavailable', 'no metrics scraped yet');
      },
      { endpoints: ['readyz'] },
    );
    this.component.logger.info('serving the metrics API', { address: `https://${bindAddress}:${port}` });
    if (this.options.registration) await this.register(this.options.registration.kubeconfig);
  }

  private async register(kubeconfig: string): Promise<void> {
    const own = this.component.client;
    const registrar = kubeconfig ? new RestClient(await clientConfigFrom(kubeconfig), { component: NAME }) : own;
    try {
      await registerMetricsApi(registrar, this.options.advertiseAddress, this.options.port, this.tls.ca, this.component.logger);
    } finally {
      if (registrar !== own) registrar.close();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
