import { BUILTIN_RESOURCES } from '@orch/api';
import { DeletedFinalStateUnknown, SharedInformer, SharedInformerFactory, unwrapTombstone, visitOnEvents, type InformerOptions } from './informer';
import { RestClient } from './rest';
import { ApiPeer } from '@orch/testing';
import { memoryLogger, waitFor } from '@orch/testing';
import type { KubeObject } from '@orch/apimachinery';

const podsDef = BUILTIN_RESOURCES.find((r) => r.group === '' && r.resource === 'pods')!;
const PODS = '/v1/pods';
const PATH = '/api/v1/namespaces/ns/pods';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

const pod = (name: string, extra: Partial<Pod> = {}): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, ...extra });

/** Records handler calls as `add a`, `update a`, `delete a`, `tombstone a`. */
function recorder() {
  const calls: string[] = [];
  return {
    calls,
    handler: {
      onAdd: (o: Pod) => calls.push(`add ${o.metadata.name}`),
      onUpdate: (old: Pod, o: Pod) => calls.push(`update ${o.metadata.name}${old.metadata.resourceVersion === o.metadata.resourceVersion ? ' (same rv)' : ''}`),
      onDelete: (o: Pod | DeletedFinalStateUnknown<Pod>) => calls.push(`${o instanceof DeletedFinalStateUnknown ? 'tombstone' : 'delete'} ${unwrapTombstone(o).metadata.name}`),
    },
  };
}

