import { join } from 'node:path';
import { ensurePki, issueClientCert } from '@orch/auth';
import { ApiClient } from './support/api-client';
import { startGateway, type GatewayProcess } from './support/gateway';

// Property: for random RBAC rule sets, a SelfSubjectAccessReview's answer equals whether the
// real request is allowed (one decider for both). Seeded, so a failure names a reproducible case.

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VERBS = ['get', 'list', 'create', 'delete'];
const RESOURCES = ['configmaps', 'secrets', 'services'];
const NAMES = ['a', 'b'];

describe('SelfSubjectAccessReview agrees with the real request (random rule sets)', () => {
  let gw: GatewayProcess;
  let user: ApiClient;
  const SEED = 20261125;
  const ROUNDS = 6;
  const PROBES = 12;

  beforeAll(async () => {
    gw = await startGateway();
    const pki = await ensurePki(join(gw.dataDir, 'pki'));
    const cert = await issueClientCert(pki, { cn: 'prop-user' });
    user = new ApiClient(gw.url, { ca: pki.ca.certPem, cert: cert.certPem, key: cert.keyPem });
    expect((await gw.admin.request('POST', '/api/v1/namespaces', { kind: 'Namespace', metadata: { name: 'prop' } })).status).toBe(201);
    for (const r of ['configmaps', 'secrets']) {
      for (const name of NAMES) {
        const body = r === 'configmaps' ? { kind: 'ConfigMap', metadata: { name } } : { kind: 'Secret', metadata: { name } };
        expect((await gw.admin.request('POST', `/api/v1/namespaces/prop/${r}`, body)).status).toBe(201);
      }
    }
    const binding = { kind: 'RoleBinding', metadata: { name: 'prop' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'prop' }, subjects: [{ kind: 'User', name: 'prop-user' }] };
    expect((await gw.admin.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/prop/rolebindings', binding)).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    user?.close();
    await gw?.stop();
  });

  it(`${ROUNDS} random roles × ${PROBES} probes (seed ${SEED})`, async () => {
    const rnd = prng(SEED);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const subset = <T>(xs: readonly T[]) => xs.filter(() => rnd() < 0.5);
    for (let round = 0; round < ROUNDS; round++) {
      const rules = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
        verbs: rnd() < 0.1 ? ['*'] : subset(VERBS).concat(pick(VERBS)),
        apiGroups: [''],
        resources: rnd() < 0.1 ? ['*'] : subset(RESOURCES).concat(pick(RESOURCES)),
        ...(rnd() < 0.3 ? { resourceNames: [pick(NAMES)] } : {}),
      }));
      const role = { kind: 'Role', metadata: { name: 'prop' }, rules };
      const put = await gw.admin.request(round === 0 ? 'POST' : 'PUT', `/apis/rbac.authorization.orch.io/v1/namespaces/prop/roles${round === 0 ? '' : '/prop'}`, round === 0 ? role : { ...role, metadata: { name: 'prop' } });
      expect([200, 201]).toContain(put.status);
      for (let p = 0; p < PROBES; p++) {
        const verb = pick(VERBS);
        const resource = pick(['configmaps', 'secrets']);
        const name = verb === 'list' || verb === 'create' ? '' : pick(NAMES);
        const review = await user.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace: 'prop', verb, group: '', resource, name } },
        });
        expect(review.status).toBe(201);
        const path = `/api/v1/namespaces/prop/${resource}${name ? `/${name}` : ''}`;
        // Writes run as dry runs: the permission checked is the same (SPEC Authorization 6).
        const real =
          verb === 'create'
            ? await user.request('POST', `${path}?dryRun=All`, { kind: resource === 'configmaps' ? 'ConfigMap' : 'Secret', metadata: { name: `new-${p}` } })
            : verb === 'delete'
              ? await user.request('DELETE', `${path}?dryRun=All`)
              : await user.request('GET', path);
        const context = JSON.stringify({ round, rules, verb, resource, name, real: real.status });
        expect({ context, allowed: review.json.status.allowed }).toEqual({ context, allowed: real.status !== 403 });
      }
    }
  }, 60_000);
});
