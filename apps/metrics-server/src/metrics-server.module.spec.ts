import 'reflect-metadata';
import { request } from 'node:https';
import { join } from 'node:path';
import { ensurePki, issueClientCert, type CertAndKey } from '@orch/auth';
import { startTestComponent, testComponentContext } from '@orch/component';
import { ApiPeer, eventually, freePort, removeDir, tempDir } from '@orch/testing';
import { MetricsServerModule } from './metrics-server.module';
import { METRICS_SERVER_FLAGS, metricsServerOptions, type MetricsServerComponent } from './options';

/** The metrics server's application on an API peer, started with `args` as main.ts starts it. */
async function start(peer: ApiPeer, args: string[]) {
  const component: MetricsServerComponent = testComponentContext('metrics-server', METRICS_SERVER_FLAGS, args, { server: peer.url });
  return { health: component.health, ...(await startTestComponent(component, MetricsServerModule.forRoot(metricsServerOptions(component)))) };
}

/** GET over HTTPS with an optional client certificate; resolves the status and the JSON body. */
function get(port: number, path: string, cert?: CertAndKey): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, rejectUnauthorized: false, cert: cert?.certPem, key: cert?.keyPem }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject).end();
  });
}

const summary = (cpuNanos: number) => ({ node: { cpu: { time: new Date().toISOString(), usageCoreNanoSeconds: cpuNanos }, memory: { workingSetBytes: 1024 * 1024 } }, pods: [] });

describe('MetricsServerModule', () => {
  let peer: ApiPeer;
  let dir: string;
  let alice: CertAndKey;
  let port: number;
  let scrapes = 0;
  beforeEach(async () => {
    dir = await tempDir('metrics-server-module');
    const pki = await ensurePki(join(dir, 'pki'));
    alice = await issueClientCert(pki, { cn: 'alice' });
    port = await freePort();
    peer = await ApiPeer.start();
    peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extension-apiserver-authentication', namespace: 'orch-system' }, data: { 'client-ca-file': pki.ca.certPem } });
    peer.put('/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { zone: 'a' } } });
    scrapes = 0;
    peer.intercept((req) => {
      // Node n1's summary: one core busy, a new point each scrape (one second apart on the counter).
      if (req.path === '/api/v1/nodes/n1/proxy/stats/summary') return { status: 200, body: summary(1e9 * ++scrapes) };
      if (req.method === 'POST' && req.path === '/apis/authorization.orch.io/v1/subjectaccessreviews') {
        const review = JSON.parse(req.body) as { spec: { user: string } };
        return { status: 201, body: { ...review, status: { allowed: review.spec.user === 'alice' } } };
      }
      return undefined;
    });
  });
  afterEach(async () => {
    await peer.stop();
    await removeDir(dir);
  });

  it('serves the metrics API it scrapes to callers the gateway authenticates and authorizes, until closed', async () => {
    const ms = await start(peer, [`--secure-port=${port}`, '--metric-resolution=200ms', `--cert-dir=${join(dir, 'certs')}`]);
    try {
      expect((await get(port, '/apis/metrics.k8s.io/v1beta1/nodes')).status).toBe(401);
      const nodes = await eventually('node metrics', async () => {
        const r = await get(port, '/apis/metrics.k8s.io/v1beta1/nodes', alice);
        return r.status === 200 && (r.body['items'] as unknown[]).length > 0 ? r.body : undefined;
      });
      expect(nodes['items']).toEqual([expect.objectContaining({ kind: 'NodeMetrics', metadata: expect.objectContaining({ name: 'n1', labels: { zone: 'a' } }), usage: { cpu: expect.stringMatching(/n$/), memory: '1024Ki' } })]);
      expect(ms.health.names('readyz')).toContain('metric-storage-ready');
      expect((await ms.health.handle('/readyz/metric-storage-ready')).status).toBe(200);
    } finally {
      await ms.stop();
    }
    await expect(get(port, '/apis/metrics.k8s.io/v1beta1/nodes', alice)).rejects.toThrow(/ECONNREFUSED/);
    const scraped = scrapes;
    await new Promise((r) => setTimeout(r, 500));
    expect(scrapes).toBe(scraped);
  });

  it('with --register creates the Service, Endpoints and APIService with its CA bundle', async () => {
    const ms = await start(peer, [`--secure-port=${port}`, '--register', '--advertise-address=127.0.0.1', `--cert-dir=${join(dir, 'certs')}`]);
    try {
      const api = peer.stored('apiregistration.orch.io/v1/apiservices').find((a) => a.metadata.name === 'v1beta1.metrics.orch.io');
      expect(api?.['spec']).toEqual(expect.objectContaining({ service: { namespace: 'orch-system', name: 'metrics-server', port: 443 }, caBundle: expect.any(String) }));
      const endpoints = peer.stored('/v1/endpoints').find((e) => e.metadata.name === 'metrics-server');
      expect(endpoints?.['subsets']).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }]);
      expect(peer.stored('/v1/services').map((s) => s.metadata.name)).toEqual(['metrics-server']);
    } finally {
      await ms.stop();
    }
  });

  it('fails to start when the authentication config map cannot be read', async () => {
    peer.remove('/v1/configmaps', 'orch-system', 'extension-apiserver-authentication');
    await expect(start(peer, [`--secure-port=${port}`, `--cert-dir=${join(dir, 'certs')}`])).rejects.toThrow(/not found/);
  });
});
