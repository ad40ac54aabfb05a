import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ensurePki, issueClientCert } from '@orch/auth';
import { eventually } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

/**
 * The gateway over HTTP/2 (ALPN h2 beside http/1.1 on one port), with Node's own http2 client:
 * the request pipeline, streamed bodies and watches answer as over HTTP/1.1, many watches
 * share one connection, and a connection that goes frees its watches.
 */

const FC = '/apis/flowcontrol.apiserver.orch.io/v1';
/** A list that waits for a resourceVersion that never comes (then times out): it holds its seat meanwhile. */
const SLOW_LIST = '/api/v1/namespaces/default/configmaps?resourceVersion=999999999';
const WATCHES = 50;

interface H2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  json: any;
}

/** One request on `session`, its whole answer. */
function h2request(session: ClientHttp2Session, method: string, path: string, opts: { headers?: Record<string, string>; body?: Buffer | object } = {}): Promise<H2Response> {
  const body = opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(JSON.stringify(opts.body));
  // A CONNECT names an authority, no path.
  const target = method === 'CONNECT' ? { ':authority': path } : { ':path': path };
  const headers = { ':method': method, ...target, accept: 'application/json', ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: !body });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (responseHeaders = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const all = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(all.toString());
      } catch {
        json = undefined;
      }
      resolve({ status: Number(responseHeaders[':status']), headers: responseHeaders, body: all, json });
    });
    stream.on('error', reject);
    if (body) stream.end(body);
  });
}

/** A session to the gateway with these TLS credentials; rejects unless ALPN chose h2. */
async function connect(gw: GatewayProcess, creds: { cert?: string; key?: string }): Promise<ClientHttp2Session> {
  const session = http2.connect(gw.url, { ca: gw.creds.ca, ...creds });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  expect(session.alpnProtocol).toBe('h2');
  return session;
}

/** A watch stream on `session` and the events it received so far (one JSON line each: no chunk framing). */
function watch(session: ClientHttp2Session, path: string): { stream: ClientHttp2Stream; events: Array<{ type: string; object: any }>; status: Promise<number>; ended: Promise<void> } {
  const stream = session.request({ ':path': path, accept: 'application/json' });
  const events: Array<{ type: string; object: any }> = [];
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const line of lines) events.push(JSON.parse(line));
  });
  const status = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  stream.on('error', () => undefined);
  return { stream, events, status, ended };
}

