import { Catalog, type ResourceDef } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { GenericStore } from './generic-store';
import { resolveKind } from './kinds';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from './registry-fixture';
import type { WatchEventOut, WatchOptions } from './store-types';
import type { RequestContext, Strategy } from './strategy';

const catalog = new Catalog();
const configmaps = catalog.lookup('', 'v1', 'configmaps')!;
const secrets = catalog.lookup('', 'v1', 'secrets')!;
const opts = { ...TEST_REGISTRY_OPTIONS, consistentListFromCache: true, watchListEnabled: true };
const ctx = (namespace: string): RequestContext => ({ user: { username: 'admin', groups: ['system:masters'] }, namespace, dryRun: false, warnings: [] });
const obj = (def: ResourceDef, name: string, labels: Record<string, string> | undefined, v: string) =>
  ({ apiVersion: 'v1', kind: def.kind, metadata: { name, ...(labels ? { labels } : {}) }, ...(def.kind === 'Secret' ? { type: 'Opaque' } : {}), data: { v: Buffer.from(v).toString('base64') } }) as KubeObject;

/** An event as the pipeline writes it to a JSON watch: the stored text as it is, or the object written out. */
const line = (e: WatchEventOut) => (e.json !== undefined ? `{"type":"${e.type}","object":${e.json.text}}` : JSON.stringify(e));
const short = (e: WatchEventOut) => `${e.type} ${(JSON.parse(line(e)) as { object: KubeObject }).object.metadata.name}${e.json !== undefined ? '' : ' (object)'}`;

interface Row {
  name: string;
  def?: ResourceDef;
  strategy?: (s: Strategy) => Strategy;
  watch: WatchOptions;
  /** Writes before the watch starts (initial events, or replayed from its resourceVersion). */
  before?: (reg: GenericStore, ns: string) => Promise<void>;
  writes: (reg: GenericStore, ns: string, fixture: RegistryFixture) => Promise<void>;
  /** What the text-taking sink receives (`(object)`: the object path). */
  want: string[];
}

const x = { app: 'x' };
const y = { app: 'y' };

/**
 * Watch events from the stored text (issue 16): a sink that takes text receives, for every
 * event, the bytes a sink of objects would write, and the same events (selection changes, initial
 * events, replay); where a value or the resource is not served as stored, the object path.
 */