describe('SharedInformer against a wire peer', () => {
  let peer: ApiPeer;
  let client: RestClient;
  let informer: SharedInformer<Pod>;
  let log: ReturnType<typeof memoryLogger>;

  const start = (opts: InformerOptions = {}) => {
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { backoff: { initialMs: 5, maxMs: 20 }, logger: log, pageSize: 3, ...opts });
    const rec = recorder();
    informer.addEventHandler(rec.handler);
    informer.run();
    return rec;
  };

  /** Once the informer watches: adds a, moves it to node n1, adds b, deletes a. */
  const addUpdateAddDelete = async () => {
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    peer.put(PODS, pod('a'));
    peer.put(PODS, pod('a', { spec: { nodeName: 'n1' } }));
    peer.put(PODS, pod('b'));
    peer.remove(PODS, 'ns', 'a');
  };

  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 2000 });
    log = memoryLogger();
  });
  afterEach(async () => {
    await informer?.stop();
    client.close();
    await peer.stop();
  });

  it('lists in pages, syncs, then watches from the list resourceVersion with bookmarks', async () => {
    for (const n of ['g', 'a', 'e', 'c', 'b', 'f', 'd']) peer.put(PODS, pod(n));
    peer.put(PODS, { ...pod('elsewhere'), metadata: { name: 'elsewhere', namespace: 'other' } });
    const rec = start();
    expect(await informer.waitForSync()).toBe(true);
    expect(informer.hasSynced()).toBe(true);
    expect(rec.calls).toEqual(['add a', 'add b', 'add c', 'add d', 'add e', 'add f', 'add g']);
    const lists = peer.lists(PATH);
    expect(lists.map((r) => [r.query.get('limit'), r.query.has('continue')])).toEqual([
      ['3', false],
      ['3', true],
      ['3', true],
    ]);
    await waitFor(() => peer.watches(PATH).length === 1, 'watch started');
    const w = peer.watches(PATH)[0].query;
    expect({ rv: w.get('resourceVersion'), bookmarks: w.get('allowWatchBookmarks') }).toEqual({ rv: peer.resourceVersion, bookmarks: 'true' });
    expect(Number(w.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    expect(informer.lastSyncResourceVersion()).toBe(peer.resourceVersion);
  });

  it('fills apiVersion and kind of list items that omit them', async () => {
    peer.intercept((r) =>
      r.query.get('watch') ? undefined : { status: 200, body: { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'x', namespace: 'ns', resourceVersion: '1' } }] } },
    );
    start();
    await informer.waitForSync();
    expect(informer.get('ns/x')).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
  });

  it('applies watch events in order and keeps the cache keyed by namespace/name', async () => {
    const rec = start();
    await addUpdateAddDelete();
    await waitFor(() => rec.calls.length === 4, 'four notifications');
    expect(rec.calls).toEqual(['add a', 'update a', 'add b', 'delete a']);
    expect(informer.keys()).toEqual(['ns/b']);
    expect(informer.get('ns/b')?.metadata.name).toBe('b');
    expect(informer.listInNamespace('ns').map((p) => p.metadata.name)).toEqual(['b']);
  });

  // What a controller's handlers see: each add, update (old object first when it matters) and delete, as plain objects.
  it.each([
    ['always (the default)', undefined, ['a:-', 'a:-', 'a:n1', 'b:-', 'a:n1']],
    ['never', () => false, ['a:-', 'a:n1', 'b:-', 'a:n1']],
    ['when the node changed', (old: Pod, cur: Pod) => old.spec?.nodeName !== cur.spec?.nodeName, ['a:-', 'a:-', 'a:n1', 'b:-', 'a:n1']],
    ['when its labels changed', (old: Pod, cur: Pod) => old.metadata.labels?.app !== cur.metadata.labels?.app, ['a:-', 'a:n1', 'b:-', 'a:n1']],
  ])('visitOnEvents visits the old object of an update %s', async (_name, visitOld, expected) => {
    start();
    const visited: string[] = [];
    visitOnEvents(informer, (p) => visited.push(`${p.metadata.name}:${p.spec?.nodeName ?? '-'}`), visitOld);
    await addUpdateAddDelete();
    await waitFor(() => visited.length === expected.length, 'every visit');
    expect(visited).toEqual(expected);
  });

  // After a 410 the relist is diffed against the cache.
  it.each([
    { name: 'deleted while disconnected → tombstone', change: (p: ApiPeer) => p.remove(PODS, 'ns', 'b'), want: ['tombstone b'], keys: ['ns/a', 'ns/c'] },
    { name: 'changed while disconnected → update', change: (p: ApiPeer) => p.put(PODS, pod('a', { spec: { nodeName: 'x' } })), want: ['update a'], keys: ['ns/a', 'ns/b', 'ns/c'] },
    { name: 'created while disconnected → add', change: (p: ApiPeer) => p.put(PODS, pod('d')), want: ['add d'], keys: ['ns/a', 'ns/b', 'ns/c', 'ns/d'] },
    { name: 'only other resources changed → no notification', change: (p: ApiPeer) => p.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } }), want: [], keys: ['ns/a', 'ns/b', 'ns/c'] },
    {
      name: 'everything at once',
      change: (p: ApiPeer) => {
        p.remove(PODS, 'ns', 'a');
        p.put(PODS, pod('c', { spec: { nodeName: 'y' } }));
        p.put(PODS, pod('e'));
      },
      want: ['update c', 'add e', 'tombstone a'],
      keys: ['ns/b', 'ns/c', 'ns/e'],
    },
  ])('relists on 410: $name', async ({ change, want, keys }) => {
    for (const n of ['a', 'b', 'c']) peer.put(PODS, pod(n));
    const rec = start();
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    rec.calls.length = 0;
    peer.paused = true;
    change(peer);
    peer.compact();
    peer.closeWatches();
    await waitFor(() => peer.lists(PATH).filter((r) => !r.query.has('continue')).length === 2, 'relist');
    await waitFor(() => peer.openWatches === 1, 'new watch');
    await new Promise((r) => setTimeout(r, 20));
    expect(rec.calls).toEqual(want);
    expect(informer.keys().sort()).toEqual(keys);
    expect(log.lines.some((l) => l.includes('too old resource version'))).toBe(true);
  });

  it('resumes from the last event resourceVersion after a normal close, without relisting', async () => {
    start();
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    peer.put(PODS, pod('a'));
    await waitFor(() => informer.keys().length === 1);
    const rv = peer.resourceVersion;
    peer.closeWatches();
    await waitFor(() => peer.watches(PATH).length === 2, 'second watch');
    expect(peer.watches(PATH)[1].query.get('resourceVersion')).toBe(rv);
    expect(peer.lists(PATH)).toHaveLength(1);
  });

  it('resumes from a bookmark resourceVersion', async () => {
    start();
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    peer.put(PODS, pod('a'));
    peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: 'ns' } }); // advances rv, not watched
    peer.bookmark();
    await waitFor(() => informer.lastSyncResourceVersion() === peer.resourceVersion, 'bookmark applied');
    peer.closeWatches();
    await waitFor(() => peer.watches(PATH).length === 2, 'second watch');
    expect(peer.watches(PATH)[1].query.get('resourceVersion')).toBe(peer.resourceVersion);
  });

  // Failures lead to a relist after backoff, never to a stopped informer.
  it.each([
    { name: 'list answered 500 once', fail: (path: string, watch: boolean, n: number) => !watch && n === 0 && path === PATH, wantLists: 2 },
    { name: 'watch answered 500 once', fail: (path: string, watch: boolean, n: number) => watch && n === 0 && path === PATH, wantLists: 2 },
    { name: 'list 500 three times', fail: (path: string, watch: boolean, n: number) => !watch && n < 3, wantLists: 4 },
  ])('recovers when $name', async ({ fail, wantLists }) => {
    const counts = { list: 0, watch: 0 };
    peer.intercept((r) => {
      const watch = r.query.get('watch') === 'true';
      const n = watch ? counts.watch++ : counts.list++;
      return fail(r.path, watch, n) ? { status: 500, body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' } } : undefined;
    });
    peer.put(PODS, pod('a'));
    const rec = start();
    await waitFor(() => peer.lists(PATH).length === wantLists && peer.openWatches === 1, 'recovered');
    expect(informer.hasSynced()).toBe(true);
    expect(rec.calls).toEqual(['add a']);
    expect(log.lines.filter((l) => l.startsWith('warn:') && l.includes('boom')).length).toBe(wantLists - 1);
  });

  // A restarted server (same store, same address) is watched again as soon as it listens, whatever
  // the backoff has grown to; the watch resumes from its resourceVersion instead of relisting.
  it.each([
    { name: 'the watch is cut', down: async () => peer.goDown() },
    { name: 'the watch ends cleanly first (a graceful shutdown)', down: async () => (peer.closeWatches(), await peer.goDown()) },
  ])('resumes the watch as soon as a restarted server listens again: $name', async ({ down }) => {
    peer.put(PODS, pod('a'));
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { backoff: { initialMs: 600_000, maxMs: 600_000 }, logger: log });
    const rec = recorder();
    informer.addEventHandler(rec.handler);
    informer.run();
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1, 'watching');
    const rv = informer.lastSyncResourceVersion();
    await down();
    await waitFor(() => log.lines.some((l) => l.includes('the server does not accept connections; waiting for it')), `the informer waits for the server: ${log.lines.join(' | ')}`);
    peer.put(PODS, pod('b')); // written while the informer cannot watch
    await peer.comeBack();
    await waitFor(() => rec.calls.includes('add b'), 'event written during the downtime', 10_000);
    expect(peer.lists(PATH)).toHaveLength(1);
    expect(peer.watches(PATH).at(-1)!.query.get('resourceVersion')).toBe(rv);
    peer.put(PODS, pod('c'));
    await waitFor(() => rec.calls.includes('add c'), 'event written after the restart');
  });

  // The gateway's graceful shutdown: the listener closes, then watches end; the re-watch, sent on
  // the kept-alive connection, is answered 503. Not a reason to wait out a ten-minute backoff.
  it('comes back as soon as a restarted server listens when the closing server answered the re-watch 503', async () => {
    peer.put(PODS, pod('a'));
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { backoff: { initialMs: 600_000, maxMs: 600_000 }, logger: log });
    const rec = recorder();
    informer.addEventHandler(rec.handler);
    informer.run();
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1, 'watching');
    peer.put(PODS, pod('b')); // the watch delivers an event: its clean end is a healthy one, re-watched at once
    await waitFor(() => rec.calls.includes('add b'), 'watch event');
    await peer.shutDown();
    await waitFor(() => log.lines.some((l) => l.includes('the server does not accept connections; waiting for it')), `the informer waits for the server: ${log.lines.join(' | ')}`);
    expect(peer.refusedWhileClosing).toBe(1);
    peer.put(PODS, pod('c')); // written while the server is down
    await peer.comeBack();
    await waitFor(() => rec.calls.includes('add c'), 'event written during the downtime', 10_000);
  });

  it('keeps its backoff when the server accepts connections but breaks them', async () => {
    let broken = 0;
    peer.intercept((r) => (r.query.get('watch') === 'true' && ++broken ? { status: 0, reset: true } : undefined));
    peer.put(PODS, pod('a'));
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { backoff: { initialMs: 600_000, maxMs: 600_000 }, logger: log });
    informer.run();
    await informer.waitForSync();
    await waitFor(() => broken === 1 && log.lines.some((l) => l.startsWith('warn:')), 'watch broken');
    // The server was reachable: no shortcut, the informer waits out its (long) backoff.
    await new Promise((r) => setTimeout(r, 1000));
    expect(broken).toBe(1);
  });

  it('hands out frozen objects', async () => {
    peer.put(PODS, pod('a', { spec: { nodeName: 'n' } }));
    const seen: Pod[] = [];
    start();
    informer.addEventHandler({ onAdd: (o) => seen.push(o) });
    await informer.waitForSync();
    const cached = informer.get('ns/a')!;
    expect(() => {
      (cached.metadata as { name?: string }).name = 'x';
    }).toThrow(TypeError);
    expect(() => {
      cached.spec!.nodeName = 'other';
    }).toThrow(TypeError);
    await waitFor(() => seen.length === 1);
    expect(Object.isFrozen(seen[0].spec)).toBe(true);
  });

  it('freezes only the top level in shallow mode', async () => {
    peer.put(PODS, pod('a', { spec: { nodeName: 'n' } }));
    start({ freeze: 'shallow' });
    await informer.waitForSync();
    const cached = informer.get('ns/a')!;
    expect(Object.isFrozen(cached)).toBe(true);
    expect(Object.isFrozen(cached.spec)).toBe(false);
  });

  it('keeps dispatching when a handler throws, and logs the error', async () => {
    peer.put(PODS, pod('a'));
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { logger: log });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const rec = recorder();
    informer.addEventHandler(rec.handler);
    informer.run();
    await informer.waitForSync();
    expect(rec.calls).toEqual(['add a']);
    expect(log.lines.some((l) => l.startsWith('error:') && l.includes('handler bug'))).toBe(true);
  });

  it('replays the cache to a handler added after sync, then streams to it', async () => {
    for (const n of ['a', 'b']) peer.put(PODS, pod(n));
    start();
    await informer.waitForSync();
    const late = recorder();
    informer.addEventHandler(late.handler);
    await waitFor(() => late.calls.length === 2);
    await waitFor(() => peer.openWatches === 1);
    peer.put(PODS, pod('c'));
    await waitFor(() => late.calls.length === 3);
    expect(late.calls.sort()).toEqual(['add a', 'add b', 'add c']);
  });

  it('stops handlers after unregistering', async () => {
    const rec = start();
    const other = recorder();
    const off = informer.addEventHandler(other.handler);
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    off();
    peer.put(PODS, pod('a'));
    await waitFor(() => rec.calls.length === 1);
    expect(other.calls).toEqual([]);
  });

  it('indexes by custom indexers, also when added after objects arrived', async () => {
    peer.put(PODS, pod('a', { spec: { nodeName: 'n1' } }));
    peer.put(PODS, pod('b', { spec: { nodeName: 'n2' } }));
    start();
    await informer.waitForSync();
    informer.addIndexer('node', (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    expect(informer.byIndex('node', 'n1').map((p) => p.metadata.name)).toEqual(['a']);
    await waitFor(() => peer.openWatches === 1);
    peer.put(PODS, pod('c', { spec: { nodeName: 'n1' } }));
    peer.put(PODS, pod('a', { spec: { nodeName: 'n2' } }));
    await waitFor(() => informer.byIndex('node', 'n2').length === 2);
    expect(informer.byIndex('node', 'n1').map((p) => p.metadata.name)).toEqual(['c']);
  });

  it('stops promptly while backing off, leaving no timers or watches', async () => {
    peer.intercept(() => ({ status: 503, body: { kind: 'Status', code: 503, message: 'down' } }));
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { logger: log, backoff: { initialMs: 10_000 } });
    informer.run();
    const synced = informer.waitForSync();
    await waitFor(() => peer.lists(PATH).length === 1);
    const t0 = Date.now();
    await informer.stop();
    expect(Date.now() - t0).toBeLessThan(5000); // did not wait out the 10 s backoff
    expect(await synced).toBe(false);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(timersBefore);
  });

  // A young watch (no event yet) ends unhealthy when stopped: stop() must not wait out the backoff.
  it.each([
    { name: 'short backoff', backoff: { initialMs: 5, maxMs: 20 } },
    { name: 'ten-minute backoff', backoff: { initialMs: 600_000, maxMs: 600_000 } },
  ])('stops an open watch ($name)', async ({ backoff }) => {
    start({ backoff });
    await informer.waitForSync();
    await waitFor(() => peer.openWatches === 1);
    await informer.stop();
    await waitFor(() => peer.openWatches === 0, 'watch closed');
    expect(informer.running).toBe(false);
    await informer.stop();
  });

  it('waitForSync resolves false on abort', async () => {
    peer.intercept(() => ({ status: 0, hang: true }));
    informer = new SharedInformer<Pod>(client.resource<Pod>(podsDef, 'ns'), { logger: log });
    informer.run();
    const ac = new AbortController();
    const p = informer.waitForSync(ac.signal);
    ac.abort();
    expect(await p).toBe(false);
  });
});

