import 'reflect-metadata';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { selfSignedServingCert, writeAtomic } from '@orch/auth';
import { ApiError, RestClient } from '@orch/client';
import { clientConfigFrom, runComponent, type ComponentContext } from '@orch/component';
import type { FlagDefs, Logger } from '@orch/server-common';
import { MetricsApi, METRICS_VERSION } from './api';
import { RequestAuthenticator, authenticationConfigFrom } from './authentication';
import { Scraper } from './scraper';

const FLAGS = {
  'cert-dir': { type: 'string', default: '', description: 'Directory for the serving certificate and its CA (tls.crt, tls.key, ca.crt), created when missing. Ignored with --tls-cert-file.' },
  'tls-cert-file': { type: 'string', default: '', description: 'Serving certificate (PEM).' },
  'tls-private-key-file': { type: 'string', default: '', description: 'Key of --tls-cert-file (PEM).' },
  'healthz-port': { type: 'int', default: 0, description: 'Plain HTTP port for /healthz, /livez, /readyz and /metrics (0: any free port).' },
  'metric-resolution': { type: 'duration', default: 15_000, description: 'How often the node agents are scraped.' },
  register: { type: 'bool', default: false, description: 'Register this server with the gateway: the orch-system/metrics-server Service and Endpoints (--advertise-address:--secure-port) and the APIService v1beta1.metrics.orch.io with its CA bundle.' },
  'registration-kubeconfig': { type: 'string', default: '', description: 'Credentials for --register (an administrator\'s: the server\'s own identity may not create APIServices); default --kubeconfig.' },
  'advertise-address': { type: 'string', default: '', description: 'Address the gateway reaches this server on (default: --bind-address).' },
} satisfies FlagDefs;

const NAMESPACE = 'orch-system';
const NAME = 'metrics-server';
const DEFAULT_API_PORT = 4443;
const AUTHENTICATION_CONFIGMAP = `/api/v1/namespaces/${NAMESPACE}/configmaps/extension-apiserver-authentication`;
const RELOAD_AUTHENTICATION_MS = 60_000;

/** The serving certificate: the given files, else one issued by a CA of its own kept in --cert-dir. */
async function servingCert(flags: { 'cert-dir': string; 'tls-cert-file': string; 'tls-private-key-file': string }, hosts: string[]): Promise<{ cert: string; key: string; ca: string }> {
  if (flags['tls-cert-file']) {
    const cert = await readFile(flags['tls-cert-file'], 'utf8');
    return { cert, key: await readFile(flags['tls-private-key-file'], 'utf8'), ca: cert };
  }
  const dir = flags['cert-dir'] || join(process.env.ORCH_DATA_DIR || '.orch', 'metrics-server');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    return { cert: await readFile(join(dir, 'tls.crt'), 'utf8'), key: await readFile(join(dir, 'tls.key'), 'utf8'), ca: await readFile(join(dir, 'ca.crt'), 'utf8') };
  } catch {
    const issued = await selfSignedServingCert(hosts, 'metrics-server');
    await writeAtomic(join(dir, 'tls.key'), issued.keyPem, 0o600);
    await writeAtomic(join(dir, 'tls.crt'), issued.certPem, 0o644);
    await writeAtomic(join(dir, 'ca.crt'), issued.caPem, 0o644);
    return { cert: issued.certPem, key: issued.keyPem, ca: issued.caPem };
  }
}

async function loadAuthenticator(client: RestClient): Promise<RequestAuthenticator> {
  const cm = await client.request<{ data?: Record<string, string> }>({ method: 'GET', path: AUTHENTICATION_CONFIGMAP });
  return new RequestAuthenticator(authenticationConfigFrom(cm.data ?? {}));
}

/** Creates or updates one object (PUT with the current resourceVersion when it exists). */
async function ensure(client: RestClient, collection: string, obj: KubeObject): Promise<void> {
  const path = `${collection}/${obj.metadata.name}`;
  try {
    const current = await client.request<KubeObject>({ method: 'GET', path });
    await client.request({ method: 'PUT', path, body: { ...current, ...obj, metadata: { ...current.metadata, ...obj.metadata } } });
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404)) throw err;
    await client.request({ method: 'POST', path: collection, body: obj });
  }
}

