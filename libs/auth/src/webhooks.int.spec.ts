import { request } from 'node:https';
import { StatusError } from '@orch/apimachinery';
import { startReviewServer, type ReviewCall, type ReviewServer } from '@orch/testing';
import type { AuthorizationAttributes } from './authz';
import { selfSignedServingCert } from './pki';
import { webhookAuthorizer } from './webhook-authorizer';
import { webhookTokenAuthenticator, type ReviewPoster } from './webhook-token';

// Token and authorization webhooks against a real HTTPS server (its own CA): the review sent,
// the answer's meaning, and the success/failure caches with their TTLs.

let server: ReviewServer;
/** What the server answers next, per path. */
const answers: Record<string, (c: ReviewCall) => unknown> = {};

beforeAll(async () => {
  const tls = await selfSignedServingCert(['127.0.0.1'], 'review-webhook');
  server = await startReviewServer(tls, (c) => answers[c.path]?.(c) ?? 'fail');
});
afterAll(() => server?.stop());
beforeEach(() => (server.calls.length = 0));

/** POSTs to `<server><path>` over HTTPS, verifying the server with its CA. */
const poster =
  (path: string): ReviewPoster =>
  (review) =>
    new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method: 'POST', ca: server.caPem, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(JSON.stringify(review));
    });

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('webhook token authentication (TokenReview v1)', () => {
  answers['/authn'] = (c) => {
    const token = (c.body.spec as { token: string }).token;
    if (token === 'good') return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'wendy', uid: 'w1', groups: ['ldap:staff'], extra: { dept: ['r&d'] } } } };
    if (token === 'broken') return 'fail';
    return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: { authenticated: false, error: 'unknown token' } };
  };

  it.each([
    { name: 'authenticated', token: 'good', want: { user: { username: 'wendy', uid: 'w1', groups: ['ldap:staff'], extra: { dept: ['r&d'] } } } },
    { name: 'not authenticated: not a user', token: 'nope', want: { user: null } },
    { name: 'webhook failing: 401', token: 'broken', want: { status: 401 } },
  ])('$name', async ({ token, want }) => {
    const a = webhookTokenAuthenticator(poster('/authn'), { cacheTtlMs: 60_000 });
    const got = await a.authenticate(bearer(token)).then(
      (user) => ({ user }),
      (e: unknown) => ({ status: (e as StatusError).code }),
    );
    expect(got).toEqual(want);
    expect(server.calls[0].body).toEqual({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  });

  it('caches successes and failures for the TTL, by token; errors are not cached', async () => {
    let t = 1_000_000;
    const a = webhookTokenAuthenticator(poster('/authn'), { cacheTtlMs: 120_000, now: () => t });
    for (const token of ['good', 'nope', 'good', 'nope', 'broken', 'broken']) await a.authenticate(bearer(token)).catch(() => undefined);
    expect(server.calls.map((c) => (c.body.spec as { token: string }).token)).toEqual(['good', 'nope', 'broken', 'broken']);
    t += 120_001;
    await a.authenticate(bearer('good'));
    await a.authenticate(bearer('nope'));
    expect(server.calls).toHaveLength(6);
  });

  it('sends the requested audiences', async () => {
    await webhookTokenAuthenticator(poster('/authn'), { cacheTtlMs: 0 }).authenticate({ ...bearer('good'), audiences: ['vault'] });
    expect(server.calls[0].body.spec).toEqual({ token: 'good', audiences: ['vault'] });
  });
});

describe('webhook authorization (SubjectAccessReview v1)', () => {
  answers['/authz'] = (c) => {
    const spec = c.body.spec as { user: string; resourceAttributes?: { verb: string; resource: string }; nonResourceAttributes?: { path: string } };
    if (spec.user === 'broken') return 'fail';
    if (spec.nonResourceAttributes?.path === '/healthz') return { status: { allowed: true } };
    if (spec.resourceAttributes?.resource === 'secrets') return { status: { allowed: false, denied: true, reason: 'no secrets for anyone' } };
    if (spec.user === 'alice' && spec.resourceAttributes?.verb === 'get') return { status: { allowed: true, reason: 'alice reads' } };
    return { status: { allowed: false } };
  };
  const attrs = (user: string, over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
    user: { username: user, groups: ['g1', 'system:authenticated'], uid: 'u-1', extra: { scopes: ['a'] } },
    isResourceRequest: true,
    path: '/api/v1/namespaces/ns/pods/p',
    verb: 'get',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    namespace: 'ns',
    name: 'p',
    ...over,
  });

  it.each([
    { name: 'allowed', a: attrs('alice'), want: { decision: 'allow', reason: 'alice reads' } },
    { name: 'denied', a: attrs('alice', { resource: 'secrets' }), want: { decision: 'deny', reason: 'no secrets for anyone' } },
    { name: 'neither: no opinion', a: attrs('bob'), want: { decision: 'no-opinion', reason: '' } },
    { name: 'non-resource path', a: attrs('bob', { isResourceRequest: false, path: '/healthz', resource: '', namespace: '', name: '' }), want: { decision: 'allow', reason: '' } },
  ])('$name', async ({ a, want }) => {
    const authz = webhookAuthorizer(poster('/authz'), { authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 });
    expect(await authz.authorize(a)).toEqual(want);
    const spec = server.calls[0].body.spec as Record<string, unknown>;
    expect(spec).toMatchObject({ user: a.user.username, groups: a.user.groups, uid: 'u-1', extra: { scopes: ['a'] } });
    if (a.isResourceRequest) expect(spec.resourceAttributes).toEqual({ namespace: 'ns', verb: a.verb, group: '', version: 'v1', resource: a.resource, subresource: '', name: 'p' });
    else expect(spec.nonResourceAttributes).toEqual({ path: '/healthz', verb: 'get' });
  });

  it('a failing webhook is an evaluation error (thrown: the chain treats it as no opinion)', async () => {
    const authz = webhookAuthorizer(poster('/authz'), { authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 });
    await expect(Promise.resolve(authz.authorize(attrs('broken')))).rejects.toThrow(/webhook authorizer: HTTP 500/);
  });

  it('caches allows for the authorized TTL and the rest for the unauthorized TTL', async () => {
    let t = 0;
    const authz = webhookAuthorizer(poster('/authz'), { authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, now: () => t });
    const ask = () => Promise.all([authz.authorize(attrs('alice')), authz.authorize(attrs('bob'))]);
    await ask();
    await ask();
    expect(server.calls).toHaveLength(2);
    t = 30_001; // the denial expired, the allow did not
    await ask();
    expect(server.calls.map((c) => (c.body.spec as { user: string }).user)).toEqual(['alice', 'bob', 'bob']);
    t = 300_001;
    await ask();
    expect(server.calls).toHaveLength(5);
  });
});
