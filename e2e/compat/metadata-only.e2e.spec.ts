import { decodeProtobuf } from '@orch/api';
import { startGateway, type GatewayProcess } from '../support/gateway';

/**
 * Requests shaped exactly as client-go's metadata client sends them (metadata informers of
 * garbage collectors, kube-state-metrics, operators): `as=PartialObjectMetadataList` for lists
 * and `as=PartialObjectMetadata` for gets and watches, protobuf first, both meta group
 * spellings; and boolean query parameters as Go parses them. Before the compatibility work
 * these were 406 (metadata) and silent lists (watch=True).
 */
const LIST_ACCEPT = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const LIST_ACCEPT_JSON = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const ITEM_ACCEPT_JSON = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const CMS = '/api/v1/namespaces/meta/configmaps';

describe('metadata-only clients and Go booleans (raw client-go-shaped requests)', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
    expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'meta' } })).status).toBe(201);
    for (const name of ['a', 'b']) {
      expect((await gw.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'meta' } }, data: { secret: 'not in the view' } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a list as client-go asks: PartialObjectMetadataList in protobuf, metadata only', async () => {
    const r = await gw.admin.get(CMS, { headers: { accept: LIST_ACCEPT } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    const list = decodeProtobuf(r.body) as unknown as { apiVersion: string; kind: string; items: Record<string, unknown>[]; metadata: { resourceVersion: string } };
    expect({ apiVersion: list.apiVersion, kind: list.kind }).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.items.map((i) => (i.metadata as { name: string }).name)).toEqual(['a', 'b']);
    expect(list.items.every((i) => i.kind === 'PartialObjectMetadata' && !('data' in i))).toBe(true);
  });

  it.each([
    { name: 'list, JSON', path: CMS, accept: LIST_ACCEPT_JSON, want: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' } },
    { name: 'get', path: `${CMS}/a`, accept: ITEM_ACCEPT_JSON, want: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' } },
    { name: 'get, meta.orch.io spelling', path: `${CMS}/a`, accept: 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1', want: { apiVersion: 'meta.orch.io/v1', kind: 'PartialObjectMetadata' } },
    { name: 'get, v1beta1', path: `${CMS}/a`, accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', want: { apiVersion: 'meta.k8s.io/v1beta1', kind: 'PartialObjectMetadata' } },
  ])('$name', async ({ path, accept, want }) => {
    const r = await gw.admin.get(path, { headers: { accept } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject(want);
    expect(r.json.data).toBeUndefined();
    const meta = r.json.kind === 'PartialObjectMetadata' ? r.json.metadata : r.json.items[0].metadata;
    expect(meta).toMatchObject({ name: 'a', namespace: 'meta', labels: { app: 'meta' } });
  });

  it('a watch as client-go asks: PartialObjectMetadata events, bookmarks included', async () => {
    const rv = (await gw.admin.get(CMS)).json.metadata.resourceVersion;
    const watching = gw.admin.watch(`${CMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=10`, (evs) => evs.some((e) => e.type === 'DELETED'), 10_000, { accept: ITEM_ACCEPT_JSON });
    await new Promise((r) => setTimeout(r, 200));
    await gw.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    await gw.admin.delete(`${CMS}/c`);
    const { status, events } = await watching;
    expect(status).toBe(200);
    const changes = events.filter((e) => e.type !== 'BOOKMARK');
    expect(changes.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name])).toEqual([
      ['ADDED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'c'],
      ['DELETED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'c'],
    ]);
    for (const b of events.filter((e) => e.type === 'BOOKMARK')) expect(b.object.kind).toBe('PartialObjectMetadata');
  });

  it.each([
    { name: 'a list as PartialObjectMetadata', path: CMS, accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    { name: 'an object as PartialObjectMetadataList', path: `${CMS}/a`, accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
  ])('406 for $name (upstream)', async ({ path, accept }) => {
    const r = await gw.admin.get(path, { headers: { accept } });
    expect({ status: r.status, reason: r.json.reason }).toEqual({ status: 406, reason: 'NotAcceptable' });
  });

  // Go's strconv.ParseBool spellings; the Python client sends watch=True.
  let written = 0;
  it.each(['true', 'True', 'TRUE', 't', 'T', '1'])('watch=%s watches', async (v) => {
    const rv = (await gw.admin.get(CMS)).json.metadata.resourceVersion;
    const watching = gw.admin.watch(`${CMS}?watch=${v}&resourceVersion=${rv}&timeoutSeconds=5`, (evs) => evs.length > 0, 5000);
    await new Promise((r) => setTimeout(r, 100));
    await gw.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${written++}` } });
    const { events } = await watching;
    expect(events[0]?.type).toBe('ADDED');
  });

  it.each(['false', 'False', 'FALSE', 'f', 'F', '0'])('watch=%s lists', async (v) => {
    const r = await gw.admin.get(`${CMS}?watch=${v}`);
    expect({ status: r.status, kind: r.json.kind }).toEqual({ status: 200, kind: 'ConfigMapList' });
  });

  it.each([
    { query: 'watch=yes', param: 'watch' },
    { query: 'watch=1&allowWatchBookmarks=on', param: 'allowWatchBookmarks' },
    { query: 'pretty=maybe', param: 'pretty' },
  ])('a value Go does not parse is a 400 naming the parameter: $query', async ({ query, param }) => {
    const r = await gw.admin.get(`${CMS}?${query}`);
    expect({ status: r.status, reason: r.json.reason }).toEqual({ status: 400, reason: 'BadRequest' });
    expect(r.json.message).toContain(`boolean query parameter ${param}`);
  });
});
