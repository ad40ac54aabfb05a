import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@orch/apimachinery';
import { alwaysAllowAuthorizer, alwaysDenyAuthorizer } from '@orch/auth';
import { createLogger } from '@orch/server-common';
import { parseRequestInfo } from '../request/request-info';
import { impersonatedUser, impersonateStage, impersonationChecks, parseImpersonation } from './impersonate';
import { newApiRequest } from './pipeline';

const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function error(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

describe('parseImpersonation', () => {
  it.each([
    { name: 'no headers', headers: {}, want: undefined },
    { name: 'no Impersonate-* header', headers: { accept: 'application/json', 'user-agent': 'kubectl/v1.32.0', impersonate: 'x' }, want: undefined },
    { name: 'an extra after other headers', headers: { accept: '*/*', 'impersonate-user': 'bob', host: 'h', 'impersonate-extra-scopes': 'view' }, want: { user: 'bob', groups: [], extra: { scopes: ['view'] } } },
    { name: 'a user', headers: { 'impersonate-user': 'bob' }, want: { user: 'bob', groups: [], extra: {} } },
    {
      name: 'user, groups, uid and extras',
      headers: { 'impersonate-user': 'bob', 'impersonate-group': ['dev', 'ops'], 'impersonate-uid': 'u-1', 'impersonate-extra-scopes': 'view,edit', 'impersonate-extra-example.com%2fteam': 'a' },
      want: { user: 'bob', groups: ['dev', 'ops'], uid: 'u-1', extra: { scopes: ['view', 'edit'], 'example.com/team': ['a'] } },
    },
  ])('$name', ({ headers, want }) => {
    expect(parseImpersonation(headers)).toEqual(want);
  });

  it.each([
    { name: 'groups without a user', headers: { 'impersonate-group': 'dev' } },
    { name: 'an extra without a user', headers: { 'impersonate-extra-x': 'y' } },
    { name: 'an extra after other headers without a user', headers: { accept: '*/*', 'impersonate-extra-x': 'y' } },
    { name: 'a uid without a user', headers: { 'impersonate-uid': 'u-1' } },
    { name: 'two users', headers: { 'impersonate-user': ['a', 'b'] } },
  ])('400 for $name', ({ headers }) => {
    expect(error(() => parseImpersonation(headers)).code).toBe(400);
  });
});

describe('impersonationChecks', () => {
  it('asks impersonate on every part', () => {
    const checks = impersonationChecks(admin, { user: 'bob', groups: ['dev'], uid: 'u-1', extra: { scopes: ['view'] } });
    expect(checks.map((c) => [c.verb, c.apiGroup, c.resource, c.subresource, c.namespace, c.name])).toEqual([
      ['impersonate', '', 'users', '', '', 'bob'],
      ['impersonate', '', 'groups', '', '', 'dev'],
      ['impersonate', 'authentication.k8s.io', 'uids', '', '', 'u-1'],
      ['impersonate', 'authentication.k8s.io', 'userextras', 'scopes', '', 'view'],
    ]);
    expect(checks.every((c) => c.user === admin)).toBe(true);
  });

  it('a service account is checked as serviceaccounts in its namespace', () => {
    const [check] = impersonationChecks(admin, { user: 'system:serviceaccount:team:builder', groups: [], extra: {} });
    expect([check.resource, check.namespace, check.name]).toEqual(['serviceaccounts', 'team', 'builder']);
  });
});

describe('impersonatedUser', () => {
  it.each([
    { name: 'a user with groups', want: { user: 'bob', groups: ['dev'], extra: {} }, groups: ['dev', 'system:authenticated'] },
    { name: 'a service account gets its groups', want: { user: 'system:serviceaccount:team:builder', groups: [], extra: {} }, groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] },
    { name: 'anonymous stays unauthenticated', want: { user: 'system:anonymous', groups: [], extra: {} }, groups: ['system:unauthenticated'] },
  ])('$name', ({ want, groups }) => {
    expect(impersonatedUser(want).groups).toEqual(groups);
  });
});

describe('impersonateStage', () => {
  // A request without Impersonate-* headers passes at once (no promise); with them, after its checks.
  it.each([
    { name: 'no impersonation headers', headers: {}, authorizer: alwaysAllowAuthorizer(), want: { at: 'now', user: 'admin' } },
    { name: 'impersonate-user allowed', headers: { 'impersonate-user': 'bob' }, authorizer: alwaysAllowAuthorizer(), want: { at: 'later', user: 'bob' } },
    { name: 'impersonate-user denied', headers: { 'impersonate-user': 'bob' }, authorizer: alwaysDenyAuthorizer(), want: { at: 'later', code: 403 } },
  ])('$name', async ({ headers, authorizer, want }) => {
    const r = newApiRequest({ method: 'GET', url: '/api/v1/namespaces/d/pods', headers } as unknown as FastifyRequest, {} as FastifyReply);
    r.info = parseRequestInfo('GET', r.path, r.query);
    r.authenticatedUser = admin;
    const running = impersonateStage(authorizer, createLogger('test'))(r);
    const got: { at: string; user?: string; code?: number } = { at: running instanceof Promise ? 'later' : 'now' };
    try {
      await running;
      got.user = r.user?.username;
    } catch (err) {
      got.code = (err as StatusError).code;
    }
    expect(got).toEqual(want);
  });
});

