import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { selfSignedServingCert } from '@orch/auth';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlAsync } from './support/kubectl';
import { eventually } from './support/node-agent';

// API aggregation against a real gateway: an extension API server with its own CA, reached
// through an APIService and a Service's endpoints. The extension authenticates the gateway's
// front-proxy client certificate against the CA the gateway publishes in
// orch-system/extension-apiserver-authentication, reads the caller from X-Remote-* headers,
// and streams a watch slowly (proxied without buffering).

const GROUP = 'stream.example.com';

/** The extension's OpenAPI v3 document of its group version: what `kubectl explain ticks` reads through the gateway. */
const TICK_OPENAPI = {
  openapi: '3.0.0',
  info: { title: 'stream', version: 'v1' },
  // kubectl explain finds a resource's kind from its path's GET operation.
  paths: { [`/apis/${GROUP}/v1/ticks`]: { get: { 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': { group: GROUP, version: 'v1', kind: 'Tick' }, responses: { '200': { description: 'OK' } } } } },
  components: {
    schemas: {
      'com.example.stream.v1.Tick': {
        type: 'object',
        description: 'A Tick is one beat of the stream.',
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, user: { type: 'string', description: 'Who asked for the tick (X-Remote-User).' } },
        'x-kubernetes-group-version-kind': [{ group: GROUP, version: 'v1', kind: 'Tick' }],
      },
    },
  },
};

interface Seen {
  user?: string;
  groups: string[];
  verified: boolean;
  path: string;
}

describe('API aggregation', () => {
  let gw: GatewayProcess;
  let ext: Server;
  let caBundle: string;
  const seen: Seen[] = [];
  let proxyCa: X509Certificate | undefined;
  /** Resolved by the watch test when its client has the first event. */
  let clientHasFirstEvent: () => void = () => undefined;
  const firstEventReceived = new Promise<void>((resolve) => (clientHasFirstEvent = resolve));

  beforeAll(async () => {
    gw = await startGateway();
    const cm = (await gw.admin.get('/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication')).json;
    proxyCa = new X509Certificate(cm.data['requestheader-client-ca-file']);
    const allowed = JSON.parse(cm.data['requestheader-allowed-names']) as string[];
    const cert = await selfSignedServingCert(['127.0.0.1', 'localhost', `ext.default.svc`], 'extension');
    caBundle = Buffer.from(cert.caPem).toString('base64');
    ext = createServer({ cert: cert.certPem, key: cert.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
      const der = peer?.raw;
      let verified = false;
      if (der && proxyCa) {
        const c = new X509Certificate(der);
        verified = c.checkIssued(proxyCa) && c.verify(proxyCa.publicKey) && allowed.includes(c.subject.replace(/^CN=/, ''));
      }
      const groups = String(req.headers['x-remote-group'] ?? '')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      seen.push({ user: verified ? String(req.headers['x-remote-user']) : undefined, groups: verified ? groups : [], verified, path: req.url ?? '' });
      if (!verified) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' }));
      if (req.url === `/apis/${GROUP}/v1`) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${GROUP}/v1`, resources: [{ name: 'ticks', singularName: 'tick', namespaced: false, kind: 'Tick', verbs: ['get', 'list', 'watch'] }] }));
      }
      if (req.url === '/openapi/v3') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ paths: { [`apis/${GROUP}/v1`]: { serverRelativeURL: `/openapi/v3/apis/${GROUP}/v1?hash=EXT1` }, 'apis/other.example.com/v1': { serverRelativeURL: '/openapi/v3/apis/other.example.com/v1' } } }));
      }
      if (req.url === `/openapi/v3/apis/${GROUP}/v1?hash=EXT1`) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(TICK_OPENAPI));
      }
      if (req.url?.startsWith(`/apis/${GROUP}/v1/ticks`) && req.url.includes('watch=')) {
        // t0, then t1 and t2 only once the client holds t0: a proxy that buffered would never deliver.
        res.writeHead(200, { 'content-type': 'application/json' });
        const tick = (n: number) => res.write(JSON.stringify({ type: 'ADDED', object: { apiVersion: `${GROUP}/v1`, kind: 'Tick', metadata: { name: `t${n}` }, user: req.headers['x-remote-user'] } }) + '\n');
        tick(0);
        void firstEventReceived.then(() => {
          tick(1);
          tick(2);
          res.end();
        });
        return;
      }
      if (req.url?.startsWith(`/apis/${GROUP}/v1/ticks`)) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'TickList', apiVersion: `${GROUP}/v1`, metadata: {}, items: [], user: req.headers['x-remote-user'], groups }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => ext.listen(0, '127.0.0.1', resolve));
    const port = (ext.address() as AddressInfo).port;
    // A Service without selector and its Endpoints: the extension runs outside the cluster's pods.
    expect((await gw.admin.post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } })).status).toBe(201);
    expect((await gw.admin.post('/api/v1/namespaces/default/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] })).status).toBe(201);
    const created = await gw.admin.post('/apis/apiregistration.orch.io/v1/apiservices', {
      apiVersion: 'apiregistration.orch.io/v1',
      kind: 'APIService',
      metadata: { name: `v1.${GROUP}` },
      spec: { group: GROUP, version: 'v1', service: { namespace: 'default', name: 'ext', port: 443 }, caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    });
    expect(created.status).toBe(201);
  });
  /** Stock kubectl without blocking this process (the extension server answers from it). */
  const kubectl = (...args: string[]) => kubectlAsync({ kubeconfig: gw.kubeconfig, cacheDir: join(gw.dataDir, 'kubectl-cache') }, args);
  afterAll(async () => {
    ext?.close();
    ext?.closeAllConnections();
    await gw?.stop();
  });

  /** The Available condition of an APIService once its status is `want` (and its reason `reason`, when given). */
  const available = (want: string, reason?: string, name = `v1.${GROUP}`) =>
    eventually(`APIService ${name} Available=${want}`, async () => {
      const cond = (await gw.admin.get(`/apis/apiregistration.orch.io/v1/apiservices/${name}`)).json.status?.conditions?.find((c: { type: string }) => c.type === 'Available');
      return cond?.status === want && (!reason || cond.reason === reason) ? (cond as { status: string; reason: string; message: string }) : undefined;
    });

  it('checks the extension and reports it Available; its group joins discovery', async () => {
    expect(await available('True')).toMatchObject({ status: 'True', reason: 'Passed' });
    const groups = (await gw.admin.get('/apis')).json.groups.map((g: { name: string }) => g.name);
    expect(groups).toContain(GROUP);
    const aggregated = (await gw.admin.get('/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json;
    const entry = aggregated.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP);
    expect(entry.versions[0].resources.map((r: { resource: string }) => r.resource)).toEqual(['ticks']);
    expect(seen.every((s) => s.verified)).toBe(true);
  });

  it("merges the extension's OpenAPI v3 document of its group version: kubectl explain works on the aggregated resource", async () => {
    const index = await eventually('the aggregated document in /openapi/v3', async () => {
      const paths = (await gw.admin.get('/openapi/v3')).json.paths;
      return paths[`apis/${GROUP}/v1`] ? paths : undefined;
    });
    expect(index['apis/other.example.com/v1']).toBeUndefined(); // not the APIService's group version
    const doc = await gw.admin.get(index[`apis/${GROUP}/v1`].serverRelativeURL);
    expect(doc.json).toEqual(TICK_OPENAPI);
    expect(seen.filter((s) => s.path.startsWith('/openapi/v3')).every((s) => s.user === 'system:kube-aggregator')).toBe(true);
    const explain = await kubectl('explain', `ticks.${GROUP}`);
    expect(explain.err).toBe('');
    expect(explain.out).toMatch(/KIND:\s+Tick/);
    expect(explain.out).toContain('A Tick is one beat of the stream.');
    expect((await kubectl('explain', `ticks.${GROUP}.user`)).out).toContain('Who asked for the tick (X-Remote-User).');
  });

  it('authorizes at the gateway first, then forwards the caller (after impersonation) in the identity headers', async () => {
    const asAdmin = await gw.admin.get(`/apis/${GROUP}/v1/ticks`);
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.json).toMatchObject({ user: 'admin', groups: expect.arrayContaining(['system:masters', 'system:authenticated']) });
    const alice = { headers: { 'impersonate-user': 'alice', 'impersonate-group': 'dev' } };
    const proxied = seen.length;
    expect((await gw.admin.get(`/apis/${GROUP}/v1/ticks`, alice)).status).toBe(403);
    expect(seen.length).toBe(proxied); // refused by the gateway's RBAC: never reached the extension
    expect((await gw.admin.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'tick-reader' }, rules: [{ apiGroups: [GROUP], resources: ['ticks'], verbs: ['list'] }] })).status).toBe(201);
    expect((await gw.admin.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { metadata: { name: 'tick-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'tick-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }] })).status).toBe(201);
    const asAlice = await eventually('the binding reaches the authorizer', async () => {
      const r = await gw.admin.get(`/apis/${GROUP}/v1/ticks`, alice);
      return r.status === 403 ? undefined : r;
    });
    expect(asAlice.json).toMatchObject({ user: 'alice', groups: expect.arrayContaining(['dev', 'system:authenticated']) });
    expect(asAlice.json.groups).not.toContain('system:masters');
  });

  it('streams a proxied watch as it comes, without buffering', async () => {
    const r = await gw.admin.watch(
      `/apis/${GROUP}/v1/ticks?watch=true`,
      (events) => {
        if (events.length >= 1) clientHasFirstEvent();
        return events.length >= 3;
      },
      20_000,
    );
    expect(r.status).toBe(200);
    expect(r.events.map((e) => e.object.metadata.name)).toEqual(['t0', 't1', 't2']);
    expect(r.events[0].object.user).toBe('admin');
  });

  it('verifies the extension against the caBundle: a wrong CA makes it unavailable (503), insecureSkipTLSVerify ignores it', async () => {
    const other = await selfSignedServingCert(['127.0.0.1'], 'other');
    const path = `/apis/apiregistration.orch.io/v1/apiservices/v1.${GROUP}`;
    const patch = (spec: Record<string, unknown>) => gw.admin.patch(path, { spec }, 'application/merge-patch+json');
    expect((await patch({ caBundle: Buffer.from(other.caPem).toString('base64') })).status).toBe(200);
    expect(await available('False')).toMatchObject({ status: 'False', reason: 'FailedDiscoveryCheck' });
    expect((await gw.admin.get(`/apis/${GROUP}/v1/ticks`)).status).toBe(503);
    expect((await patch({ caBundle: null, insecureSkipTLSVerify: true })).status).toBe(200);
    expect(await available('True')).toMatchObject({ status: 'True' });
    expect((await gw.admin.get(`/apis/${GROUP}/v1/ticks`)).status).toBe(200);
  });

  it('orders discovery by groupPriorityMinimum: raised above the built-in groups (18000), the extension is listed first', async () => {
    const before = (await gw.admin.get('/apis')).json.groups.map((g: { name: string }) => g.name);
    expect(before.indexOf(GROUP)).toBeGreaterThan(before.indexOf('apps'));
    const path = `/apis/apiregistration.orch.io/v1/apiservices/v1.${GROUP}`;
    expect((await gw.admin.patch(path, { spec: { groupPriorityMinimum: 20000 } }, 'application/merge-patch+json')).status).toBe(200);
    await eventually('the extension first in /apis', async () => ((await gw.admin.get('/apis')).json.groups[0].name === GROUP ? true : undefined));
    const aggregated = (await gw.admin.get('/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json;
    expect(aggregated.items[0].metadata.name).toBe(GROUP);
  });

  it.each<{ name: string; setup: () => Promise<unknown>; reason: string }>([
    { name: 'no such Service', setup: async () => undefined, reason: 'ServiceNotFound' },
    { name: 'a Service without that port', setup: () => gw.admin.post('/api/v1/namespaces/default/services', { metadata: { name: 'lost' }, spec: { ports: [{ port: 8443 }] } }), reason: 'ServicePortError' },
    { name: 'a Service without endpoints', setup: () => gw.admin.patch('/api/v1/namespaces/default/services/lost', { spec: { ports: [{ port: 443 }] } }, 'application/merge-patch+json'), reason: 'MissingEndpoints' },
  ])('reports why an extension is unavailable: $name', async ({ setup, reason }) => {
    await setup();
    const name = 'v1.lost.example.com';
    const spec = { group: 'lost.example.com', version: 'v1', service: { namespace: 'default', name: 'lost', port: 443 }, insecureSkipTLSVerify: true, groupPriorityMinimum: 1000, versionPriority: 15 };
    await gw.admin.delete(`/apis/apiregistration.orch.io/v1/apiservices/${name}`);
    expect((await gw.admin.post('/apis/apiregistration.orch.io/v1/apiservices', { metadata: { name }, spec })).status).toBe(201);
    expect(await available('False', reason, name)).toMatchObject({ status: 'False', reason });
    const r = await gw.admin.get('/apis/lost.example.com/v1/things');
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ kind: 'Status', code: 503, reason: 'ServiceUnavailable' });
  });

  it('an unavailable APIService stays in discovery (legacy lists it, aggregated marks it Stale); kubectl api-resources prints the rest', async () => {
    const groups = (await gw.admin.get('/apis')).json.groups.map((g: { name: string }) => g.name);
    expect(groups).toContain('lost.example.com');
    const aggregated = (await gw.admin.get('/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json;
    expect(aggregated.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'lost.example.com').versions).toEqual([{ version: 'v1', freshness: 'Stale', resources: [] }]);
    // kubectl 1.32 reads aggregated discovery and leaves a Stale group version out (measured: no
    // warning, exit 0), printing the rest; legacy clients see the group and a 503 for its version.
    const r = await kubectl('api-resources', '--no-headers');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
    expect(r.out).toMatch(/^ticks\s+stream\.example\.com\/v1\s+false\s+Tick$/m);
    expect(r.out).not.toContain('lost.example.com');
    expect((await gw.admin.get('/apis/lost.example.com')).json).toMatchObject({ kind: 'APIGroup', preferredVersion: { groupVersion: 'lost.example.com/v1' } });
    const raw = await kubectl('get', '--raw', '/apis/lost.example.com/v1');
    expect(raw.code).toBe(1);
    expect(raw.err).toContain('Error from server (ServiceUnavailable)');
  });

  it('an APIService deleted stops the proxying and leaves discovery', async () => {
    expect((await gw.admin.delete(`/apis/apiregistration.orch.io/v1/apiservices/v1.${GROUP}`)).status).toBe(200);
    await eventually('the group leaves discovery', async () => {
      const groups = (await gw.admin.get('/apis')).json.groups.map((g: { name: string }) => g.name);
      return groups.includes(GROUP) ? undefined : true;
    });
    expect((await gw.admin.get(`/apis/${GROUP}/v1/ticks`)).status).toBe(404);
  });
});
