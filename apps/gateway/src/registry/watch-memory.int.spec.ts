import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { DEFAULT_EVENT_MEMO_WEIGHT, type MemoryHistory } from '@orch/watch';
import { GenericStore } from './generic-store';
import { resolveKind } from './kinds';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from './registry-fixture';
import type { WatchEventOut, WatchHandle } from './store-types';
import type { RequestContext } from './strategy';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** A full collection after the current job (a WeakRef keeps its target alive until the job ends). */
const collect = () => new Promise<void>((resolve) => setImmediate(() => (gc(), resolve())));

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [] };
const def = new Catalog().lookup('', 'v1', 'configmaps')!;
const opts = { ...TEST_REGISTRY_OPTIONS, consistentListFromCache: true };
const cm = (name: string, labels: Record<string, string>, v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { v } }) as KubeObject;

/**
 * A watcher that remembers what it was sent only weakly (a client that wrote it out), and whether
 * each object is one `shared` (another watcher's sink) was sent too. Nothing is dereferenced before
 * the collection: a WeakRef keeps what it hands out alive for the rest of the job, and longer.
 */
function weakSink(shared?: WeakSet<object>): { refs: WeakRef<object>[]; seen: WeakSet<object>; sharedWith: boolean[]; sink: { send(e: WatchEventOut): void; end(): void } } {
  const refs: WeakRef<object>[] = [];
  const seen = new WeakSet<object>();
  const sharedWith: boolean[] = [];
  const send = (e: WatchEventOut) => {
    // A sink that takes no text: every event carries its object.
    const object = e.object!;
    refs.push(new WeakRef(object));
    seen.add(object);
    sharedWith.push(!!shared?.has(object));
  };
  return { refs, seen, sharedWith, sink: { send, end: () => undefined } };
}

/**
 * Memory of watch serving (issues 12 and 16): the history keeps each event as the store event
 * only (its value shared with the cached object); what watch serving derives from it (the
 * parsed object) is shared by the watchers while the event is recent, then let go.
 */
describe('watch events are not kept with the history (real SQLite store)', () => {
  let fixture: RegistryFixture;
  let history: MemoryHistory;
  let reg: GenericStore;

  beforeAll(async () => {
    fixture = await openRegistryFixture('watch-memory');
    history = fixture.cache.history as MemoryHistory;
    reg = new GenericStore(def, resolveKind(def, { k8sCompatibility: false }), fixture.store, fixture.cache, opts);
  });
  afterAll(() => fixture.close());

  it('two watchers (one label-selected) share each parsed object; beyond the recent ones, none is retained while the history keeps every event', async () => {
    const all = weakSink();
    const selected = weakSink(all.seen);
    const from = String(fixture.cache.currentRevision());
    const handles: WatchHandle[] = [await reg.watch('ns', { resourceVersion: from }, all.sink), await reg.watch('ns', { resourceVersion: from, labelSelector: 'app=x' }, selected.sink)];
    // Objects of 256 Ki characters: the parsed objects of a few recent events weigh the memo's whole bound.
    const big = 'x'.repeat(256 * 1024);
    const n = 20;
    const historyBefore = history.size();
    for (let i = 0; i < n; i++) await reg.create('ns', cm(`m-${i}`, { app: 'x' }, `1${big}`), ctx);
    for (let i = 0; i < n; i++) await reg.update('ns', `m-${i}`, cm(`m-${i}`, { app: 'x' }, `2${big}`), ctx);
    for (let i = 0; i < 100 && all.refs.length < 2 * n; i++) await new Promise((r) => setTimeout(r, 20));
    expect(all.refs).toHaveLength(2 * n);
    expect(selected.refs).toHaveLength(2 * n);
    // The label-selected watcher (subscribed second) got the very objects the other one did.
    expect(selected.sharedWith).toEqual(all.refs.map(() => true));

    await collect();
    expect(history.size() - historyBefore).toBe(2 * n);
    const alive = all.refs.map((r, i) => (r.deref() !== undefined ? i : -1)).filter((i) => i >= 0);
    // Only the newest events' objects, within the memo's bound (each update weighs 2 × 256 Ki characters).
    expect(alive.length).toBeLessThanOrEqual(Math.ceil(DEFAULT_EVENT_MEMO_WEIGHT / (2 * big.length)));
    expect(alive.filter((i) => i < 2 * n - 10)).toEqual([]);
    for (const h of handles) h.stop();
  });

  it('a watch resuming from an old resourceVersion replays the history after the objects were let go', async () => {
    const from = fixture.cache.currentRevision();
    for (let i = 0; i < 5; i++) await reg.create('ns', cm(`r-${i}`, {}, '1'), ctx);
    await reg.delete('ns', 'r-0', {}, ctx);
    await collect();
    const got: WatchEventOut[] = [];
    const h = await reg.watch('ns', { resourceVersion: String(from) }, { send: (e) => void got.push(e), end: () => undefined });
    for (let i = 0; i < 100 && got.length < 6; i++) await new Promise((r) => setTimeout(r, 20));
    h.stop();
    expect(got.map((e) => `${e.type} ${(e.object as KubeObject).metadata.name}`)).toEqual(['ADDED r-0', 'ADDED r-1', 'ADDED r-2', 'ADDED r-3', 'ADDED r-4', 'DELETED r-0']);
  });
});
