import https from 'node:https';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from '../support/gateway';
import { MUTATING, problems, send } from './support/check';
import { FUZZ_NAMESPACE, requestArb, type FuzzRequest } from './support/requests';

/** `npm run fuzz -- --runs=N --seed=S` sets these; CI runs the fixed sample below. */
const RUNS = Number(process.env['ORCH_FUZZ_RUNS']) || 2000;
const SEED = process.env['ORCH_FUZZ_SEED'] !== undefined ? Number(process.env['ORCH_FUZZ_SEED']) : 1414;
/** Survey mode (`--survey`): record every failing request instead of stopping at the first and shrinking it. */
const SURVEY = !!process.env['ORCH_FUZZ_SURVEY'];

const NS = `/api/v1/namespaces/${FUZZ_NAMESPACE}`;
const meta = { name: 'seed' };
const template = { metadata: { labels: { app: 'seed' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } };
/** The `seed` objects item paths hit (so updates, patches and subresources reach real objects). */
const SEEDS: [string, object][] = [
  ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FUZZ_NAMESPACE } }],
  ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: meta }],
  ['/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: meta }],
  [`${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { a: 'b' } }],
  [`${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: meta, stringData: { a: 'b' } }],
  [`${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta }],
  [`${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: { containers: [{ name: 'c', image: 'x' }] } }],
  [`${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { ports: [{ port: 80 }], selector: { app: 'seed' } } }],
  [`/apis/rbac.authorization.orch.io/v1/namespaces/${FUZZ_NAMESPACE}/roles`, { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: meta, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }],
  [`/apis/rbac.authorization.orch.io/v1/namespaces/${FUZZ_NAMESPACE}/rolebindings`, { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: meta, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'seed' }, subjects: [{ kind: 'User', name: 'alice' }] }],
  [`/apis/batch/v1/namespaces/${FUZZ_NAMESPACE}/jobs`, { apiVersion: 'batch/v1', kind: 'Job', metadata: meta, spec: { template } }],
  [`/apis/apps/v1/namespaces/${FUZZ_NAMESPACE}/deployments`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta, spec: { selector: { matchLabels: { app: 'seed' } }, template: { ...template, spec: { containers: template.spec.containers } } } }],
  [`/apis/coordination.orch.io/v1/namespaces/${FUZZ_NAMESPACE}/leases`, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: meta, spec: { holderIdentity: 'x' } }],
];

/** A request as a line a person can replay (method, path, headers, body). */
function describeRequest(r: FuzzRequest): string {
  const body = r.body ? ` body(${r.body.length} bytes)=${JSON.stringify(r.body.subarray(0, 300).toString('utf8'))}` : '';
  return `${r.method} ${r.path} headers=${JSON.stringify(r.headers)}${body}`;
}

/**
 * Property-based fuzzing of a real gateway process with fast-check: requests of every catalog
 * path shape (subresources, encoded segments), every SPEC query parameter with valid and
 * invalid values, odd headers, and bodies from the schemas (valid objects of every kind, then
 * mutated), raw bytes, protobuf envelopes with changed bytes, JSON/merge/strategic/apply
 * patches. Every answer is a success or a well-formed 4xx Status naming the problem, never a
 * 5xx or a dropped connection; a refused write changes nothing stored; the server keeps serving.
 */
describe('fuzz: the gateway answers every request with a success or a clear 4xx', () => {
  let gw: GatewayProcess;
  let agent: https.Agent;

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    const pki = join(gw.dataDir, 'pki');
    agent = new https.Agent({ keepAlive: true, ca: await readFile(join(pki, 'ca.crt')), cert: await readFile(join(pki, 'admin.crt')), key: await readFile(join(pki, 'admin.key')) });
    for (const [path, body] of SEEDS) {
      // A pod needs its namespace's default service account (the serviceaccount controller makes it).
      if (path === `${NS}/pods`) await defaultServiceAccount(gw.admin, FUZZ_NAMESPACE);
      const r = await gw.admin.post(path, body);
      if (r.status !== 201) throw new Error(`seeding ${path}: ${r.status} ${r.text}`);
    }
  }, 60_000);
  afterAll(async () => {
    agent?.destroy();
    await gw?.stop();
  });

  /** The state of what a request may change (see FuzzRequest.touches): a refused request must leave it as it was. */
  const stateOf = async (touches: NonNullable<FuzzRequest['touches']>): Promise<string> => {
    if ('item' in touches) {
      const r = await gw.admin.get(touches.item);
      return r.status === 200 ? `${r.json.metadata.uid}@${r.json.metadata.resourceVersion}` : `answered ${r.status}`;
    }
    const r = await gw.admin.get(touches.collection);
    return r.status === 200 ? (r.json.items as any[]).map((o) => `${o.metadata.uid}@${o.metadata.resourceVersion}`).join(',') : `answered ${r.status}`;
  };

  it(
    `${RUNS} generated requests (seed ${SEED}): no 5xx, no dropped connection, every 4xx a Status naming the problem, refused writes store nothing`,
    async () => {
      process.stdout.write(`fuzz: seed ${SEED}, ${RUNS} runs (replay: npm run fuzz -- --seed=${SEED} --runs=${RUNS})\n`);
      const statuses = new Map<number, number>();
      const failures = new Map<string, string>();
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(requestArb, async (r) => {
          if (process.env['ORCH_FUZZ_TRACE']) process.stdout.write(`fuzz trace: ${describeRequest(r)}\n`);
          const before = MUTATING.has(r.method) && r.touches ? await stateOf(r.touches) : undefined;
          const found: string[] = [];
          const answer = await send(agent, gw.url, r).catch((err: Error) => void found.push(err.message));
          if (answer) {
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
            found.push(...problems(r, answer));
          }
          if (answer && before !== undefined && answer.status >= 400) {
            const after = await stateOf(r.touches!);
            if (after !== before) found.push(`refused with ${answer.status}, yet ${JSON.stringify(r.touches)} changed from ${before} to ${after}`);
          }
          if (++cases % 250 === 0) {
            if ((await gw.admin.get('/readyz')).status !== 200) found.push('the gateway stopped being ready');
            if (SURVEY) process.stdout.write(`fuzz: ${cases} requests, ${failures.size} distinct failures\n`);
          }
          if (!found.length) return;
          // A 5xx or no answer: the gateway's own account of it (its log's last lines) goes with the request.
          const log = !answer || answer.status >= 500 ? `\n  gateway log (end):\n${gw.process.output().slice(-3000)}` : '';
          const failure = `${r.shape}: ${found.join('; ')}\n  ${describeRequest(r)}${log}`;
          if (!SURVEY) throw new Error(failure);
          const key = `${r.shape}: ${found[0].slice(0, 80)}`;
          if (!failures.has(key)) failures.set(key, failure);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      const summary = [...statuses.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`).join(', ');
      process.stdout.write(`fuzz: ${cases} requests (shrinking included), answers ${summary}\n`);
      for (const f of failures.values()) process.stdout.write(`fuzz failure: ${f}\n`);
      expect(failures.size).toBe(0);
      expect((await gw.admin.get('/readyz')).status).toBe(200);
    },
    120_000 + RUNS * 200,
  );
});
