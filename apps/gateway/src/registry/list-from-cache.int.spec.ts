import { join } from 'node:path';
import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { openSqliteStore, type Store } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { WatchCache } from '@orch/watch';
import { GenericStore } from './generic-store';
import { strategyFor } from './strategies';
import type { RequestContext } from './strategy';

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [] };
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } }) as KubeObject;

/** ConsistentListFromCache: a list is served by the watch cache only when it provably holds every acknowledged write. */
describe('lists from the watch cache (real SQLite store)', () => {
  let dir: string;
  let store: Store;
  let storeLists = 0;
  let cache: WatchCache;
  const registry = (consistentListFromCache: boolean, s: Store = store) => {
    const def = new Catalog().lookup('', 'v1', 'configmaps')!;
    return new GenericStore(def, strategyFor(def, { k8sCompatibility: false }), {}, s, cache, { continueTokenLifetimeMs: 60_000, tooLargeResourceVersionWaitMs: 1000, bookmarkIntervalMs: 60_000, watchListEnabled: false, consistentListFromCache });
  };

  beforeAll(async () => {
    dir = await tempDir('list-cache-');
    const real = await openSqliteStore(join(dir, 'db'));
    // Counts the lists that reach the store; everything else passes through.
    store = new Proxy(real, { get: (t, p) => (p === 'list' ? (...a: Parameters<Store['list']>) => (storeLists++, t.list(...a)) : (t as never)[p]) }) as Store;
    cache = new WatchCache(store, { prefix: '/registry/', log: () => undefined });
    await cache.start();
  });
  afterAll(async () => {
    cache.stop();
    await store.close();
    await removeDir(dir);
  });

  it.each([
    { name: 'consistent list (no resourceVersion)', gate: true, opts: {}, fromStore: false },
    { name: 'resourceVersion=0', gate: true, opts: { resourceVersion: '0' }, fromStore: false },
    { name: 'with a label selector', gate: true, opts: { labelSelector: 'x=1' }, fromStore: false },
    { name: 'with a limit (paged: the store)', gate: true, opts: { limit: 1 }, fromStore: true },
    { name: 'resourceVersionMatch=Exact (the store)', gate: true, opts: { resourceVersion: 'CURRENT', resourceVersionMatch: 'Exact' }, fromStore: true },
    { name: 'gate off', gate: false, opts: {}, fromStore: true },
  ])('$name', async ({ gate, opts, fromStore }) => {
    const reg = registry(gate);
    const written = await reg.create('ns', cm(`c-${Math.random().toString(36).slice(2, 8)}`, { x: '1' }), ctx);
    const rv = written.object.metadata.resourceVersion!;
    const before = storeLists;
    const list = await reg.list('ns', { ...opts, resourceVersion: opts.resourceVersion === 'CURRENT' ? rv : opts.resourceVersion });
    expect(storeLists > before).toBe(fromStore);
    // Read-your-writes either way: a list at a revision not older than the write, equal to the store's.
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(rv));
    const inStore = (await store.list('/registry/core/configmaps/ns/', { limit: opts.limit })).items.map((kv) => kv.key.split('/').pop());
    expect(list.items.map((o) => o.metadata.name)).toEqual(inStore);
    if (!opts.limit) expect(inStore).toContain(written.object.metadata.name);
  });
});
