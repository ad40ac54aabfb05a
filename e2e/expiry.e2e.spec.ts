import { startGateway, type GatewayProcess } from './support/gateway';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Short continue-token and watch-history lifetimes, and the WatchList gate on. */
describe('expiry and streaming lists', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ args: ['--continue-token-lifetime=1s', '--watch-history-retention=2s', '--feature-gates=WatchList=true'] });
    for (let i = 0; i < 5; i++) await gw.admin.post('/api/v1/namespaces/default/configmaps', cm(`x-${i}`));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('an expired continue token answers 410 Expired', async () => {
    const first = await gw.admin.get('/api/v1/namespaces/default/configmaps?limit=2');
    await sleep(1500);
    const r = await gw.admin.get(`/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(r.status).toBe(410);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
  });

  it('a watch from a resourceVersion older than the retained history gets a 410 ERROR event', async () => {
    const old = (await gw.admin.get('/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;
    await gw.admin.post('/api/v1/namespaces/default/configmaps', cm('later'));
    await sleep(3000);
    await gw.admin.post('/api/v1/namespaces/default/configmaps', cm('much-later'));
    const r = await gw.admin.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${old}`, (evs) => evs.length >= 1, 5000);
    expect(r.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(r.events[0].object.message).toMatch(/too old resource version/);
  });

  it('sendInitialEvents streams ADDED for every object, then a BOOKMARK marking the end', async () => {
    const r = await gw.admin.watch(
      '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
      (evs) => evs.some((e) => e.type === 'BOOKMARK'),
      5000,
    );
    const added = r.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
    expect(added).toEqual(expect.arrayContaining(['x-0', 'x-4', 'later', 'much-later']));
    const bookmark = r.events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark.object.metadata.annotations['orch.io/initial-events-end']).toBe('true');
    expect(r.events.indexOf(bookmark)).toBe(r.events.length - 1);
  });

  it('sendInitialEvents requires resourceVersionMatch=NotOlderThan', async () => {
    const r = await gw.admin.get('/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true');
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/resourceVersionMatch/);
  });
});

describe('WatchList gate off (default)', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('refuses sendInitialEvents', async () => {
    const r = await gw.admin.get('/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/WatchList feature gate/);
  });
});
