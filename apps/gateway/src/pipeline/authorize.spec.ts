import { ALLOW, DENY, NO_OPINION, authorizerChain, type AuthorizationAttributes, type Authorizer } from '@orch/auth';
import { parseRequestInfo } from '../request/request-info';
import { attributesOf, forbidden } from './authorize';

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
});