/** The Service, Endpoints and APIService that make the gateway proxy the metrics API here. */
async function register(client: RestClient, address: string, port: number, caPem: string, logger: Logger): Promise<void> {
  const labels = { 'app.orch.io/name': NAME };
  await ensure(client, `/api/v1/namespaces/${NAMESPACE}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: NAME, namespace: NAMESPACE, labels }, spec: { ports: [{ name: 'https', port: 443, targetPort: port, protocol: 'TCP' }] } } as KubeObject);
  await ensure(client, `/api/v1/namespaces/${NAMESPACE}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: NAME, namespace: NAMESPACE, labels }, subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }] } as KubeObject);
  await ensure(client, '/apis/apiregistration.orch.io/v1/apiservices', {
    apiVersion: 'apiregistration.orch.io/v1',
    kind: 'APIService',
    metadata: { name: `${METRICS_VERSION}.metrics.orch.io`, labels },
    spec: { service: { namespace: NAMESPACE, name: NAME, port: 443 }, group: 'metrics.orch.io', version: METRICS_VERSION, caBundle: Buffer.from(caPem).toString('base64'), groupPriorityMinimum: 100, versionPriority: 100 },
  } as KubeObject);
  logger.info('registered the metrics API', { apiService: `${METRICS_VERSION}.metrics.orch.io`, endpoint: `${address}:${port}` });
}

void runComponent({
  name: NAME,
  description: 'The orch metrics server: the resource metrics API (metrics.orch.io/v1beta1, also metrics.k8s.io/v1beta1 for kubectl top) from the node agents\' /stats/summary, served through the gateway as an aggregated API.',
  defaultPort: DEFAULT_API_PORT,
  flags: FLAGS,
  leaderElection: false,
  healthServer: (flags) => ({ host: flags['bind-address'], port: flags['healthz-port'], tls: false }),
  async run(ctx: ComponentContext<typeof FLAGS>, signal: AbortSignal) {
    const f = ctx.flags;
    const port = f['secure-port'] || DEFAULT_API_PORT;
    const address = f['advertise-address'] || f['bind-address'];
    const tls = await servingCert(f, [address, '127.0.0.1', 'localhost', `${NAME}.${NAMESPACE}.svc`]);
    let authenticator = await loadAuthenticator(ctx.client);
    const reload = setInterval(() => {
      loadAuthenticator(ctx.client).then(
        (a) => (authenticator = a),
        (err: unknown) => ctx.logger.warn('reloading the authentication config map failed', { error: (err as Error).message }),
      );
    }, RELOAD_AUTHENTICATION_MS);
    const scraper = new Scraper(ctx.client, f['metric-resolution'], ctx.logger);
    scraper.start();
    const api = new MetricsApi({ authenticator: () => authenticator, scraper, client: ctx.client, logger: ctx.logger });
    // Client certificates are asked for but checked per request (front proxy or client CA).
    const server = createServer({ cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: false }, (req, res) => void api.handle(req, res));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, f['bind-address'], resolve));
    ctx.health.add('metric-storage-ready', () => {
      if (scraper.nodeMetrics().length === 0) throw new StatusError(503, 'ServiceUnavailable', 'no metrics scraped yet');
    }, { endpoints: ['readyz'] });
    ctx.logger.info('serving the metrics API', { address: `https://${f['bind-address']}:${port}` });
    if (f.register) {
      const registrar = f['registration-kubeconfig'] ? new RestClient(await clientConfigFrom(f['registration-kubeconfig']), { component: NAME }) : ctx.client;
      try {
        await register(registrar, address, port, tls.ca, ctx.logger);
      } finally {
        if (registrar !== ctx.client) registrar.close();
      }
    }
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    clearInterval(reload);
    scraper.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  },
});
