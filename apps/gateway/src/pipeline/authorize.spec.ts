import { ALLOW, DENY, NO_OPINION, authorizerChain, type AuthorizationAttributes, type Authorizer } from '@orch/auth';
import { parseRequestInfo } from '../request/request-info';
import { attributesOf, authorizeOrThrow, forbidden } from './authorize';

const alice = { username: 'alice', groups: ['system:authenticated'] };
const attrs = (method: string, url: string, user = alice): AuthorizationAttributes => {
  const [path, q = ''] = url.split('?');
  return attributesOf(parseRequestInfo(method, path, new URLSearchParams(q)), user);
};

describe('forbidden: upstream message shape', () => {
  it.each([
    { name: 'namespaced list', a: attrs('GET', '/api/v1/namespaces/default/pods'), want: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' },
    { name: 'cluster get with name', a: attrs('GET', '/api/v1/nodes/n1'), want: 'nodes "n1" is forbidden: User "alice" cannot get resource "nodes" in API group "" at the cluster scope' },
    { name: 'subresource', a: attrs('GET', '/api/v1/namespaces/d/pods/p/log'), want: 'pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "d"' },
    { name: 'named group', a: attrs('POST', '/apis/apps/v1/namespaces/d/deployments'), want: 'deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "d"' },
    { name: 'non-resource path', a: attrs('GET', '/metrics'), want: 'forbidden: User "alice" cannot get path "/metrics"' },
  ])('$name', ({ a, want }) => {
    const err = forbidden(a, '');
    expect(err.code).toBe(403);
    expect(err.message).toBe(want);
  });

  it('appends the reason', () => {
    expect(forbidden(attrs('GET', '/metrics'), 'no RBAC policy matched').message).toBe('forbidden: User "alice" cannot get path "/metrics": no RBAC policy matched');
  });
});

describe('authorizerChain', () => {
  const mode = (name: string, answer: ReturnType<typeof ALLOW>): Authorizer => ({ name, authorize: () => answer });
  const broken: Authorizer = {
    name: 'Broken',
    authorize: () => {
      throw new Error('cannot reach webhook');
    },
  };
  it.each([
    { name: 'first allow wins', list: [mode('A', ALLOW('a')), mode('B', DENY('b'))], want: 'allow' },
    { name: 'first deny wins', list: [mode('A', DENY('a')), mode('B', ALLOW('b'))], want: 'deny' },
    { name: 'no opinion falls through', list: [mode('A', NO_OPINION()), mode('B', ALLOW('b'))], want: 'allow' },
    { name: 'an evaluation error is no opinion', list: [broken, mode('B', ALLOW('b'))], want: 'allow' },
    { name: 'nobody decides', list: [mode('A', NO_OPINION('a said nothing')), broken], want: 'no-opinion' },
    { name: 'an empty chain', list: [], want: 'no-opinion' },
  ])('$name', async ({ list, want }) => {
    expect((await authorizerChain(list).authorize(attrs('GET', '/api/v1/pods'))).decision).toBe(want);
  });

  it('joins the reasons of undecided modes and errors', async () => {
    const res = await authorizerChain([mode('A', NO_OPINION('a said nothing')), broken]).authorize(attrs('GET', '/api/v1/pods'));
    expect(res.reason).toBe('a said nothing; Broken: cannot reach webhook');
  });

  // Each mode answers at once or as a promise ('~' before its name); a '!' mode fails (a throw, or a rejected promise).
  const later = (name: string, answer: ReturnType<typeof ALLOW>): Authorizer => ({ name, authorize: () => Promise.resolve(answer) });
  const rejects: Authorizer = { name: 'Rejects', authorize: () => Promise.reject(new Error('webhook timed out')) };
  it.each([
    { name: 'A allow', list: [mode('A', ALLOW('a')), later('B', DENY('b'))], want: { decision: 'allow', reason: 'a' }, promise: false },
    { name: 'A deny', list: [mode('A', DENY('a')), later('B', ALLOW('b'))], want: { decision: 'deny', reason: 'a' }, promise: false },
    { name: 'A none, B none, C allow', list: [mode('A', NO_OPINION('a')), mode('B', NO_OPINION()), mode('C', ALLOW('c'))], want: { decision: 'allow', reason: 'c' }, promise: false },
    { name: '!broken, A none', list: [broken, mode('A', NO_OPINION('a'))], want: { decision: 'no-opinion', reason: 'Broken: cannot reach webhook; a' }, promise: false },
    { name: '~A allow', list: [later('A', ALLOW('a')), mode('B', DENY('b'))], want: { decision: 'allow', reason: 'a' }, promise: true },
    { name: 'A none, ~B none, C deny', list: [mode('A', NO_OPINION('a')), later('B', NO_OPINION('b')), mode('C', DENY('c'))], want: { decision: 'deny', reason: 'c' }, promise: true },
    { name: 'A none, ~!rejects, ~B none, !broken', list: [mode('A', NO_OPINION('a')), rejects, later('B', NO_OPINION('b')), broken], want: { decision: 'no-opinion', reason: 'a; Rejects: webhook timed out; b; Broken: cannot reach webhook' }, promise: true },
  ])('answers without a promise exactly when every mode it asks does: $name', async ({ list, want, promise }) => {
    const res = authorizerChain(list).authorize(attrs('GET', '/api/v1/pods'));
    expect(res instanceof Promise).toBe(promise);
    expect(await res).toEqual(want);
  });
});

describe('authorizeOrThrow', () => {
  const mode = (answer: ReturnType<typeof ALLOW> | Promise<ReturnType<typeof ALLOW>>): Authorizer => ({ name: 'A', authorize: () => answer });
  const a = attrs('GET', '/api/v1/namespaces/d/pods');
  it.each([
    { name: 'allow at once: nothing, no promise', authorizer: mode(ALLOW()), want: 'returns' },
    { name: 'deny at once: thrown', authorizer: mode(DENY('no')), want: 'throws' },
    { name: 'allow later: a promise', authorizer: mode(Promise.resolve(ALLOW())), want: 'resolves' },
    { name: 'deny later: a rejection', authorizer: mode(Promise.resolve(DENY('no'))), want: 'rejects' },
  ])('$name', async ({ authorizer, want }) => {
    let got: string;
    try {
      const res = authorizeOrThrow(authorizer, a);
      got = res instanceof Promise ? await res.then(() => 'resolves', () => 'rejects') : 'returns';
    } catch (err) {
      expect((err as { code?: number }).code).toBe(403);
      got = 'throws';
    }
    expect(got).toBe(want);
  });
});
