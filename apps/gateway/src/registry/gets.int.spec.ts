import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { Store } from '@orch/storage';
import type { WatchCache } from '@orch/watch';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiRequest } from '../pipeline/api-request';
import { invokeStage, type InvokeDeps } from '../pipeline/invoke';
import { newApiRequest } from '../pipeline/pipeline';
import { parseRequestInfo } from '../request/request-info';
import { chooseRepresentation } from '../server/representation';
import { GenericStore } from './generic-store';
import { resolveKind } from './kinds';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from './registry-fixture';
import type { RequestContext, Strategy } from './strategy';

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [] };
const def = new Catalog().lookup('', 'v1', 'configmaps')!;
const cm = (name: string, v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } }) as KubeObject;
const opts = { ...TEST_REGISTRY_OPTIONS, consistentListFromCache: true };

/** GET's JSON fast path (getJson): the stored text as it is where that is what get() would serve, else get()'s object. */
describe('gets (real SQLite store)', () => {
  let fixture: RegistryFixture;
  let store: Store;
  let storeGets = 0;
  let cache: WatchCache;
  const registry = (strategy: Strategy, o: object = {}, s: Store = store) => new GenericStore(def, { ...resolveKind(def, { k8sCompatibility: false }), strategy }, s, cache, { ...opts, ...o });

  beforeAll(async () => {
    // Counts the gets that reach the store; everything else passes through.
    fixture = await openRegistryFixture('gets', (real) => new Proxy(real, { get: (t, p) => (p === 'get' ? (...a: Parameters<Store['get']>) => (storeGets++, t.get(...a)) : (t as never)[p]) }) as Store);
    ({ store, cache } = fixture);
  });
  afterAll(() => fixture.close());

  const plain = () => resolveKind(def, { k8sCompatibility: false }).strategy;
  const normalizing = (): Strategy => ({ ...plain(), onRead: (o: KubeObject) => void (o.metadata.annotations = { ...o.metadata.annotations, normalized: 'on-read' }) });

  it.each([
    { name: 'an object stored by this registry reads verbatim', strategy: plain, storedAs: 'registry', served: 'json' },
    { name: 'a strategy that normalizes reads (onRead) gets the object', strategy: normalizing, storedAs: 'registry', served: 'object' },
    { name: 'a stored value not in the canonical form (kind before apiVersion) gets the object', strategy: plain, storedAs: 'kind-first', served: 'object' },
  ])('$name', async ({ strategy, storedAs, served }) => {
    const reg = registry(strategy());
    const name = `g-${Math.random().toString(36).slice(2, 8)}`;
    if (storedAs === 'registry') await reg.create('ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } } as KubeObject, ctx);
    else await store.create(reg.key('ns', name), JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'ns', uid: 'u-1' }, data: { k: 'v' } }));

    const got = await reg.getJson('ns', name);
    const expected = await reg.get('ns', name);
    expect('json' in got ? 'json' : 'object').toBe(served);
    const body = 'json' in got ? JSON.parse(got.json) : got.object;
    expect(body).toEqual(expected);
    expect(body.metadata.resourceVersion).toMatch(/^\d+$/);
  });

  it.each([
    { name: 'from the cache' },
    { name: 'from the store', gate: false },
  ])('a missing object is a 404 naming it ($name)', async ({ gate }) => {
    await expect(registry(plain(), gate === false ? { consistentListFromCache: false } : {}).getJson('ns', 'absent')).rejects.toMatchObject({ code: 404, message: 'configmaps "absent" not found' });
  });

  // A cached object the read waits for nothing to see is answered at once (no promise), the same answer as before; anything else goes through the promise.
  it.each([
    { name: 'no resourceVersion, cached', rv: undefined, at: 'now' },
    { name: 'resourceVersion 0, cached', rv: '0', at: 'now' },
    { name: 'a resourceVersion to reach', rv: 'current', at: 'later' },
    { name: 'cache not consistent (ConsistentListFromCache off)', rv: undefined, gate: false, at: 'later' },
    { name: 'onRead strategy (not verbatim)', rv: undefined, strategy: normalizing, at: 'later' },
    { name: 'absent object', rv: undefined, absent: true, at: 'later' },
  ])('getJson and getVerbatim: $name answers $at', async ({ rv, gate, strategy, absent, at }) => {
    const reg = registry((strategy ?? plain)(), gate === false ? { consistentListFromCache: false } : {});
    const name = `n-${Math.random().toString(36).slice(2, 8)}`;
    const created = await reg.create('ns', cm(name, '1'), ctx);
    expect(await cache.waitForRevision(Number(created.object.metadata.resourceVersion), 5000)).toBe(true);
    const asked = absent ? 'absent' : name;
    const version = rv === 'current' ? created.object.metadata.resourceVersion : rv;
    for (const read of [() => reg.getJson('ns', asked, version), () => reg.getVerbatim('ns', asked, version)]) {
      const before = storeGets;
      const got = read();
      expect(got instanceof Promise ? 'later' : 'now').toBe(at);
      if (absent) {
        await expect(got).rejects.toMatchObject({ code: 404 });
        continue;
      }
      const answer = await got;
      const body = 'json' in answer ? JSON.parse(answer.json) : 'stored' in answer ? JSON.parse(answer.stored.value) : answer.object;
      expect(body.metadata.name).toBe(name);
      if (at === 'now') expect(storeGets).toBe(before);
    }
  });

  // The invoke stage runs a GET the registry answers at once without a promise, with the answer getJson gives.
  it.each([
    { name: 'cached, no resourceVersion', query: '', at: 'now' },
    { name: 'a resourceVersion to reach', query: 'resourceVersion=current', at: 'later' },
    { name: 'pretty (not the stored text)', query: 'pretty=true', at: 'later' },
    { name: 'absent object', query: '', absent: true, at: 'later' },
  ])('invoke stage, GET $name: answers $at', async ({ query, absent, at }) => {
    const reg = registry(plain());
    const name = `i-${Math.random().toString(36).slice(2, 8)}`;
    const created = await reg.create('ns', cm(name, '1'), ctx);
    expect(await cache.waitForRevision(Number(created.object.metadata.resourceVersion), 5000)).toBe(true);
    const url = `/api/v1/namespaces/ns/configmaps/${absent ? 'absent' : name}?${query.replace('current', created.object.metadata.resourceVersion!)}`;
    const r: ApiRequest = newApiRequest({ method: 'GET', url, headers: {} } as unknown as FastifyRequest, {} as FastifyReply);
    r.info = parseRequestInfo('GET', r.path, r.query);
    r.target = { def, namespace: 'ns', ctx, repr: chooseRepresentation('application/json', false, false), bodyKind: { group: '', version: 'v1', kind: 'ConfigMap' }, fieldValidation: 'Strict' } as ApiRequest['target'];
    const invoke = invokeStage({ registries: new Map([[def, reg]]) } as unknown as InvokeDeps);
    const running = invoke(r);
    expect(running instanceof Promise ? 'later' : 'now').toBe(at);
    if (absent) return void (await expect(running).rejects.toMatchObject({ code: 404 }));
    await running;
    const body = r.result!.rawJson !== undefined ? JSON.parse(r.result!.rawJson) : r.result!.body;
    expect(body).toEqual(await reg.get('ns', name));
  });

  // A write answers with its stored text (resourceVersion spliced in) only where that is the object it returns.
  it.each([
    { name: 'create', write: (reg: GenericStore, name: string) => reg.create('ns', cm(name, '1'), ctx), json: true },
    { name: 'update', write: async (reg: GenericStore, name: string) => (await reg.create('ns', cm(name, '1'), ctx), reg.update('ns', name, cm(name, '2'), ctx)), json: true },
    { name: 'patch', write: async (reg: GenericStore, name: string) => (await reg.create('ns', cm(name, '1'), ctx), reg.patch('ns', name, (o) => ({ ...o, data: { v: '2' } }), ctx)), json: true },
    { name: 'server-side apply that creates', write: (reg: GenericStore, name: string) => reg.apply('ns', name, cm(name, '1'), false, { ...ctx, fieldManager: 'test' }), json: true },
    { name: 'dry-run create (nothing stored)', write: (reg: GenericStore, name: string) => reg.create('ns', cm(name, '1'), { ...ctx, dryRun: true }), json: false },
    { name: 'update that changes nothing', write: async (reg: GenericStore, name: string) => (await reg.create('ns', cm(name, '1'), ctx), reg.patch('ns', name, (o) => o, ctx)), json: false },
  ])('$name answers with the stored text: $json', async ({ write, json }) => {
    const reg = registry(plain());
    const name = `w-${Math.random().toString(36).slice(2, 8)}`;
    const res = await write(reg, name);
    expect(res.json !== undefined).toBe(json);
    if (res.json !== undefined) {
      expect(JSON.parse(res.json)).toEqual(res.object);
      expect(JSON.parse(res.json)).toEqual(await reg.get('ns', name));
    }
  });

  // A write acknowledged to a client is seen by its next GET, whoever serves it (no wait between them).
  it.each([
    { name: 'consistent get (no resourceVersion): the cache holds every acknowledged write', rv: undefined, fromStore: false },
    { name: 'resourceVersion=0', rv: '0', fromStore: false },
    { name: 'resourceVersion of the write (not older than)', rv: 'WRITTEN', fromStore: false },
    { name: 'gate ConsistentListFromCache off', rv: undefined, gate: false, fromStore: true },
    { name: 'a store others write to as well (no acknowledgedRevision, like etcd)', rv: undefined, shared: true, fromStore: true },
  ])('$name', async ({ rv, gate, shared, fromStore }) => {
    const s = shared ? (new Proxy(store, { get: (t, p) => (p === 'acknowledgedRevision' ? undefined : (t as never)[p]) }) as Store) : store;
    const reg = registry(plain(), gate === false ? { consistentListFromCache: false } : {}, s);
    const name = `r-${Math.random().toString(36).slice(2, 8)}`;
    await reg.create('ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '1' } } as KubeObject, ctx);
    const updated = await reg.update('ns', name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '2' } } as KubeObject, ctx);
    const before = storeGets;
    const got = await reg.get('ns', name, rv === 'WRITTEN' ? updated.object.metadata.resourceVersion : rv);
    expect(storeGets > before).toBe(fromStore);
    expect(got.data).toEqual({ v: '2' });
    expect(got.metadata.resourceVersion).toBe(updated.object.metadata.resourceVersion);
  });
});
