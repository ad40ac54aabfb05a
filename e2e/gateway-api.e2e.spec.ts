import { gunzipSync } from 'node:zlib';
import { decodeProtobuf } from '@orch/api';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';

const CM = (name: string, ns = 'default', data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data,
});

describe('gateway API (real process over HTTPS)', () => {
  let gw: GatewayProcess;

  beforeAll(async () => {
    gw = await startGateway({ args: ['--bookmark-interval=1s'], controllers: POD_CONTROLLERS });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  describe('discovery and version', () => {
    it('/version reports 1.32', async () => {
      const r = await gw.admin.get('/version');
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ major: '1', minor: '32' });
    });

    it('/api/v1 lists pods with short names, eviction with group and version', async () => {
      const r = await gw.admin.get('/api/v1');
      const pods = r.json.resources.find((x: any) => x.name === 'pods');
      expect(pods).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'] });
      expect(r.json.resources.find((x: any) => x.name === 'pods/eviction')).toMatchObject({ kind: 'Eviction', group: 'policy', version: 'v1' });
    });

    it('/apis lists named groups; aggregated discovery has the k8s.io content type', async () => {
      const legacy = await gw.admin.get('/apis');
      expect(legacy.json.groups.map((g: any) => g.name)).toEqual(expect.arrayContaining(['apps', 'batch', 'rbac.authorization.orch.io']));
      const agg = await gw.admin.get('/apis', {
        headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
      });
      expect(agg.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect(agg.json.kind).toBe('APIGroupDiscoveryList');
    });
  });

  describe('CRUD', () => {
    it('creates, gets, updates, patches and deletes a ConfigMap', async () => {
      const created = await gw.admin.post('/api/v1/namespaces/default/configmaps', CM('crud'));
      expect(created.status).toBe(201);
      const meta = created.json.metadata;
      expect(meta).toMatchObject({ name: 'crud', namespace: 'default' });
      expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(meta.resourceVersion).toMatch(/^\d+$/);

      const got = await gw.admin.get('/api/v1/namespaces/default/configmaps/crud');
      expect(got.json).toEqual(created.json);

      const updated = await gw.admin.put('/api/v1/namespaces/default/configmaps/crud', { ...created.json, data: { a: '2' } });
      expect(updated.status).toBe(200);
      expect(updated.json.data).toEqual({ a: '2' });
      expect(updated.json.metadata.resourceVersion).not.toBe(meta.resourceVersion);

      const stale = await gw.admin.put('/api/v1/namespaces/default/configmaps/crud', { ...created.json, data: { a: '3' } });
      expect(stale.status).toBe(409);
      expect(stale.json).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });

      const merged = await gw.admin.patch('/api/v1/namespaces/default/configmaps/crud', { data: { b: 'x' } }, 'application/merge-patch+json');
      expect(merged.json.data).toEqual({ a: '2', b: 'x' });
      const jsonPatched = await gw.admin.patch(
        '/api/v1/namespaces/default/configmaps/crud',
        [
          { op: 'test', path: '/data/a', value: '2' },
          { op: 'replace', path: '/data/a', value: '4' },
        ],
        'application/json-patch+json',
      );
      expect(jsonPatched.json.data.a).toBe('4');
      const failedTest = await gw.admin.patch('/api/v1/namespaces/default/configmaps/crud', [{ op: 'test', path: '/data/a', value: 'nope' }], 'application/json-patch+json');
      expect(failedTest.status).toBeGreaterThanOrEqual(400);
      expect(failedTest.json.kind).toBe('Status');

      const del = await gw.admin.delete('/api/v1/namespaces/default/configmaps/crud');
      expect(del.status).toBe(200);
      expect((await gw.admin.get('/api/v1/namespaces/default/configmaps/crud')).status).toBe(404);
    });

    it('If-Match makes writes conditional on the resourceVersion', async () => {
      const c = await gw.admin.post('/api/v1/namespaces/default/configmaps', CM('ifm'));
      const rv = c.json.metadata.resourceVersion;
      const ok = await gw.admin.patch('/api/v1/namespaces/default/configmaps/ifm', { data: { a: '2' } }, 'application/merge-patch+json', { headers: { 'if-match': `"${rv}"` } });
      expect(ok.status).toBe(200);
      const stale = await gw.admin.patch('/api/v1/namespaces/default/configmaps/ifm', { data: { a: '3' } }, 'application/merge-patch+json', { headers: { 'if-match': rv } });
      expect(stale.status).toBe(409);
      expect(stale.json.reason).toBe('Conflict');
      expect((await gw.admin.request('DELETE', '/api/v1/namespaces/default/configmaps/ifm', undefined, { headers: { 'if-match': rv } })).status).toBe(409);
      expect((await gw.admin.request('DELETE', '/api/v1/namespaces/default/configmaps/ifm', undefined, { headers: { 'if-match': ok.json.metadata.resourceVersion } })).status).toBe(200);
      expect((await gw.admin.patch('/api/v1/namespaces/default/configmaps/x', {}, 'application/merge-patch+json', { headers: { 'if-match': 'W/"abc"' } })).status).toBe(400);
    });

    it.each([
      { name: 'dryRun=All', q: 'dryRun=All' },
      { name: 'dryRun with no value', q: 'dryRun' },
    ])('$name: validates and answers as if done, stores nothing', async ({ q }) => {
      const path = '/api/v1/namespaces/default/configmaps';
      const created = await gw.admin.post(`${path}?${q}`, CM('dry'));
      expect(created.status).toBe(201);
      expect(created.json.metadata.uid).toBeDefined();
      expect((await gw.admin.get(`${path}/dry`)).status).toBe(404);
      expect((await gw.admin.post(`${path}?${q}`, CM('Bad_Name'))).status).toBe(422);
      const real = await gw.admin.post(path, CM('dry'));
      const put = await gw.admin.put(`${path}/dry?${q}`, { ...real.json, data: { a: 'put' } });
      expect(put.json.data.a).toBe('put');
      const patched = await gw.admin.patch(`${path}/dry?${q}`, { data: { a: 'patch' } }, 'application/merge-patch+json');
      expect(patched.json.data.a).toBe('patch');
      expect((await gw.admin.delete(`${path}/dry?${q}`)).status).toBe(200);
      const after = await gw.admin.get(`${path}/dry`);
      expect(after.json.data.a).toBe('1');
      expect(after.json.metadata.resourceVersion).toBe(real.json.metadata.resourceVersion);
      expect((await gw.admin.delete(`${path}/dry`)).status).toBe(200);
    });

    it('concurrent merge patches all land (a patch without resourceVersion retries on conflict)', async () => {
      const path = '/api/v1/namespaces/default/configmaps/busy';
      await gw.admin.post('/api/v1/namespaces/default/configmaps', CM('busy', 'default', {}));
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => gw.admin.patch(path, { data: { [`k${i}`]: String(i) } }, 'application/merge-patch+json')));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(Object.keys((await gw.admin.get(path)).json.data)).toHaveLength(20);
      // A patch that names a stale resourceVersion is still a conflict.
      const stale = await gw.admin.patch(path, { metadata: { resourceVersion: results[0].json.metadata.resourceVersion }, data: { x: '1' } }, 'application/merge-patch+json');
      expect(stale.status).toBe(409);
    });

    it('generateName gives a unique name', async () => {
      const r = await gw.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } });
      expect(r.status).toBe(201);
      expect(r.json.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    });

    it('namespaced creates need an existing namespace', async () => {
      const r = await gw.admin.post('/api/v1/namespaces/nosuch/configmaps', CM('x', 'nosuch'));
      expect(r.status).toBe(404);
      expect(r.json.message).toBe('namespaces "nosuch" not found');
    });

    it('namespaces carry orch.io/metadata.name, deletion marks them Terminating', async () => {
      const ns = await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
      expect(ns.json.metadata.labels['orch.io/metadata.name']).toBe('doomed');
      expect(ns.json.status.phase).toBe('Active');
      const del = await gw.admin.delete('/api/v1/namespaces/doomed');
      expect(del.status).toBe(200);
      const after = await gw.admin.get('/api/v1/namespaces/doomed');
      expect(after.json.status.phase).toBe('Terminating');
      expect(after.json.metadata.deletionTimestamp).toBeDefined();
      const create = await gw.admin.post('/api/v1/namespaces/doomed/configmaps', CM('x', 'doomed'));
      expect(create.status).toBe(403);
      expect(create.json.message).toContain('because it is being terminated');
      expect((await gw.admin.delete('/api/v1/namespaces/default')).status).toBe(403);
    });

    it('finalizers hold a deleted object until the last one is removed', async () => {
      const cm = { ...CM('fin'), metadata: { ...CM('fin').metadata, finalizers: ['example.com/hold'] } };
      await gw.admin.post('/api/v1/namespaces/default/configmaps', cm);
      const del = await gw.admin.delete('/api/v1/namespaces/default/configmaps/fin');
      expect(del.status).toBe(200);
      expect(del.json.metadata.deletionTimestamp).toBeDefined();
      expect((await gw.admin.get('/api/v1/namespaces/default/configmaps/fin')).status).toBe(200);
      const removed = await gw.admin.patch('/api/v1/namespaces/default/configmaps/fin', { metadata: { finalizers: null } }, 'application/merge-patch+json');
      expect(removed.status).toBe(200);
      expect((await gw.admin.get('/api/v1/namespaces/default/configmaps/fin')).status).toBe(404);
    });

    it('scale subresource reads and writes replicas', async () => {
      const dep = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
      };
      expect((await gw.admin.post('/apis/apps/v1/namespaces/default/deployments', dep)).status).toBe(201);
      const scale = await gw.admin.get('/apis/apps/v1/namespaces/default/deployments/web/scale');
      expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { selector: 'app=web' } });
      const patched = await gw.admin.patch('/apis/apps/v1/namespaces/default/deployments/web/scale', { spec: { replicas: 3 } }, 'application/merge-patch+json');
      expect(patched.json.spec.replicas).toBe(3);
      expect((await gw.admin.get('/apis/apps/v1/namespaces/default/deployments/web')).json.spec.replicas).toBe(3);
    });

    it('status is written only through the status subresource', async () => {
      const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {}, status: { capacity: { cpu: '4' } } };
      const created = await gw.admin.post('/api/v1/nodes', node);
      expect(created.status).toBe(201);
      const st = await gw.admin.patch('/api/v1/nodes/n1/status', { status: { capacity: { cpu: '8' } }, spec: { unschedulable: true } }, 'application/merge-patch+json');
      expect(st.json.status.capacity.cpu).toBe('8');
      expect(st.json.spec.unschedulable).toBeUndefined();
      const main = await gw.admin.patch('/api/v1/nodes/n1', { status: { capacity: { cpu: '1' } }, spec: { unschedulable: true } }, 'application/merge-patch+json');
      expect(main.json.status.capacity.cpu).toBe('8');
      expect(main.json.spec.unschedulable).toBe(true);
    });

    it('binds a pod to a node through pods/binding', async () => {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
      expect((await gw.admin.post('/api/v1/namespaces/default/pods', pod)).status).toBe(201);
      const b = await gw.admin.post('/api/v1/namespaces/default/pods/p1/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p1' }, target: { kind: 'Node', name: 'n1' } });
      expect(b.status).toBe(201);
      const got = await gw.admin.get('/api/v1/namespaces/default/pods/p1');
      expect(got.json.spec.nodeName).toBe('n1');
      const again = await gw.admin.post('/api/v1/namespaces/default/pods/p1/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p1' }, target: { kind: 'Node', name: 'n2' } });
      expect(again.status).toBe(409);
      const byNode = await gw.admin.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
      expect(byNode.json.items.map((p: any) => p.metadata.name)).toEqual(['p1']);
    });
  });

  describe('lists', () => {
    beforeAll(async () => {
      await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lists' } });
      for (let i = 0; i < 25; i++) {
        await gw.admin.post('/api/v1/namespaces/lists/configmaps', CM(`cm-${String(i).padStart(2, '0')}`, 'lists', {}, { tier: i % 2 ? 'odd' : 'even', idx: String(i) }));
      }
    });

    it.each([
      { selector: 'tier=odd', count: 12 },
      { selector: 'tier==even', count: 13 },
      { selector: 'tier!=odd', count: 13 },
      { selector: 'idx in (1,2,3)', count: 3 },
      { selector: 'idx notin (1,2,3),tier=odd', count: 10 },
      { selector: 'tier', count: 25 },
      { selector: '!tier', count: 0 },
    ])('label selector $selector → $count', async ({ selector, count }) => {
      const r = await gw.admin.get(`/api/v1/namespaces/lists/configmaps?labelSelector=${encodeURIComponent(selector)}`);
      expect(r.status).toBe(200);
      expect(r.json.items).toHaveLength(count);
    });

    it('pages over one snapshot with limit/continue and remainingItemCount', async () => {
      const first = await gw.admin.get('/api/v1/namespaces/lists/configmaps?limit=10');
      expect(first.json.items).toHaveLength(10);
      expect(first.json.metadata.remainingItemCount).toBe(15);
      // A write between chunks is not seen by the later chunks.
      await gw.admin.post('/api/v1/namespaces/lists/configmaps', CM('cm-99', 'lists'));
      const second = await gw.admin.get(`/api/v1/namespaces/lists/configmaps?limit=10&continue=${encodeURIComponent(first.json.metadata.continue)}`);
      const third = await gw.admin.get(`/api/v1/namespaces/lists/configmaps?limit=10&continue=${encodeURIComponent(second.json.metadata.continue)}`);
      expect(second.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion);
      expect(third.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion);
      expect(third.json.items).toHaveLength(5);
      expect(third.json.metadata.continue ?? '').toBe('');
      expect(third.json.metadata.remainingItemCount).toBeUndefined();
      const names = [...first.json.items, ...second.json.items, ...third.json.items].map((i: any) => i.metadata.name);
      expect(new Set(names).size).toBe(25);
      expect(names).not.toContain('cm-99');
    });

    it('streams a list bigger than one body chunk: the same objects as pages, in JSON, gzip, protobuf and Table', async () => {
      await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big-list' } });
      // 60 objects of 4 KiB each, some with multi-byte text: about four 64 KiB chunks.
      for (let i = 0; i < 60; i++) {
        const r = await gw.admin.post('/api/v1/namespaces/big-list/configmaps', CM(`big-${String(i).padStart(2, '0')}`, 'big-list', { text: (i % 3 ? 'x' : 'ключ—✓').repeat(4096 / (i % 3 ? 1 : 6)) }));
        expect(r.status).toBe(201);
      }
      const whole = await gw.admin.get('/api/v1/namespaces/big-list/configmaps');
      expect(whole.status).toBe(200);
      expect(whole.headers['transfer-encoding']).toBe('chunked');
      expect(whole.headers['content-length']).toBeUndefined();
      expect(whole.json).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: expect.any(String) } });
      expect(whole.json.metadata.continue).toBeUndefined();
      const paged: any[] = [];
      let token = '';
      do {
        const query = token ? `continue=${encodeURIComponent(token)}` : `resourceVersion=${whole.json.metadata.resourceVersion}&resourceVersionMatch=Exact`;
        const page = await gw.admin.get(`/api/v1/namespaces/big-list/configmaps?limit=7&${query}`);
        paged.push(...page.json.items);
        token = page.json.metadata.continue ?? '';
      } while (token);
      expect(whole.json.items).toEqual(paged);
      expect(whole.json.items).toHaveLength(60);
      const zipped = await gw.admin.get('/api/v1/namespaces/big-list/configmaps', { headers: { 'accept-encoding': 'gzip' } });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(zipped.body).toString())).toEqual(whole.json);
      const pb = await gw.admin.get('/api/v1/namespaces/big-list/configmaps', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      expect(pb.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
      // (protobuf has no empty manager name in managedFields: compared without them)
      const withoutManagedFields = (list: any) => ({ ...list, items: list.items.map((o: any) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } })) });
      expect(withoutManagedFields(decodeProtobuf(pb.body))).toEqual(withoutManagedFields(whole.json));
      const table = await gw.admin.get('/api/v1/namespaces/big-list/configmaps?includeObject=Object', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
      expect(table.json.rows.map((r: any) => r.object)).toEqual(whole.json.items);
    });

    it('omits remainingItemCount with selectors', async () => {
      const r = await gw.admin.get('/api/v1/namespaces/lists/configmaps?limit=3&labelSelector=tier%3Dodd');
      expect(r.json.items).toHaveLength(3);
      expect(r.json.metadata.continue).toBeTruthy();
      expect(r.json.metadata.remainingItemCount).toBeUndefined();
    });

    it('reads an exact older resourceVersion', async () => {
      const before = await gw.admin.get('/api/v1/namespaces/lists/configmaps');
      await gw.admin.delete('/api/v1/namespaces/lists/configmaps/cm-00');
      const exact = await gw.admin.get(`/api/v1/namespaces/lists/configmaps?resourceVersion=${before.json.metadata.resourceVersion}&resourceVersionMatch=Exact`);
      expect(exact.json.items).toHaveLength(before.json.items.length);
      const now = await gw.admin.get('/api/v1/namespaces/lists/configmaps');
      expect(now.json.items).toHaveLength(before.json.items.length - 1);
    });

    it('answers 504 with Retry-After for a resourceVersion that does not arrive', async () => {
      const r = await gw.admin.get('/api/v1/namespaces/lists/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan');
      expect(r.status).toBe(504);
      expect(r.headers['retry-after']).toBe('1');
      expect(r.json.message).toContain('Too large resource version');
    });
  });

  describe('watch', () => {
    it('streams ADDED, MODIFIED, DELETED in order from a list resourceVersion', async () => {
      await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w1' } });
      const list = await gw.admin.get('/api/v1/namespaces/w1/configmaps');
      const rv = list.json.metadata.resourceVersion;
      const watching = gw.admin.watch(`/api/v1/namespaces/w1/configmaps?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= 3);
      const c = await gw.admin.post('/api/v1/namespaces/w1/configmaps', CM('a', 'w1'));
      await gw.admin.patch('/api/v1/namespaces/w1/configmaps/a', { data: { a: '2' } }, 'application/merge-patch+json');
      await gw.admin.delete('/api/v1/namespaces/w1/configmaps/a');
      const { status, events } = await watching;
      expect(status).toBe(200);
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(events[0].object.metadata.uid).toBe(c.json.metadata.uid);
      const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
      expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    });

    it('an object leaving a label selection is DELETED for that watcher', async () => {
      await gw.admin.post('/api/v1/namespaces/w1/configmaps', CM('sel', 'w1', {}, { keep: 'yes' }));
      const rv = (await gw.admin.get('/api/v1/namespaces/w1/configmaps')).json.metadata.resourceVersion;
      const watching = gw.admin.watch(`/api/v1/namespaces/w1/configmaps?watch=true&labelSelector=keep%3Dyes&resourceVersion=${rv}`, (evs) => evs.length >= 1);
      await gw.admin.patch('/api/v1/namespaces/w1/configmaps/sel', { metadata: { labels: { keep: 'no' } } }, 'application/merge-patch+json');
      const { events } = await watching;
      expect(events[0]).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'sel' } } });
    });

    it('sends bookmarks only when allowed', async () => {
      const rv = (await gw.admin.get('/api/v1/namespaces/w1/configmaps')).json.metadata.resourceVersion;
      const withBm = await gw.admin.watch(`/api/v1/namespaces/w1/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, (evs) => evs.some((e) => e.type === 'BOOKMARK'), 5000);
      const bm = withBm.events.find((e) => e.type === 'BOOKMARK');
      expect(bm.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
      expect(bm.object.metadata.resourceVersion).toMatch(/^\d+$/);
      const without = await gw.admin.watch(`/api/v1/namespaces/w1/configmaps?watch=1&resourceVersion=${rv}`, () => false, 2500);
      expect(without.events.filter((e) => e.type === 'BOOKMARK')).toHaveLength(0);
    });

    it('ends after timeoutSeconds', async () => {
      const started = Date.now();
      const r = await gw.admin.watch('/api/v1/namespaces/w1/configmaps?watch=1&timeoutSeconds=1', () => false, 10_000);
      expect(r.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('Table watchers share the rows after their first; each one\'s first row carries the column definitions', async () => {
      await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wt' } });
      const rv = (await gw.admin.get('/api/v1/namespaces/wt/configmaps')).json.metadata.resourceVersion;
      const table = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
      const path = (from: string) => `/api/v1/namespaces/wt/configmaps?watch=1&resourceVersion=${from}`;
      const first = gw.admin.watch(path(rv), (evs) => evs.length >= 3, 10_000, table);
      const t1 = await gw.admin.post('/api/v1/namespaces/wt/configmaps', CM('t1', 'wt'));
      for (const name of ['t2', 't3']) await gw.admin.post('/api/v1/namespaces/wt/configmaps', CM(name, 'wt'));
      const rows = (events: any[]) => events.map((e) => [e.object.kind, e.object.rows[0].cells[0], e.object.columnDefinitions?.length ?? 0]);
      expect(rows((await first).events)).toEqual([
        ['Table', 't1', 3],
        ['Table', 't2', 0],
        ['Table', 't3', 0],
      ]);
      // A later watcher replays t2 and t3, whose header-less rows the first watcher's stream
      // already encoded: its own first row still has the column definitions.
      const second = await gw.admin.watch(path(t1.json.metadata.resourceVersion), (evs) => evs.length >= 2, 10_000, table);
      expect(rows(second.events)).toEqual([
        ['Table', 't2', 3],
        ['Table', 't3', 0],
      ]);
    });

    it('watch without resourceVersion starts with the current objects as ADDED', async () => {
      const r = await gw.admin.watch('/api/v1/namespaces/w1/configmaps?watch=1', (evs) => evs.length >= 1, 5000);
      expect(r.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'sel' } } });
    });
  });

  describe('media', () => {
    it('answers YAML and tables, gzip when asked', async () => {
      const yaml = await gw.admin.get('/api/v1/namespaces/default', { headers: { accept: 'application/yaml' } });
      expect(yaml.headers['content-type']).toBe('application/yaml');
      expect(yaml.text).toContain('kind: Namespace');
      const table = await gw.admin.get('/api/v1/namespaces', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
      expect(table.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(table.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Status', 'Age']);
      const plain = await gw.admin.get('/apis/storage.orch.io/v1/storageclasses', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
      expect(plain.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Created At']);
      expect(table.json.rows[0].object.kind).toBe('PartialObjectMetadata');
      const orchTable = await gw.admin.get('/api/v1/namespaces', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.orch.io' } });
      expect(orchTable.json.apiVersion).toBe('meta.orch.io/v1');
      const gz = await gw.admin.get('/api/v1/namespaces', { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(gz.body).toString()).kind).toBe('NamespaceList');
      const none = await gw.admin.get('/api/v1/namespaces', { headers: { accept: 'application/xml' } });
      expect(none.status).toBe(406);
    });

    it('accepts YAML bodies', async () => {
      const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n';
      const r = await gw.admin.post('/api/v1/namespaces/default/configmaps', body, { headers: { 'content-type': 'application/yaml' } });
      expect(r.status).toBe(201);
      expect(r.json.data).toEqual({ k: 'v' });
    });
  });

  describe('health, metrics and security', () => {
    it('serves verbose health without credentials', async () => {
      const r = await gw.anonymous.get('/readyz?verbose');
      expect(r.status).toBe(200);
      expect(r.text).toContain('[+]ping ok');
      expect(r.text.trim().split('\n').at(-1)).toBe('readyz check passed');
      const excluded = await gw.anonymous.get('/livez?verbose&exclude=ping');
      expect(excluded.text).toContain('[+]ping excluded: ok');
      expect((await gw.anonymous.get('/livez/ping')).text).toBe('ok');
    });

    it('refuses anonymous API requests', async () => {
      const r = await gw.anonymous.get('/api/v1/namespaces');
      expect(r.status).toBe(403);
      expect(r.json.kind).toBe('Status');
    });

    it('exposes request metrics', async () => {
      const r = await gw.admin.get('/metrics');
      expect(r.text).toMatch(/apiserver_request_total\{[^}]*verb="GET"[^}]*resource="namespaces"/);
    });
  });
});