describe('watch events as stored text (real SQLite store)', () => {
  let fixture: RegistryFixture;
  beforeAll(async () => (fixture = await openRegistryFixture('watch-text')));
  afterAll(() => fixture.close());

  const rows: Row[] = [
    {
      name: 'no selector: create, update, delete',
      watch: {},
      writes: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.update(ns, 'a', obj(configmaps, 'a', x, '2'), ctx(ns));
        await reg.delete(ns, 'a', {}, ctx(ns));
      },
      want: ['ADDED a', 'MODIFIED a', 'DELETED a'],
    },
    {
      name: 'a label selector: objects entering and leaving the selection',
      watch: { labelSelector: 'app=x' },
      writes: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.create(ns, obj(configmaps, 'b', y, '1'), ctx(ns));
        await reg.update(ns, 'a', obj(configmaps, 'a', y, '2'), ctx(ns));
        await reg.update(ns, 'b', obj(configmaps, 'b', x, '2'), ctx(ns));
        await reg.update(ns, 'b', obj(configmaps, 'b', x, '3'), ctx(ns));
        await reg.update(ns, 'a', obj(configmaps, 'a', undefined, '3'), ctx(ns));
        await reg.delete(ns, 'a', {}, ctx(ns));
        await reg.delete(ns, 'b', {}, ctx(ns));
      },
      want: ['ADDED a', 'DELETED a', 'ADDED b', 'MODIFIED b', 'DELETED b'],
    },
    {
      name: 'a field selector on metadata.name',
      watch: { fieldSelector: 'metadata.name=b' },
      writes: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.create(ns, obj(configmaps, 'b', x, '1'), ctx(ns));
        await reg.update(ns, 'b', obj(configmaps, 'b', y, '2'), ctx(ns));
        await reg.delete(ns, 'b', {}, ctx(ns));
      },
      want: ['ADDED b', 'MODIFIED b', 'DELETED b'],
    },
    {
      name: 'initial events (no resourceVersion), then live ones',
      watch: {},
      before: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.create(ns, obj(configmaps, 'b', y, '1'), ctx(ns));
      },
      writes: async (reg, ns) => void (await reg.update(ns, 'a', obj(configmaps, 'a', x, '2'), ctx(ns))),
      want: ['ADDED a', 'ADDED b', 'MODIFIED a'],
    },
    {
      name: 'label-selected initial events of a watch-list (sendInitialEvents), then live ones',
      watch: { labelSelector: 'app=y', sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: '' },
      before: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.create(ns, obj(configmaps, 'b', y, '1'), ctx(ns));
      },
      writes: async (reg, ns) => void (await reg.update(ns, 'a', obj(configmaps, 'a', y, '2'), ctx(ns))),
      want: ['ADDED b', 'ADDED a'],
    },
    {
      name: 'resuming from an old resourceVersion replays the history',
      watch: { resourceVersion: 'start' },
      before: async (reg, ns) => {
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.delete(ns, 'a', {}, ctx(ns));
      },
      writes: async (reg, ns) => void (await reg.create(ns, obj(configmaps, 'b', x, '1'), ctx(ns))),
      want: ['ADDED a', 'DELETED a', 'ADDED b'],
    },
    {
      name: 'a value not in the stored form (kind first) takes the object path, the others do not',
      watch: {},
      writes: async (reg, ns, f) => {
        await f.store.create(reg.key(ns, 'odd'), JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'odd', namespace: ns, uid: 'u-1' } }));
        await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns));
        await reg.delete(ns, 'odd', {}, ctx(ns));
      },
      want: ['ADDED odd (object)', 'ADDED a', 'DELETED odd (object)'],
    },
    {
      name: 'a strategy that normalizes reads (onRead): the object path',
      strategy: (s) => ({ ...s, onRead: (o: KubeObject) => void (o.metadata.annotations = { normalized: 'on-read' }) }),
      watch: {},
      writes: async (reg, ns) => void (await reg.create(ns, obj(configmaps, 'a', x, '1'), ctx(ns))),
      want: ['ADDED a (object)'],
    },
    {
      name: 'a field selector on another field (a Secret\'s type): the object path',
      def: secrets,
      watch: { fieldSelector: 'type=Opaque' },
      writes: async (reg, ns) => void (await reg.create(ns, obj(secrets, 's', x, '1'), ctx(ns))),
      want: ['ADDED s (object)'],
    },
  ];

  it.each(rows.map((r, i) => ({ ...r, i })))('$name', async ({ i, def = configmaps, strategy, watch, before, writes, want }) => {
    const kind = resolveKind(def, { k8sCompatibility: false });
    const reg = new GenericStore(def, { ...kind, strategy: strategy ? strategy(kind.strategy) : kind.strategy }, fixture.store, fixture.cache, opts);
    const ns = `t-${i}`;
    const start = String(fixture.cache.currentRevision());
    await before?.(reg, ns);
    const resourceVersion = watch.resourceVersion === 'start' ? start : watch.resourceVersion;
    const texts: WatchEventOut[] = [];
    const objects: WatchEventOut[] = [];
    const handles = [
      await reg.watch(ns, { ...watch, resourceVersion }, { send: (e) => void texts.push(e), end: () => undefined, acceptsText: true }),
      await reg.watch(ns, { ...watch, resourceVersion }, { send: (e) => void objects.push(e), end: () => undefined }),
    ];
    await writes(reg, ns, fixture);
    for (let n = 0; n < 200 && (texts.length < want.length || objects.length < want.length); n++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    for (const h of handles) h.stop();
    expect(texts.map(short)).toEqual(want);
    expect(objects.every((e) => e.json === undefined)).toBe(true);
    expect(texts.map(line)).toEqual(objects.map(line));
  });

  it('watchers that take text share each event\'s StoredText (one splice for all of them)', async () => {
    const reg = new GenericStore(configmaps, resolveKind(configmaps, { k8sCompatibility: false }), fixture.store, fixture.cache, opts);
    const from = String(fixture.cache.currentRevision());
    const got: WatchEventOut[][] = [[], [], []];
    const handles = await Promise.all(
      [{}, { labelSelector: 'app=x' }, { fieldSelector: 'metadata.name=a' }].map((w, i) => reg.watch('shared', { ...w, resourceVersion: from }, { send: (e) => void got[i].push(e), end: () => undefined, acceptsText: true })),
    );
    await reg.create('shared', obj(configmaps, 'a', x, '1'), ctx('shared'));
    for (let n = 0; n < 200 && got.some((g) => g.length < 1); n++) await new Promise((r) => setTimeout(r, 10));
    for (const h of handles) h.stop();
    expect(got.map((g) => g.length)).toEqual([1, 1, 1]);
    expect(got[0][0].json).toBeDefined();
    expect(got[1][0].json).toBe(got[0][0].json);
    expect(got[2][0].json).toBe(got[0][0].json);
  });

  it('watchers without selectors are sent one event object per store event (made once for all of them)', async () => {
    const reg = new GenericStore(configmaps, resolveKind(configmaps, { k8sCompatibility: false }), fixture.store, fixture.cache, opts);
    const from = String(fixture.cache.currentRevision());
    const got: WatchEventOut[][] = [[], [], []];
    const handles = await Promise.all(
      [{}, {}, { labelSelector: 'app=x' }].map((w, i) => reg.watch('unfiltered', { ...w, resourceVersion: from }, { send: (e) => void got[i].push(e), end: () => undefined, acceptsText: true })),
    );
    await reg.create('unfiltered', obj(configmaps, 'a', x, '1'), ctx('unfiltered'));
    await reg.update('unfiltered', 'a', obj(configmaps, 'a', x, '2'), ctx('unfiltered'));
    await reg.delete('unfiltered', 'a', {}, ctx('unfiltered'));
    for (let n = 0; n < 200 && got.some((g) => g.length < 3); n++) await new Promise((r) => setTimeout(r, 10));
    for (const h of handles) h.stop();
    expect(got.map((g) => g.map(short))).toEqual(Array.from({ length: 3 }, () => ['ADDED a', 'MODIFIED a', 'DELETED a']));
    got[0].forEach((e, k) => {
      expect(got[1][k]).toBe(e);
      // A watcher with selectors has its own event (its type may differ), of the same text.
      expect(got[2][k]).not.toBe(e);
      expect(got[2][k].json).toBe(e.json);
    });
  });
});
