import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { Store } from '@orch/storage';
import type { WatchCache } from '@orch/watch';
import { GenericStore } from './generic-store';
import { resolveKind } from './kinds';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from './registry-fixture';
import type { RequestContext } from './strategy';

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [] };
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } }) as KubeObject;

/** ConsistentListFromCache: a list is served by the watch cache only when it provably holds every acknowledged write. */
describe('lists from the watch cache (real SQLite store)', () => {
  let fixture: RegistryFixture;
  let store: Store;
  let storeLists = 0;
  let cache: WatchCache;
  const registry = (consistentListFromCache: boolean, s: Store = store) => {
    const def = new Catalog().lookup('', 'v1', 'configmaps')!;
    return new GenericStore(def, resolveKind(def, { k8sCompatibility: false }), s, cache, { ...TEST_REGISTRY_OPTIONS, consistentListFromCache });
  };

  beforeAll(async () => {
    // Counts the lists that reach the store; everything else passes through.
    fixture = await openRegistryFixture('list-cache', (real) => new Proxy(real, { get: (t, p) => (p === 'list' ? (...a: Parameters<Store['list']>) => (storeLists++, t.list(...a)) : (t as never)[p]) }) as Store);
    ({ store, cache } = fixture);
  });
  afterAll(() => fixture.close());

  it.each([
    { name: 'consistent list (no resourceVersion)', gate: true, opts: {}, fromStore: false },
    { name: 'resourceVersion=0', gate: true, opts: { resourceVersion: '0' }, fromStore: false },
    { name: 'with a label selector', gate: true, opts: { labelSelector: 'x=1' }, fromStore: false },
    { name: 'consistent list with a limit (first page)', gate: true, opts: { limit: 1 }, fromStore: false },
    { name: 'resourceVersion=0 with a limit', gate: true, opts: { resourceVersion: '0', limit: 1 }, fromStore: false },
    { name: 'NotOlderThan with a limit', gate: true, opts: { resourceVersion: 'CURRENT', resourceVersionMatch: 'NotOlderThan', limit: 1 }, fromStore: false },
    { name: 'a limit with a resourceVersion the cache holds (legacy exact)', gate: true, opts: { resourceVersion: 'CURRENT', limit: 1 }, fromStore: false },
    { name: 'a limit with an older resourceVersion (legacy exact: the store)', gate: true, opts: { resourceVersion: 'OLDER', limit: 1 }, fromStore: true },
    { name: 'resourceVersionMatch=Exact at the revision the cache holds', gate: true, opts: { resourceVersion: 'CURRENT', resourceVersionMatch: 'Exact' }, fromStore: false },
    { name: 'resourceVersionMatch=Exact at an older revision (the store)', gate: true, opts: { resourceVersion: 'OLDER', resourceVersionMatch: 'Exact' }, fromStore: true },
    { name: 'gate off', gate: false, opts: {}, fromStore: true },
  ])('$name', async ({ gate, opts, fromStore }) => {
    const reg = registry(gate);
    const written = await reg.create('ns', cm(`c-${Math.random().toString(36).slice(2, 8)}`, { x: '1' }), ctx);
    const rv = written.object.metadata.resourceVersion!;
    const older = opts.resourceVersion === 'OLDER';
    if (older) await reg.create('ns', cm(`c-${Math.random().toString(36).slice(2, 8)}`), ctx);
    await cache.waitForRevision(await store.currentRevision(), 5000);
    const before = storeLists;
    const list = await reg.list('ns', { ...opts, resourceVersion: opts.resourceVersion === 'CURRENT' || older ? rv : opts.resourceVersion });
    expect(storeLists > before).toBe(fromStore);
    // Read-your-writes either way: a list at a revision not older than the write, equal to the store's at that revision.
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(rv));
    const inStore = (await store.list('/registry/core/configmaps/ns/', { limit: opts.limit, revision: Number(list.metadata.resourceVersion) })).items.map((kv) => kv.key.split('/').pop());
    expect(list.items.map((o) => o.metadata.name)).toEqual(inStore);
    if (!opts.limit) expect(inStore).toContain(written.object.metadata.name);
  });

  /** Every page of a limited list, following continue tokens; counts the pages that read the store. */
  const allPages = async (reg: GenericStore, namespace: string, limit: number, between?: () => Promise<void>) => {
    const pages: { names: string[]; rv: string; remaining?: number; fromStore: boolean }[] = [];
    let token: string | undefined;
    do {
      const before = storeLists;
      const page = await reg.list(namespace, { limit, continue: token });
      pages.push({ names: page.items.map((o) => o.metadata.name!), rv: page.metadata.resourceVersion!, remaining: page.metadata.remainingItemCount, fromStore: storeLists > before });
      token = page.metadata.continue;
      if (token && between) await between();
    } while (token);
    return pages;
  };

  it.each([
    { name: 'one namespace', namespace: 'paged', write: ['paged'] },
    { name: 'every namespace (one page spans namespaces)', namespace: '', write: ['paged-a', 'paged-b'] },
  ])('continue pages come from the cache while it holds their snapshot, and equal the store at that revision: $name', async ({ namespace, write }) => {
    const reg = registry(true);
    for (const ns of write) for (let i = 0; i < 5; i++) await reg.create(ns, cm(`p-${i}`), { ...ctx, namespace: ns });
    await cache.waitForRevision(await store.currentRevision(), 5000);
    const pages = await allPages(reg, namespace, 2);
    const rv = Number(pages[0].rv);
    const prefix = `/registry/core/configmaps/${namespace ? `${namespace}/` : ''}`;
    const want = (await store.list(prefix, { revision: rv })).items.map((kv) => kv.key.split('/').pop());
    expect(pages.flatMap((p) => p.names)).toEqual(want);
    expect(pages.every((p) => p.rv === String(rv) && !p.fromStore)).toBe(true);
    expect(pages[0].remaining).toBe(want.length - 2);
  });

  it('a page after a write reads the store at the token\'s snapshot: the pages stay one consistent list', async () => {
    const reg = registry(true);
    for (let i = 0; i < 6; i++) await reg.create('moving', cm(`m-${i}`), { ...ctx, namespace: 'moving' });
    await cache.waitForRevision(await store.currentRevision(), 5000);
    let n = 0;
    // Between pages: a new object sorts into the unread part, a read object goes away.
    const pages = await allPages(reg, 'moving', 2, async () => {
      const made = await reg.create('moving', cm(`m-${n++}x`), { ...ctx, namespace: 'moving' });
      await cache.waitForRevision(Number(made.object.metadata.resourceVersion), 5000);
    });
    expect(pages.map((p) => p.fromStore)).toEqual([false, true, true]);
    expect(pages.flatMap((p) => p.names)).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(new Set(pages.map((p) => p.rv)).size).toBe(1);
  });

  it('a label-selected page from the cache reads past non-matching objects', async () => {
    const reg = registry(true);
    for (let i = 0; i < 8; i++) await reg.create('sel', cm(`s-${i}`, { odd: String(i % 2) }), { ...ctx, namespace: 'sel' });
    await cache.waitForRevision(await store.currentRevision(), 5000);
    const before = storeLists;
    const first = await reg.list('sel', { limit: 3, labelSelector: 'odd=1' });
    expect(storeLists).toBe(before);
    expect(first.items.map((o) => o.metadata.name)).toEqual(['s-1', 's-3', 's-5']);
    const rest = await reg.list('sel', { limit: 3, labelSelector: 'odd=1', continue: first.metadata.continue });
    expect(rest.items.map((o) => o.metadata.name)).toEqual(['s-7']);
    expect(rest.metadata.continue).toBeUndefined();
  });

  it('cache pages follow key order when one directory begins with another (the store\'s order)', async () => {
    for (const key of ['/registry/nest/a', '/registry/nest/a/b', '/registry/nest/a-c/d', '/registry/nest/b', '/registry/nest/a/a', '/registry/nest/0']) await store.create(key, '{}');
    await cache.waitForRevision(await store.currentRevision(), 5000);
    const walk = async (list: (startAfter?: string) => Promise<{ items: { key: string }[]; remaining: number }>) => {
      const out: [string, number][] = [];
      let after: string | undefined;
      for (;;) {
        const page = await list(after);
        if (page.items.length === 0) return out;
        out.push([page.items[0].key, page.remaining]);
        after = page.items[0].key;
      }
    };
    const fromCache = await walk(async (startAfter) => cache.list('/registry/nest/', { startAfter, limit: 1 }));
    expect(fromCache).toEqual(await walk((startAfter) => store.list('/registry/nest/', { startAfter, limit: 1 })));
    expect(fromCache).toHaveLength(6);
  });
});