describe('the gateway over HTTP/2', () => {
  let gw: GatewayProcess;
  let admin: ClientHttp2Session;
  let anonymous: ClientHttp2Session;
  let flooder: ClientHttp2Session;
  const sessions: ClientHttp2Session[] = [];

  beforeAll(async () => {
    gw = await startGateway({ args: ['--max-requests-inflight=20', '--max-mutating-requests-inflight=0', `--max-watches-per-user=${WATCHES}`] });
    const pki = await ensurePki(join(gw.dataDir, 'pki'));
    const flooderCert = await issueClientCert(pki, { cn: 'h2-flooder', orgs: ['h2-test'] });
    sessions.push((admin = await connect(gw, gw.creds)));
    // The flooder may read everything, on a level of one seat and a queue of one.
    const setup = [
      ['/apis/rbac.authorization.orch.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'h2-test' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'Group', name: 'h2-test', apiGroup: 'rbac.authorization.orch.io' }] }],
      [`${FC}/prioritylevelconfigurations`, { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'tiny' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } } } } }],
      [`${FC}/flowschemas`, { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name: 'h2-flooder' }, spec: { priorityLevelConfiguration: { name: 'tiny' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'h2-flooder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] } }],
      ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h2-list' } }],
      ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h2-watch' } }],
    ] as const;
    for (const [path, body] of setup) expect((await gw.admin.post(path, body)).status).toBe(201);
    // 300 ConfigMaps of 1 KiB: a list body of several chunks (streamed).
    for (let i = 0; i < 300; i++) {
      expect((await h2request(admin, 'POST', '/api/v1/namespaces/h2-list/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(1024) } } })).status).toBe(201);
    }
    // Connected last: the gateway closes a connection idle for 72 s (Fastify's http2SessionTimeout).
    sessions.push((anonymous = await connect(gw, {})), (flooder = await connect(gw, { cert: flooderCert.certPem, key: flooderCert.keyPem })));
  });
  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await gw?.stop();
  });

  it.each([
    ['a get', 'GET', '/api/v1/namespaces/default', undefined, 200, (r: H2Response) => expect(r.json).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' } })],
    ['a create', 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h2-created' }, data: { a: 'b' } }, 201, (r: H2Response) => expect(r.json).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'h2-created', namespace: 'default' } })],
    ['a bad create (a Status naming the field)', 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } }, 422, (r: H2Response) => expect(r.json.message).toContain('metadata.name')],
    ['the identity of the client certificate', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, 201, (r: H2Response) => expect(r.json.status.userInfo.username).toBe('admin')],
  ])('answers %s as over HTTP/1.1', async (_name, method, path, body, status, check) => {
    const r = await h2request(admin, method, path, { body });
    expect(r.status).toBe(status);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    check(r);
  });

  it.each([
    ['a streamed list (JSON)', '/api/v1/namespaces/h2-list/configmaps', 'application/json', ''],
    ['a streamed list (gzip)', '/api/v1/namespaces/h2-list/configmaps', 'application/json', 'gzip'],
    ['a protobuf get', '/api/v1/namespaces/h2-list/configmaps/cm-7', 'application/vnd.kubernetes.protobuf', ''],
    ['a protobuf list', '/api/v1/namespaces/h2-list/configmaps', 'application/vnd.kubernetes.protobuf', ''],
  ])('writes %s byte for byte as over HTTP/1.1', async (_name, path, accept, encoding) => {
    const headers = { accept, ...(encoding ? { 'accept-encoding': encoding } : {}) };
    const [over2, over1] = await Promise.all([h2request(admin, 'GET', path, { headers }), gw.admin.request('GET', path, undefined, { headers })]);
    expect(over2.status).toBe(200);
    expect(over2.headers['content-type']).toBe(over1.headers['content-type']);
    expect(over2.headers['content-encoding']).toBe(over1.headers['content-encoding']);
    // gzip output may differ in its framing of the deflate blocks: the bytes it unzips to are compared.
    expect((encoding ? gunzipSync(over2.body) : over2.body).equals(encoding ? gunzipSync(over1.body) : over1.body)).toBe(true);
    if (accept === 'application/json' && !encoding) expect(over2.json.items).toHaveLength(300);
  });

  it.each([
    ['a bad bearer token', () => anonymous, { authorization: 'Bearer not-a-token' }, 401, 'Unauthorized'],
    ['no credentials, where anonymous may not list', () => anonymous, {}, 403, 'Forbidden'],
  ])('refuses %s with a Status', async (_name, session, headers, code, reason) => {
    const r = await h2request(session(), 'GET', '/api/v1/namespaces/default/configmaps', { headers });
    expect(r.status).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', code, reason });
  });

  it.each([
    ['CONNECT', 'CONNECT', 'example.com:443', 405, 'MethodNotAllowed'],
    ['an exec (upgrades need HTTP/1.1)', 'GET', '/api/v1/namespaces/default/pods/p/exec?command=ls', 400, 'BadRequest'],
  ])('answers %s with a Status on its stream', async (_name, method, path, code, reason) => {
    const r = await h2request(admin, method, path);
    expect(r.status).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', code, reason });
  });

  it('answers a body over the limit 413 and goes on serving the connection', async () => {
    const big = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'too-big' }, data: { v: 'x'.repeat(4 * 1024 * 1024) } }));
    const r = await h2request(admin, 'POST', '/api/v1/namespaces/default/configmaps', { body: big });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ kind: 'Status', code: 413, reason: 'RequestEntityTooLarge' });
    expect(r.headers.connection).toBeUndefined();
    expect((await h2request(admin, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('refuses requests of a full priority level 429 (six lists on one connection: one runs, one waits, four refused)', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => h2request(flooder, 'GET', SLOW_LIST)));
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(4);
    expect(refused[0].headers['retry-after']).toBe('1');
    expect(refused[0].json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    expect((await h2request(flooder, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it(`delivers every event in order to ${WATCHES} watches on one connection, and frees them when it goes`, async () => {
    const rv = (await h2request(admin, 'GET', '/api/v1/namespaces/h2-watch/configmaps')).json.metadata.resourceVersion as string;
    const session = await connect(gw, gw.creds);
    sessions.push(session);
    const watches = Array.from({ length: WATCHES }, () => watch(session, `/api/v1/namespaces/h2-watch/configmaps?watch=1&resourceVersion=${rv}`));
    expect(await Promise.all(watches.map((w) => w.status))).toEqual(Array(WATCHES).fill(200));
    // The per-user limit is reached: one more watch of the admin is refused.
    expect((await gw.admin.get('/api/v1/namespaces/h2-watch/configmaps?watch=1')).status).toBe(429);
    const names = Array.from({ length: 20 }, (_, i) => `w-${i}`);
    for (const name of names) expect((await h2request(admin, 'POST', '/api/v1/namespaces/h2-watch/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } })).status).toBe(201);
    await eventually('every watch received every event', async () => (watches.every((w) => w.events.length >= names.length) ? true : undefined), 20_000);
    for (const w of watches) expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(names.map((n) => `ADDED ${n}`));
    // The connection goes mid-watch: its watches end and give their places back.
    session.destroy();
    await eventually('the watches of the closed connection freed', async () => ((await gw.admin.get('/api/v1/namespaces/h2-watch/configmaps?watch=1&timeoutSeconds=0')).status === 200 ? true : undefined), 10_000);
  });

  it('ends a watch at its timeoutSeconds with a clean end of its stream', async () => {
    const w = watch(admin, '/api/v1/namespaces/h2-watch/configmaps?watch=1&timeoutSeconds=1');
    expect(await w.status).toBe(200);
    await w.ended;
    expect(w.stream.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect(w.events.length).toBeGreaterThanOrEqual(20); // the initial ADDED events
  });

  it('cuts off a watch whose client stops reading (its stream reset), the connection serving on', async () => {
    expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h2-slow' } })).status).toBe(201);
    const session = await connect(gw, gw.creds);
    sessions.push(session);
    const w = watch(session, '/api/v1/namespaces/h2-slow/configmaps?watch=1&resourceVersion=0');
    expect(await w.status).toBe(200);
    w.stream.pause(); // a client that does not read: its stream window closes, the gateway buffers
    // 32 objects of 700 KB: about 22 MB of events, past the 16 MiB bound.
    const value = 'x'.repeat(700 * 1024);
    for (let i = 0; i < 32; i++) expect((await gw.admin.post('/api/v1/namespaces/h2-slow/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { v: value } })).status).toBe(201);
    await eventually('the slow watch reset', async () => (w.stream.rstCode !== undefined ? true : undefined), 20_000);
    expect(w.stream.rstCode).not.toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect((await h2request(session, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('advertises at most 1000 concurrent streams per connection (--http2-max-streams-per-connection)', () => {
    expect(admin.remoteSettings.maxConcurrentStreams).toBe(1000);
  });

  it('serves HTTP/1.1 on the same port', async () => {
    const r = await new ApiClient(gw.url, gw.creds).get('/api/v1/namespaces/default');
    expect(r.status).toBe(200);
  });
});
