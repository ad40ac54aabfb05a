import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { BUILTIN_RESOURCES, type ResourceDef } from '@orch/api';
import { ApiError, RequestTimeoutError, isAlreadyExists, isConflict, isGone, isNotFound, isTooManyRequests } from './errors';
import { RestClient, type ResourceClient } from './rest';
import { ApiPeer } from '@orch/testing';
import { makeTestPki } from './testing/pki';
import { waitFor } from '@orch/testing';
import type { KubeObject, WatchEvent } from '@orch/apimachinery';

const def = (group: string, resource: string): ResourceDef => {
  const d = BUILTIN_RESOURCES.find((r) => r.group === group && r.resource === resource);
  if (!d) throw new Error(`no ${group}/${resource} in catalog`);
  return d;
};
const pods = def('', 'pods');
const nodes = def('', 'nodes');
const deployments = def('apps', 'deployments');
/** A Pod with the given metadata and extra top-level fields. */
const podObj = (metadata: KubeObject['metadata'], extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata, ...extra });

describe('ResourceClient paths', () => {
  const client = new RestClient({ server: 'http://127.0.0.1:1' }, { component: 'test' });
  afterAll(() => client.close());

  it.each([
    { name: 'core namespaced item', make: () => client.resource(pods, 'default').itemPath('p'), want: '/api/v1/namespaces/default/pods/p' },
    { name: 'core namespaced collection', make: () => client.resource(pods, 'ns1').collectionPath(), want: '/api/v1/namespaces/ns1/pods' },
    { name: 'core all namespaces', make: () => client.resource(pods).collectionPath(), want: '/api/v1/pods' },
    { name: 'core cluster item', make: () => client.resource(nodes).itemPath('n1'), want: '/api/v1/nodes/n1' },
    { name: 'named group namespaced item', make: () => client.resource(deployments, 'ns').itemPath('d'), want: '/apis/apps/v1/namespaces/ns/deployments/d' },
    { name: 'subresource', make: () => client.resource(deployments, 'ns').itemPath('d', 'scale'), want: '/apis/apps/v1/namespaces/ns/deployments/d/scale' },
    { name: 'gvr found in catalog', make: () => client.resource({ group: 'coordination.orch.io', version: 'v1', resource: 'leases' }, 'kube').itemPath('l'), want: '/apis/coordination.orch.io/v1/namespaces/kube/leases/l' },
    { name: 'cluster gvr found in catalog', make: () => client.resource({ group: 'rbac.authorization.orch.io', version: 'v1', resource: 'clusterroles' }).itemPath('admin'), want: '/apis/rbac.authorization.orch.io/v1/clusterroles/admin' },
    { name: 'custom resource with namespace', make: () => client.resource({ group: 'example.com', version: 'v1', resource: 'widgets' }, 'ns').itemPath('w'), want: '/apis/example.com/v1/namespaces/ns/widgets/w' },
    { name: 'custom resource without namespace', make: () => client.resource({ group: 'example.com', version: 'v1', resource: 'gadgets' }).itemPath('g'), want: '/apis/example.com/v1/gadgets/g' },
    { name: 'escaped name', make: () => client.resource(nodes).itemPath('a b'), want: '/api/v1/nodes/a%20b' },
    { name: 'inNamespace', make: () => client.resource(pods).inNamespace('x').itemPath('p'), want: '/api/v1/namespaces/x/pods/p' },
  ])('$name', ({ make, want }) => {
    expect(make()).toBe(want);
  });

  it.each([
    { name: 'namespace on cluster-scoped', make: () => client.resource(nodes, 'ns'), want: /cluster-scoped/ },
    { name: 'namespaced item without namespace', make: () => client.resource(pods).itemPath('p'), want: /namespace is required/ },
    { name: 'empty name', make: () => client.resource(nodes).itemPath(''), want: /name is required/ },
    { name: 'bad scheme', make: () => new RestClient({ server: 'ftp://x' }, { component: 't' }), want: /unsupported server URL/ },
  ])('rejects $name', ({ make, want }) => {
    expect(make).toThrow(want);
  });
});

