import https from 'node:https';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';

const CMS = '/api/v1/namespaces/default/configmaps';
/** Requests as alice (admin impersonates her), who is not in system:masters. */
const ALICE = { 'impersonate-user': 'alice', 'impersonate-group': 'devs' };

interface Opened {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The Status of a refusal (streams have none). */
  json?: any;
  close(): void;
}

/**
 * Limits that keep one client from hurting others: open watches per user and per gateway
 * (429 with Retry-After), --request-timeout (504), and without API Priority and Fairness the
 * plain in-flight limits (429 with Retry-After). A watch reader too slow to keep up is ended:
 * e2e/watch-slow-client.e2e.spec.ts.
 */
describe('limits per client and per gateway', () => {
  let gw: GatewayProcess;
  let agent: https.Agent;

  beforeAll(async () => {
    gw = await startGateway({
      args: ['--max-watches-per-user=2', '--max-watches=3', '--request-timeout=1s', '--enable-priority-and-fairness=false', '--max-requests-inflight=1', '--max-mutating-requests-inflight=1'],
    });
    const pki = join(gw.dataDir, 'pki');
    agent = new https.Agent({ keepAlive: false, ca: await readFile(join(pki, 'ca.crt')), cert: await readFile(join(pki, 'admin.crt')), key: await readFile(join(pki, 'admin.key')) });
    // alice (group devs) may read config maps (Node,RBAC by default).
    const RBAC = '/apis/rbac.authorization.orch.io/v1';
    const role = await gw.admin.post(`${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'configmap-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] });
    const binding = await gw.admin.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'devs-read-configmaps' },
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'configmap-reader' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.orch.io', name: 'devs' }],
    });
    expect([role.status, binding.status]).toEqual([201, 201]);
  });
  afterAll(async () => {
    agent?.destroy();
    await gw?.stop();
  });

  /** Sends a GET and resolves at its status line: a stream stays open until close(); a refusal is read to the end. */
  function open(path: string, headers: Record<string, string> = {}): Promise<Opened> {
    return new Promise((resolve, reject) => {
      const req = https.request(new URL(path, gw.url), { method: 'GET', headers: { accept: 'application/json', ...headers }, agent }, (res) => {
        const close = () => req.destroy();
        if (res.statusCode === 200) return resolve({ status: 200, headers: res.headers, close });
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text), close }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('--max-watches-per-user: a third watch of one user is 429 with Retry-After; closing one makes room', async () => {
    const first = await open(`${CMS}?watch=1`);
    const second = await open(`${CMS}?watch=1`);
    const third = await open(`${CMS}?watch=1`);
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(third.headers['retry-after']).toBe('1');
    expect(third.json).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
    expect(third.json.message).toMatch(/too many open watches for user "admin": the limit is 2 per user \(--max-watches-per-user\)/);
    first.close();
    // The gateway gives the watch back when it sees the connection close.
    const again = await eventually('a watch admitted after closing one', async () => {
      const w = await open(`${CMS}?watch=1`);
      return w.status === 200 ? w : undefined;
    });
    second.close();
    again.close();
  });

  it('--max-watches: past the gateway total, any user is 429', async () => {
    // The previous test's watches are given back once the gateway sees them closed.
    const first = await eventually('admin holds no watch', async () => {
      const w = await open(`${CMS}?watch=1`);
      if (w.status === 200) return w;
      return undefined;
    });
    const second = await eventually('admin holds one watch', async () => {
      const w = await open(`${CMS}?watch=1`);
      return w.status === 200 ? w : undefined;
    });
    const held = [first, second, await open(`${CMS}?watch=1`, { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' })];
    expect(held.map((h) => h.status)).toEqual([200, 200, 200]);
    const refused = await open(`${CMS}?watch=1`, { 'impersonate-user': 'carol', 'impersonate-group': 'system:masters' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json.message).toMatch(/the gateway holds its maximum of 3 open watches \(--max-watches\)/);
    for (const h of held) h.close();
  });

  it('--request-timeout: a read that has not answered after it is 504 Timeout naming the flag', async () => {
    const rv = Number((await gw.admin.get(CMS)).json.metadata.resourceVersion);
    // A read at a future resourceVersion waits (up to 3 s) for it: longer than the 1 s timeout.
    const r = await gw.admin.get(`${CMS}?resourceVersion=${rv + 1000}&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(504);
    expect(r.json).toMatchObject({ kind: 'Status', code: 504, reason: 'Timeout' });
    expect(r.json.message).toMatch(/did not complete within the allowed duration \(--request-timeout=1s\)/);
  });

  it('without API Priority and Fairness: a read past --max-requests-inflight is 429 with Retry-After; system:masters is not limited', async () => {
    const rv = Number((await gw.admin.get(CMS)).json.metadata.resourceVersion);
    // A read waiting for a future resourceVersion holds the one read seat until its 504 (1 s).
    let slowDone = false;
    const slow = gw.admin.get(`${CMS}?resourceVersion=${rv + 1000}&resourceVersionMatch=NotOlderThan`, { headers: ALICE }).finally(() => (slowDone = true));
    const refused = await eventually('a read refused while the seat is held', async () => {
      if (slowDone) throw new Error('the slow read ended before any other read was refused');
      const r = await gw.admin.get(CMS, { headers: ALICE });
      return r.status === 429 ? r : undefined;
    }, 5000, 20);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json.message).toMatch(/1 read requests are in flight \(--max-requests-inflight\)/);
    expect((await gw.admin.get(CMS)).status).toBe(200);
    expect((await slow).status).toBe(504);
    expect((await gw.admin.get(CMS, { headers: ALICE })).status).toBe(200);
  });
});
