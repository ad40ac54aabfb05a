import { NodeAuth, nodeRequestAttributes } from './auth';

describe('nodeRequestAttributes (SPEC path → subresource)', () => {
  it.each([
    { method: 'GET', path: '/stats/summary', verb: 'get', sub: 'stats' },
    { method: 'GET', path: '/stats', verb: 'get', sub: 'stats' },
    { method: 'GET', path: '/statsx', verb: 'get', sub: 'proxy' },
    { method: 'GET', path: '/metrics', verb: 'get', sub: 'metrics' },
    { method: 'GET', path: '/metrics/resource', verb: 'get', sub: 'metrics' },
    { method: 'GET', path: '/logs/', verb: 'get', sub: 'log' },
    { method: 'GET', path: '/logs/syslog', verb: 'get', sub: 'log' },
    { method: 'GET', path: '/spec/', verb: 'get', sub: 'spec' },
    { method: 'GET', path: '/containerLogs/ns/p/c', verb: 'get', sub: 'proxy' },
    { method: 'GET', path: '/pods', verb: 'get', sub: 'proxy' },
    { method: 'GET', path: '/healthz', verb: 'get', sub: 'proxy' },
    { method: 'HEAD', path: '/pods', verb: 'get', sub: 'proxy' },
    { method: 'POST', path: '/podProxy/ns/p/80/x', verb: 'create', sub: 'proxy' },
    { method: 'PUT', path: '/podProxy/ns/p/80/x', verb: 'update', sub: 'proxy' },
    { method: 'PATCH', path: '/podProxy/ns/p/80/x', verb: 'patch', sub: 'proxy' },
    { method: 'DELETE', path: '/podProxy/ns/p/80/x', verb: 'delete', sub: 'proxy' },
  ])('$method $path → $verb nodes/$sub', ({ method, path, verb, sub }) => {
    expect(nodeRequestAttributes(method, path, 'n1')).toEqual({ verb, resource: 'nodes', subresource: sub, name: 'n1' });
  });
});

describe('NodeAuth without credentials', () => {
  it.each([
    { name: 'anonymous allowed', anonymous: true, want: { ok: true, user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } } },
    { name: 'anonymous refused', anonymous: false, want: { ok: false, code: 401, message: 'Unauthorized' } },
  ])('$name', async ({ anonymous, want }) => {
    const auth = new NodeAuth({ anonymous, authorization: { mode: 'AlwaysAllow' } });
    expect(await auth.check({ headers: {} }, 'GET', '/pods', 'n1')).toEqual(want);
  });
});