describe('RestClient against a wire peer', () => {
  let peer: ApiPeer;
  let client: RestClient;
  let podsIn: ResourceClient;

  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url, token: 'secret-token' }, { component: 'tester', timeoutMs: 2000 });
    podsIn = client.resource(pods, 'default');
    await podsIn.create(podObj({ name: 'existing', labels: { app: 'a' } }));
    peer.requests.length = 0;
  });
  afterEach(async () => {
    client.close();
    await peer.stop();
  });

  // Each row: one call, and the request it must put on the wire.
  it.each([
    { name: 'get', call: (c: ResourceClient) => c.get('existing'), want: { method: 'GET', path: '/api/v1/namespaces/default/pods/existing', query: {} } },
    {
      name: 'list with every option',
      call: (c: ResourceClient) => c.list({ labelSelector: 'app=a', fieldSelector: 'metadata.name=existing', limit: 5, resourceVersion: '1', resourceVersionMatch: 'NotOlderThan' }),
      want: { method: 'GET', path: '/api/v1/namespaces/default/pods', query: { labelSelector: 'app=a', fieldSelector: 'metadata.name=existing', limit: '5', resourceVersion: '1', resourceVersionMatch: 'NotOlderThan' } },
    },
    {
      name: 'create dry-run with field manager',
      call: (c: ResourceClient) => c.create(podObj({ name: 'new' }), { dryRun: true, fieldManager: 'me' }),
      want: { method: 'POST', path: '/api/v1/namespaces/default/pods', query: { dryRun: 'All', fieldManager: 'me' }, contentType: 'application/json', body: podObj({ name: 'new' }) },
    },
    {
      name: 'update',
      call: (c: ResourceClient) => c.update(podObj({ name: 'existing' }, { spec: { x: 1 } })),
      want: { method: 'PUT', path: '/api/v1/namespaces/default/pods/existing', query: {}, contentType: 'application/json' },
    },
    {
      name: 'updateStatus',
      call: (c: ResourceClient) => c.updateStatus(podObj({ name: 'existing' }, { status: { phase: 'Running' } })),
      want: { method: 'PUT', path: '/api/v1/namespaces/default/pods/existing/status', query: {} },
    },
    {
      name: 'merge patch',
      call: (c: ResourceClient) => c.patch('existing', 'merge', { metadata: { labels: { b: '1' } } }),
      want: { method: 'PATCH', path: '/api/v1/namespaces/default/pods/existing', query: {}, contentType: 'application/merge-patch+json', body: { metadata: { labels: { b: '1' } } } },
    },
    {
      name: 'json patch',
      call: (c: ResourceClient) => c.patch('existing', 'json', [{ op: 'add', path: '/metadata/labels/c', value: '2' }]),
      want: { method: 'PATCH', path: '/api/v1/namespaces/default/pods/existing', query: {}, contentType: 'application/json-patch+json' },
    },
    {
      name: 'strategic patch on status subresource',
      call: (c: ResourceClient) => c.patch('existing', 'strategic', { status: { phase: 'x' } }, { subresource: 'status' }),
      want: { method: 'PATCH', path: '/api/v1/namespaces/default/pods/existing/status', query: {}, contentType: 'application/strategic-merge-patch+json' },
    },
    {
      name: 'apply with force',
      call: (c: ResourceClient) => c.patch('applied', 'apply', { apiVersion: 'v1', kind: 'Pod' }, { fieldManager: 'ctl', force: true }),
      want: { method: 'PATCH', path: '/api/v1/namespaces/default/pods/applied', query: { fieldManager: 'ctl', force: 'true' }, contentType: 'application/apply-patch+yaml' },
    },
    {
      name: 'delete with options',
      call: (c: ResourceClient) => c.delete('existing', { propagationPolicy: 'Foreground', gracePeriodSeconds: 0 }),
      want: { method: 'DELETE', path: '/api/v1/namespaces/default/pods/existing', query: {}, body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground', gracePeriodSeconds: 0 } },
    },
    {
      name: 'deleteCollection',
      call: (c: ResourceClient) => c.deleteCollection({ labelSelector: 'app=a', propagationPolicy: 'Background' }),
      want: { method: 'DELETE', path: '/api/v1/namespaces/default/pods', query: { labelSelector: 'app=a' }, body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } },
    },
    {
      name: 'binding subresource',
      call: (c: ResourceClient) => c.createSubresource('existing', 'binding', { target: { kind: 'Node', name: 'n1' } }),
      want: { method: 'POST', path: '/api/v1/namespaces/default/pods/existing/binding', query: {}, body: { target: { kind: 'Node', name: 'n1' } } },
    },
    {
      name: 'eviction subresource',
      call: (c: ResourceClient) => c.createSubresource('existing', 'eviction', { kind: 'Eviction', apiVersion: 'policy/v1' }),
      want: { method: 'POST', path: '/api/v1/namespaces/default/pods/existing/eviction', query: {} },
    },
    { name: 'get subresource', call: (c: ResourceClient) => c.getSubresource('existing', 'status'), want: { method: 'GET', path: '/api/v1/namespaces/default/pods/existing/status', query: {} } },
  ])('$name', async ({ call, want }) => {
    await call(podsIn);
    expect(peer.requests).toHaveLength(1);
    const r = peer.requests[0];
    expect({ method: r.method, path: r.path, query: Object.fromEntries(r.query) }).toEqual({ method: want.method, path: want.path, query: want.query });
    if ('contentType' in want) expect(r.headers['content-type']).toBe(want.contentType);
    if ('body' in want) expect(JSON.parse(r.body)).toEqual(want.body);
    expect(r.headers['user-agent']).toBe('orch-tester/v1.32.0');
    expect(r.headers['authorization']).toBe('Bearer secret-token');
    expect(r.headers['accept']).toBe('application/json');
  });

  it('returns parsed objects and lists', async () => {
    const got = await podsIn.get('existing');
    expect(got.metadata).toMatchObject({ name: 'existing', namespace: 'default', labels: { app: 'a' } });
    const list = await podsIn.list();
    expect(list.items.map((p) => p.metadata.name)).toEqual(['existing']);
    expect(list.metadata.resourceVersion).toBe(peer.resourceVersion);
  });

  it('creates in the object namespace when the client has none', async () => {
    await client.resource(pods).create(podObj({ name: 'q', namespace: 'other' }));
    expect(peer.requests[0].path).toBe('/api/v1/namespaces/other/pods');
  });

  it('rejects an apply patch without field manager before sending', () => {
    expect(() => podsIn.patch('x', 'apply', {})).toThrow(/fieldManager/);
    expect(peer.requests).toHaveLength(0);
  });

  // Error classification: status code and reason → helpers.
  it.each([
    { name: '404 Status', status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound', message: 'pods "x" not found' }, want: { notFound: true, conflict: false, exists: false, gone: false, tooMany: false, message: 'pods "x" not found' } },
    { name: '409 Conflict', status: 409, body: { kind: 'Status', code: 409, reason: 'Conflict', message: 'modified' }, want: { notFound: false, conflict: true, exists: false, gone: false, tooMany: false, message: 'modified' } },
    { name: '409 AlreadyExists', status: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'exists' }, want: { notFound: false, conflict: false, exists: true, gone: false, tooMany: false, message: 'exists' } },
    { name: '410 Expired', status: 410, body: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }, want: { notFound: false, conflict: false, exists: false, gone: true, tooMany: false, message: 'too old' } },
    { name: '429 with Retry-After', status: 429, body: { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }, headers: { 'Retry-After': '3' }, want: { notFound: false, conflict: false, exists: false, gone: false, tooMany: true, message: 'slow down', retry: 3 } },
    { name: 'non-Status body', status: 404, body: 'plain text', want: { notFound: true, conflict: false, exists: false, gone: false, tooMany: false, message: '"plain text"' } },
    { name: 'empty 503', status: 503, body: undefined, want: { notFound: false, conflict: false, exists: false, gone: false, tooMany: false, message: 'the server responded with HTTP 503' } },
  ])('maps $name', async ({ status, body, headers, want }) => {
    peer.intercept(() => ({ status, body, headers }));
    const err = await podsIn.get('x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.code).toBe(status);
    expect({ notFound: isNotFound(e), conflict: isConflict(e), exists: isAlreadyExists(e), gone: isGone(e), tooMany: isTooManyRequests(e), message: e.message }).toEqual({
      notFound: want.notFound,
      conflict: want.conflict,
      exists: want.exists,
      gone: want.gone,
      tooMany: want.tooMany,
      message: want.message,
    });
    if ('retry' in want) expect(e.retryAfterSeconds).toBe(want.retry);
  });

  it('times out a request that gets no answer', async () => {
    peer.intercept(() => ({ status: 0, hang: true }));
    const quick = new RestClient({ server: peer.url }, { component: 't', timeoutMs: 50 });
    await expect(quick.resource(pods, 'default').get('x')).rejects.toBeInstanceOf(RequestTimeoutError);
    quick.close();
  });

  it('aborts a request on signal', async () => {
    peer.intercept(() => ({ status: 0, hang: true }));
    const ac = new AbortController();
    const p = podsIn.list({}, ac.signal);
    ac.abort(new Error('stop now'));
    await expect(p).rejects.toThrow('stop now');
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    for (let i = 0; i < 5; i++) await podsIn.get('existing');
    expect(new Set(peer.requests.map((r) => r.remotePort)).size).toBe(1);
    expect(peer.requests[0].headers['connection']).toBe('keep-alive');
  });
});

