import { join } from 'node:path';
import { ensurePki, issueClientCert } from '@orch/auth';
import { removeDir, tempDir } from '@orch/testing';
import { ApiClient, type RawResponse } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

// Security done-means: every resource path the gateway serves (read from its own discovery,
// subresources and every verb included), asked without credentials, is 403 for the anonymous
// user and 401 for a garbled bearer token or a client certificate of another CA, and no
// answer carries data: nothing but a Status, none of the stored secret's or config map's
// values, and nothing written.

const MARKER = 'walk-marker-6f1c0e';
const SECRET_VALUE = 'walk-secret-value-9b2d';

let gw: GatewayProcess;
let dir: string;
const clients: ApiClient[] = [];

interface Probe {
  method: string;
  path: string;
}

/** Every request shape of every served resource: collection, object and subresource paths for each verb discovery lists. */
async function catalogProbes(): Promise<Probe[]> {
  const groupVersions: string[] = ['/api/v1'];
  const groups = (await gw.admin.get('/apis')).json as { groups: { versions: { groupVersion: string }[] }[] };
  for (const g of groups.groups) for (const v of g.versions) groupVersions.push(`/apis/${v.groupVersion}`);
  const probes: Probe[] = [];
  for (const base of groupVersions) {
    const list = (await gw.admin.get(base)).json as { resources: { name: string; namespaced: boolean; verbs: string[] }[] };
    for (const r of list.resources) {
      const [resource, sub] = r.name.split('/');
      const collection = r.namespaced ? `${base}/namespaces/default/${resource}` : `${base}/${resource}`;
      const object = `${collection}/${MARKER}${sub ? `/${sub}` : ''}`;
      const verbs = new Set(r.verbs);
      if (sub) {
        for (const [verb, method] of [['get', 'GET'], ['create', 'POST'], ['update', 'PUT'], ['patch', 'PATCH']] as const) if (verbs.has(verb)) probes.push({ method, path: object });
        continue;
      }
      if (verbs.has('list')) probes.push({ method: 'GET', path: collection });
      if (verbs.has('list') && r.namespaced) probes.push({ method: 'GET', path: `${base}/${resource}` });
      if (verbs.has('watch')) probes.push({ method: 'GET', path: `${collection}?watch=true` });
      if (verbs.has('create')) probes.push({ method: 'POST', path: collection });
      if (verbs.has('deletecollection')) probes.push({ method: 'DELETE', path: collection });
      if (verbs.has('get')) probes.push({ method: 'GET', path: object });
      if (verbs.has('update')) probes.push({ method: 'PUT', path: object });
      if (verbs.has('patch')) probes.push({ method: 'PATCH', path: object });
      if (verbs.has('delete')) probes.push({ method: 'DELETE', path: object });
    }
  }
  return probes;
}

async function send(c: ApiClient, p: Probe): Promise<RawResponse> {
  const body = p.method === 'POST' || p.method === 'PUT' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MARKER }, data: { k: MARKER } } : p.method === 'PATCH' ? { data: { k: MARKER } } : undefined;
  const headers: Record<string, string> = p.method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {};
  return c.request(p.method, p.path, body, { headers });
}

/** Sends every probe (8 at a time) and returns the ones whose answer is not `want` with a bare Status. */
async function walk(c: ApiClient, probes: Probe[], want: number): Promise<string[]> {
  const wrong: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const p = probes[next++];
      const r = await send(c, p);
      const status = r.json as { kind?: string; code?: number; items?: unknown; data?: unknown } | undefined;
      const ok = r.status === want && status?.kind === 'Status' && status.code === want && status.items === undefined && status.data === undefined && !r.text.includes(SECRET_VALUE) && !r.text.includes(Buffer.from(SECRET_VALUE).toString('base64'));
      if (!ok) wrong.push(`${p.method} ${p.path} → ${r.status} ${r.text.slice(0, 160)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return wrong;
}

let probes: Probe[];

beforeAll(async () => {
  dir = await tempDir('no-credentials-e2e-');
  gw = await startGateway();
  expect((await gw.admin.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'walk-secret' }, stringData: { password: SECRET_VALUE } })).status).toBe(201);
  expect((await gw.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'walk-config' }, data: { password: SECRET_VALUE } })).status).toBe(201);
  probes = await catalogProbes();
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await gw?.stop();
  if (dir) await removeDir(dir);
});

describe('every resource path without credentials', () => {
  it('the walk covers the catalog: core and named groups, subresources, every verb', () => {
    const paths = probes.map((p) => `${p.method} ${p.path}`);
    expect(probes.length).toBeGreaterThan(300);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /api/v1/namespaces/default/secrets',
        'GET /api/v1/secrets',
        `GET /api/v1/namespaces/default/pods/${MARKER}/log`,
        `POST /api/v1/namespaces/default/serviceaccounts/${MARKER}/token`,
        'POST /apis/rbac.authorization.orch.io/v1/clusterrolebindings',
        'DELETE /apis/apps/v1/namespaces/default/deployments',
      ]),
    );
  });

  it.each<{ name: string; client: () => Promise<ApiClient>; want: number }>([
    { name: 'no credentials at all: 403 as system:anonymous', client: async () => new ApiClient(gw.url, { ca: gw.creds.ca }), want: 403 },
    { name: 'a garbled bearer token: 401', client: async () => new ApiClient(gw.url, { ca: gw.creds.ca, token: `${Buffer.from(MARKER).toString('base64url')}.e30.c2ln` }), want: 401 },
    {
      name: 'a client certificate of another CA naming system:masters: 401',
      client: async () => {
        const other = await issueClientCert(await ensurePki(join(dir, 'other-ca')), { cn: 'admin', orgs: ['system:masters'] });
        return new ApiClient(gw.url, { ca: gw.creds.ca, cert: other.certPem, key: other.keyPem });
      },
      want: 401,
    },
  ])(
    '$name, no data, nothing written',
    async ({ client, want }) => {
      const c = await client();
      clients.push(c);
      expect(await walk(c, probes, want)).toEqual([]);
      // Nothing was created, changed or deleted by the walk.
      expect((await gw.admin.get(`/api/v1/namespaces/default/configmaps/${MARKER}`)).status).toBe(404);
      expect((await gw.admin.get('/api/v1/namespaces/default/configmaps/walk-config')).json.data).toEqual({ password: SECRET_VALUE });
      expect((await gw.admin.get('/api/v1/namespaces/default/secrets/walk-secret')).status).toBe(200);
    },
    120_000,
  );
});
