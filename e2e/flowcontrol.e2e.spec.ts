import { spawnSync } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { ensurePki, issueClientCert } from '@orch/auth';
import { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

// API Priority and Fairness against a real gateway: the bootstrap configuration, classification
// headers, Dangling status, and a flooding client confined to its own priority level (429s)
// while others are served. Seats are few (--max-requests-inflight=20) so that a handful of
// slow requests fill a level.

const FC = '/apis/flowcontrol.apiserver.orch.io/v1';
/** A list that waits for a resourceVersion that never comes: holds its seat ~3 s, then 504. */
const SLOW_LIST = '/api/v1/namespaces/default/configmaps?resourceVersion=999999999';

describe('API Priority and Fairness', () => {
  let gw: GatewayProcess;
  let flooder: ApiClient;
  let flooderCreds: { cert: string; key: string };
  let other: ApiClient;

  beforeAll(async () => {
    gw = await startGateway({ args: ['--max-requests-inflight=20', '--max-mutating-requests-inflight=0'] });
    const pki = await ensurePki(join(gw.dataDir, 'pki'));
    const cert = async (cn: string) => {
      const c = await issueClientCert(pki, { cn, orgs: ['apf-test'] });
      return new ApiClient(gw.url, { ca: gw.creds.ca, cert: c.certPem, key: c.keyPem });
    };
    const flooderCert = await issueClientCert(pki, { cn: 'flooder', orgs: ['apf-test'] });
    flooderCreds = { cert: flooderCert.certPem, key: flooderCert.keyPem };
    flooder = new ApiClient(gw.url, { ca: gw.creds.ca, ...flooderCreds });
    other = await cert('other');
    // Whatever the authorization mode, the test users may read and write.
    await gw.admin.post('/apis/rbac.authorization.orch.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'apf-test' },
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'Group', name: 'apf-test', apiGroup: 'rbac.authorization.orch.io' }],
    });
    // The flooder gets its own level: one seat, one queue of one.
    const tiny = await gw.admin.post(`${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.orch.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'tiny' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } } } },
    });
    expect(tiny.status).toBe(201);
    const fs = await gw.admin.post(`${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.orch.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'flooder' },
      spec: {
        priorityLevelConfiguration: { name: 'tiny' },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'flooder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    });
    expect(fs.status).toBe(201);
  });
  afterAll(async () => {
    flooder?.close();
    other?.close();
    await gw?.stop();
  });

  it('creates the mandatory and suggested configuration at start (kubectl sees it)', () => {
    const r = spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, 'get', 'flowschemas,prioritylevelconfigurations', '-o', 'name'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    for (const name of ['flowschema.flowcontrol.apiserver.k8s.io/exempt', 'flowschema.flowcontrol.apiserver.k8s.io/catch-all', 'flowschema.flowcontrol.apiserver.k8s.io/global-default', 'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-low']) {
      expect(r.stdout.replace(/\.orch\.io\//g, '.k8s.io/')).toContain(name);
    }
  });

  it('names the FlowSchema and priority level of every request in the response headers', async () => {
    const schemas = (await gw.admin.get(`${FC}/flowschemas`)).json.items as { metadata: { name: string; uid: string }; spec: { priorityLevelConfiguration: { name: string } } }[];
    const levels = (await gw.admin.get(`${FC}/prioritylevelconfigurations`)).json.items as { metadata: { name: string; uid: string } }[];
    const uid = (list: { metadata: { name: string; uid: string } }[], name: string) => list.find((o) => o.metadata.name === name)!.metadata.uid;
    const admin = await gw.admin.get('/api/v1/namespaces');
    expect(admin.headers['x-kubernetes-pf-flowschema-uid']).toBe(uid(schemas, 'exempt'));
    expect(admin.headers['x-orch-pf-prioritylevel-uid']).toBe(uid(levels, 'exempt'));
    const user = await other.get('/api/v1/namespaces');
    expect(user.headers['x-kubernetes-pf-flowschema-uid']).toBe(uid(schemas, 'global-default'));
    expect(user.headers['x-kubernetes-pf-prioritylevel-uid']).toBe(uid(levels, 'global-default'));
  });

  // Classifications are remembered per configuration: a FlowSchema created, changed or deleted classifies the next requests.
  it('classifies by a FlowSchema as soon as it is created, changed and deleted', async () => {
    const schemaOf = async () => (await other.get('/api/v1/namespaces/default/configmaps')).headers['x-kubernetes-pf-flowschema-uid'];
    const until = async (want: string) => {
      let got = await schemaOf();
      for (let i = 0; i < 50 && got !== want; i++) {
        await new Promise((r) => setTimeout(r, 100));
        got = await schemaOf();
      }
      return got;
    };
    const globalDefault = (await gw.admin.get(`${FC}/flowschemas/global-default`)).json.metadata.uid as string;
    expect(await schemaOf()).toBe(globalDefault);
    const rules = (user: string) => [{ subjects: [{ kind: 'User', user: { name: user } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }];
    const created = await gw.admin.post(`${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.orch.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'other-user' },
      spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 400, rules: rules('other') },
    });
    expect(created.status).toBe(201);
    const uid = created.json.metadata.uid as string;
    expect(await until(uid)).toBe(uid);
    const changed = await gw.admin.request('PATCH', `${FC}/flowschemas/other-user`, { spec: { rules: rules('someone-else') } }, { headers: { 'content-type': 'application/merge-patch+json' } });
    expect(changed.status).toBe(200);
    expect(await until(globalDefault)).toBe(globalDefault);
    await gw.admin.request('PATCH', `${FC}/flowschemas/other-user`, { spec: { rules: rules('other') } }, { headers: { 'content-type': 'application/merge-patch+json' } });
    expect(await until(uid)).toBe(uid);
    expect((await gw.admin.request('DELETE', `${FC}/flowschemas/other-user`)).status).toBe(200);
    expect(await until(globalDefault)).toBe(globalDefault);
  });

  it('reports a FlowSchema whose priority level does not exist as Dangling', async () => {
    await gw.admin.post(`${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.orch.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'lost' },
      spec: { priorityLevelConfiguration: { name: 'nowhere' }, matchingPrecedence: 600, rules: [{ subjects: [{ kind: 'User', user: { name: 'nobody' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }] },
    });
    let dangling: { status: string; reason: string } | undefined;
    for (let i = 0; i < 50 && dangling?.status !== 'True'; i++) {
      dangling = (await gw.admin.get(`${FC}/flowschemas/lost`)).json.status?.conditions?.find((c: { type: string }) => c.type === 'Dangling');
      if (dangling?.status !== 'True') await new Promise((r) => setTimeout(r, 100));
    }
    expect(dangling).toMatchObject({ status: 'True', reason: 'NotFound' });
  });

  it('refuses the flooding client with 429 and Retry-After once its level is full, serving the others', async () => {
    // One seat and a queue of one: of six slow lists, one runs, one waits, four are refused.
    const flood = Array.from({ length: 6 }, () => flooder.get(SLOW_LIST));
    const others = await Promise.all(Array.from({ length: 10 }, () => other.get('/api/v1/namespaces/default/configmaps')));
    const admin = await gw.admin.get('/api/v1/namespaces/default/configmaps');
    const results = await Promise.all(flood);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(4);
    expect(refused[0].headers['retry-after']).toBe('1');
    expect(refused[0].json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    expect(others.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(admin.status).toBe(200);
    const metrics = (await gw.admin.get('/metrics')).text;
    expect(metrics).toMatch(/apiserver_flowcontrol_rejected_requests_total\{flow_schema="flooder",priority_level="tiny",reason="queue-full"\} 4/);
    // The two that ran (at once, and after their wait); the counter adds what was dispatched since the last scrape.
    expect(metrics).toMatch(/apiserver_flowcontrol_dispatched_requests_total\{flow_schema="flooder",priority_level="tiny"\} 2\n/);
    expect((await flooder.get('/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect((await gw.admin.get('/metrics')).text).toMatch(/apiserver_flowcontrol_dispatched_requests_total\{flow_schema="flooder",priority_level="tiny"\} 3\n/);
  });

  /**
   * The flooder's list of apf-big (8 MiB), paused after its head so that it holds the level's one
   * seat, and the flooder's next request, queued behind it (its status 0 until it is answered).
   */
  async function pausedListAndQueued() {
    const agent = new https.Agent({ ca: gw.creds.ca, cert: flooderCreds.cert, key: flooderCreds.key });
    const list = await new Promise<IncomingMessage>((resolve, reject) => https.get(`${gw.url}/api/v1/namespaces/apf-big/configmaps`, { agent }, resolve).on('error', reject));
    list.pause();
    expect(list.statusCode).toBe(200);
    const queued = { status: 0, done: Promise.resolve() };
    queued.done = flooder.get('/api/v1/namespaces/default/configmaps').then((r) => void (queued.status = r.status));
    await new Promise((r) => setTimeout(r, 300));
    return { agent, list, queued };
  }

  it('holds a list’s seat until its body is written: a client that stops reading keeps its level full', async () => {
    await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apf-big' } });
    // 8 MiB of ConfigMaps: more than the socket buffers on both sides take.
    for (let i = 0; i < 200; i++) {
      const r = await gw.admin.post('/api/v1/namespaces/apf-big/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { text: 'x'.repeat(40 * 1024) } });
      expect(r.status).toBe(201);
    }
    const { agent, list, queued } = await pausedListAndQueued();
    // The list holds the level's one seat: the next request waits in the queue of one, the one after is refused.
    expect((await flooder.get('/api/v1/namespaces/default/configmaps')).status).toBe(429);
    expect(queued.status).toBe(0);
    // Read on: the body ends, the seat is free, the queued request is served.
    const chunks: Buffer[] = [];
    list.on('data', (c: Buffer) => chunks.push(c));
    list.resume();
    await new Promise((resolve) => list.on('end', resolve));
    expect(JSON.parse(Buffer.concat(chunks).toString()).items).toHaveLength(200);
    await queued.done;
    expect(queued.status).toBe(200);
    agent.destroy();
  });

  it('frees a list’s seat when its client goes away mid-body: the queued request is served, the list stops', async () => {
    const { agent, list, queued } = await pausedListAndQueued();
    expect(queued.status).toBe(0);
    // The client goes away with most of the body unread.
    list.destroy();
    agent.destroy();
    await queued.done;
    expect(queued.status).toBe(200);
    // The level serves whole lists again.
    expect((await flooder.get('/api/v1/namespaces/apf-big/configmaps')).json.items).toHaveLength(200);
  });

  it('serves a get on another connection while a big list streams: the list does not hold the event loop', async () => {
    const agent = new https.Agent({ ca: gw.creds.ca, cert: flooderCreds.cert, key: flooderCreds.key });
    const order: string[] = [];
    const list = new Promise<void>((resolve, reject) =>
      https
        .get(`${gw.url}/api/v1/namespaces/apf-big/configmaps`, { agent }, (res) => {
          res.once('data', () => void other.get('/api/v1/namespaces/default/configmaps').then((r) => order.push(`get ${r.status}`), reject));
          res.on('data', () => undefined);
          res.on('end', () => (order.push('list end'), resolve()));
        })
        .on('error', reject),
    );
    await list;
    // The 8 MiB body is made and written in bounded slices; the get, sent once its first bytes came, is answered between them.
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual(['get 200', 'list end']);
    agent.destroy();
  });

  it('does not hold watches: a level full of watchers still serves requests', async () => {
    const watches = Array.from({ length: 3 }, () => flooder.watch('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=2', () => false, 3000));
    await new Promise((r) => setTimeout(r, 300));
    expect((await flooder.get('/api/v1/namespaces/default/configmaps')).status).toBe(200);
    for (const w of await Promise.all(watches)) expect(w.status).toBe(200);
  });
});