describe('watch', () => {
  let peer: ApiPeer;
  let client: RestClient;
  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url }, { component: 'tester' });
  });
  afterEach(async () => {
    client.close();
    await peer.stop();
  });

  const collect = (c: ResourceClient, opts = {}) => {
    const events: WatchEvent<KubeObject>[] = [];
    const errors: Error[] = [];
    let closes = 0;
    const handle = c.watch(opts, { onEvent: (e) => events.push(e), onError: (e) => errors.push(e), onClose: () => closes++ });
    return { events, errors, handle, closes: () => closes };
  };

  const ev = (type: string, name: string, note = '') => JSON.stringify({ type, object: { metadata: { name, namespace: 'd', resourceVersion: '7', annotations: { note } } } });

  // Streams cut at awkward places, written chunk by chunk.
  it.each([
    { name: 'one event per chunk', chunks: [ev('ADDED', 'a') + '\n', ev('MODIFIED', 'a') + '\n'], want: ['ADDED a', 'MODIFIED a'] },
    { name: 'two events in one chunk', chunks: [ev('ADDED', 'a') + '\n' + ev('DELETED', 'a') + '\n'], want: ['ADDED a', 'DELETED a'] },
    { name: 'event split mid-string', chunks: [ev('ADDED', 'abc').slice(0, 40), ev('ADDED', 'abc').slice(40) + '\n'], want: ['ADDED abc'] },
    { name: 'split after escape', chunks: [ev('ADDED', 'q', 'x\\').slice(0, -4), ev('ADDED', 'q', 'x\\').slice(-4)], want: ['ADDED q'] },
    {
      name: 'multi-byte character split across chunks',
      chunks: ((): Buffer[] => {
        const b = Buffer.from(ev('ADDED', 'u', 'héllo✓') + '\n');
        const cut = b.indexOf(Buffer.from('✓')) + 1;
        return [b.subarray(0, cut), b.subarray(cut)];
      })(),
      want: ['ADDED u'],
      note: 'héllo✓',
    },
    { name: 'no newline between events', chunks: [ev('ADDED', 'a') + ev('ADDED', 'b')], want: ['ADDED a', 'ADDED b'] },
  ])('parses $name', async ({ chunks, want, note }) => {
    peer.intercept((r) => (r.query.get('watch') ? { status: 200, chunks } : undefined));
    const w = collect(client.resource(pods, 'd'));
    await w.handle.done;
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(want);
    if (note) expect(w.events[0].object.metadata.annotations?.['note']).toBe(note);
    expect(w.errors).toEqual([]);
    expect(w.closes()).toBe(1);
  });

  it.each([
    { name: 'ERROR event with 410', peerSetup: (p: ApiPeer) => p.compact(), opts: { resourceVersion: '1' } },
    { name: 'plain 410 answer', peerSetup: (p: ApiPeer) => ((p.goneMode = 'status'), p.compact()), opts: { resourceVersion: '1' } },
  ])('reports $name as an ApiError', async ({ peerSetup, opts }) => {
    await client.resource(pods, 'd').create(podObj({ name: 'a' }));
    peerSetup(peer);
    const w = collect(client.resource(pods, 'd'), opts);
    await w.handle.done;
    expect(w.errors).toHaveLength(1);
    expect(isGone(w.errors[0])).toBe(true);
    expect(w.closes()).toBe(1);
  });

  it('reports a truncated stream and a garbage stream as errors', async () => {
    peer.intercept((r) => (r.query.get('labelSelector') === 'cut' ? { status: 200, chunks: ['{"type":"ADDED","obj'] } : r.query.get('watch') ? { status: 200, chunks: ['nonsense'] } : undefined));
    const cut = collect(client.resource(pods, 'd'), { labelSelector: 'cut' });
    const junk = collect(client.resource(pods, 'd'));
    await Promise.all([cut.handle.done, junk.handle.done]);
    expect(cut.errors[0].message).toMatch(/middle of an event/);
    expect(junk.errors[0].message).toMatch(/malformed JSON stream/);
  });

  it('delivers live events and bookmarks, then stops without errors', async () => {
    const c = client.resource(pods, 'd');
    const created = await c.create(podObj({ name: 'a' }));
    const w = collect(c, { resourceVersion: created.metadata.resourceVersion, allowWatchBookmarks: true });
    await waitFor(() => peer.openWatches === 1);
    await c.patch('a', 'merge', { metadata: { labels: { x: 'y' } } });
    peer.bookmark();
    await c.delete('a');
    await waitFor(() => w.events.length === 3);
    expect(w.events.map((e) => e.type)).toEqual(['MODIFIED', 'BOOKMARK', 'DELETED']);
    expect(peer.requestsTo('GET', '/api/v1/namespaces/d/pods')[0].query.get('allowWatchBookmarks')).toBe('true');
    w.handle.stop();
    w.handle.stop();
    await w.handle.done;
    expect(w.errors).toEqual([]);
    expect(w.closes()).toBe(1);
    await waitFor(() => peer.openWatches === 0);
  });

  it('reports a normal server close through onClose only', async () => {
    const w = collect(client.resource(pods, 'd'), { resourceVersion: peer.resourceVersion });
    await waitFor(() => peer.openWatches === 1);
    peer.closeWatches();
    await w.handle.done;
    expect(w.errors).toEqual([]);
    expect(w.closes()).toBe(1);
  });
});

describe('TLS', () => {
  it('verifies the server with the CA and presents a client certificate and token', async () => {
    const pki = await makeTestPki('alice');
    const seen: { cn?: string; auth?: string }[] = [];
    const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, ca: pki.caPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const peerCert = (req.socket as TLSSocket).getPeerCertificate();
      seen.push({ cn: peerCert.subject?.CN, auth: req.headers.authorization });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ metadata: { name: 'n1' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const good = new RestClient({ server: `https://127.0.0.1:${port}`, caPem: pki.caPem, certPem: pki.clientCertPem, keyPem: pki.clientKeyPem, token: 't' }, { component: 'tls' });
    const noCa = new RestClient({ server: `https://127.0.0.1:${port}`, certPem: pki.clientCertPem, keyPem: pki.clientKeyPem }, { component: 'tls' });
    try {
      const n = await good.resource(nodes).get('n1');
      expect(n.metadata.name).toBe('n1');
      expect(seen).toEqual([{ cn: 'alice', auth: 'Bearer t' }]);
      await expect(noCa.resource(nodes).get('n1')).rejects.toThrow(/self-signed|unable to verify|self signed/i);
    } finally {
      good.close();
      noCa.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