describe('SharedInformerFactory', () => {
  let peer: ApiPeer;
  let client: RestClient;
  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url }, { component: 'test' });
  });
  afterEach(async () => {
    client.close();
    await peer.stop();
  });

  it('shares one informer per resource, namespace and selectors', async () => {
    const f = new SharedInformerFactory(client, { namespace: 'ns' });
    const a = f.informerFor(podsDef);
    const rows = [
      { name: 'same args', other: () => f.informerFor(podsDef), same: true },
      { name: 'same gvr form', other: () => f.informerFor({ group: '', version: 'v1', resource: 'pods' }), same: true },
      { name: 'other namespace', other: () => f.informerFor(podsDef, { namespace: 'x' }), same: false },
      { name: 'all namespaces', other: () => f.informerFor(podsDef, { namespace: '' }), same: false },
      { name: 'label selector', other: () => f.informerFor(podsDef, { labelSelector: 'a=b' }), same: false },
      { name: 'field selector', other: () => f.informerFor(podsDef, { fieldSelector: 'spec.nodeName=n' }), same: false },
    ];
    for (const r of rows) expect({ name: r.name, same: r.other() === a }).toEqual({ name: r.name, same: r.same });
    await f.shutdown();
  });

  it('starts, syncs and shuts down all informers; late informers run at once', async () => {
    peer.put(PODS, pod('a'));
    peer.put('/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    const f = new SharedInformerFactory(client);
    const p = f.informerFor<Pod>(podsDef);
    f.start();
    const nodes = f.informerFor(BUILTIN_RESOURCES.find((r) => r.resource === 'nodes')!);
    expect(await f.waitForCacheSync()).toBe(true);
    expect(p.keys()).toEqual(['ns/a']);
    expect(nodes.keys()).toEqual(['n1']);
    expect(peer.lists('/api/v1/pods')).toHaveLength(1);
    await f.shutdown();
    expect(p.running || nodes.running).toBe(false);
    expect(() => f.informerFor(podsDef)).toThrow(/shut down/);
  });
});
