import { parseRequestInfo, RequestInfo } from './request-info';

type Want = Partial<RequestInfo>;

describe('parseRequestInfo', () => {
  it.each<{ method: string; url: string; want: Want }>([
    // discovery and non-resource paths
    { method: 'GET', url: '/api', want: { isResourceRequest: false, verb: 'get', apiPrefix: 'api' } },
    { method: 'GET', url: '/api/v1', want: { isResourceRequest: false, verb: 'get', apiVersion: 'v1' } },
    { method: 'GET', url: '/apis/apps/v1', want: { isResourceRequest: false, apiGroup: 'apps', apiVersion: 'v1' } },
    { method: 'GET', url: '/apis/apps', want: { isResourceRequest: false } },
    { method: 'GET', url: '/healthz', want: { isResourceRequest: false, verb: 'get', apiPrefix: '' } },
    { method: 'POST', url: '/version', want: { isResourceRequest: false, verb: 'post' } },
    // core group
    { method: 'GET', url: '/api/v1/pods', want: { isResourceRequest: true, verb: 'list', resource: 'pods', namespace: '' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods', want: { verb: 'list', resource: 'pods', namespace: 'default' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods/p', want: { verb: 'get', resource: 'pods', name: 'p' } },
    { method: 'HEAD', url: '/api/v1/namespaces/default/pods/p', want: { verb: 'get' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=1', want: { verb: 'watch', resource: 'pods' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=true', want: { verb: 'watch' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=false', want: { verb: 'list' } },
    // Go's strconv.ParseBool spellings (the Python client sends watch=True).
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=True', want: { verb: 'watch' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=t', want: { verb: 'watch' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=TRUE', want: { verb: 'watch' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=False', want: { verb: 'list' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=F', want: { verb: 'list' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods?watch=0', want: { verb: 'list' } },
    { method: 'GET', url: '/api/v1/watch/namespaces/default/pods', want: { verb: 'watch', namespace: 'default', resource: 'pods' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods/p/log', want: { verb: 'get', subresource: 'log', name: 'p' } },
    { method: 'POST', url: '/api/v1/namespaces/default/pods', want: { verb: 'create' } },
    { method: 'POST', url: '/api/v1/namespaces/default/pods/p/eviction', want: { verb: 'create', subresource: 'eviction' } },
    { method: 'PUT', url: '/api/v1/namespaces/default/pods/p/status', want: { verb: 'update', subresource: 'status' } },
    { method: 'PATCH', url: '/api/v1/namespaces/default/pods/p', want: { verb: 'patch' } },
    { method: 'DELETE', url: '/api/v1/namespaces/default/pods/p', want: { verb: 'delete' } },
    { method: 'DELETE', url: '/api/v1/namespaces/default/pods', want: { verb: 'deletecollection' } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods/p/proxy/some/path', want: { subresource: 'proxy', rest: ['some', 'path'] } },
    // namespaces themselves
    { method: 'GET', url: '/api/v1/namespaces', want: { verb: 'list', resource: 'namespaces', name: '', namespace: '' } },
    { method: 'GET', url: '/api/v1/namespaces/ns1', want: { verb: 'get', resource: 'namespaces', name: 'ns1', namespace: 'ns1' } },
    { method: 'PUT', url: '/api/v1/namespaces/ns1/finalize', want: { verb: 'update', resource: 'namespaces', name: 'ns1', subresource: 'finalize' } },
    { method: 'PUT', url: '/api/v1/namespaces/ns1/status', want: { resource: 'namespaces', name: 'ns1', subresource: 'status' } },
    // named groups
    { method: 'GET', url: '/apis/apps/v1/deployments', want: { verb: 'list', apiGroup: 'apps', resource: 'deployments' } },
    { method: 'PATCH', url: '/apis/apps/v1/namespaces/d/deployments/x/scale', want: { verb: 'patch', subresource: 'scale', namespace: 'd' } },
    { method: 'GET', url: '/apis/rbac.authorization.orch.io/v1/clusterroles/admin', want: { verb: 'get', resource: 'clusterroles', name: 'admin' } },
    { method: 'POST', url: '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', want: { verb: 'create', resource: 'selfsubjectaccessreviews' } },
    // escaped names
    { method: 'GET', url: '/api/v1/namespaces/default/configmaps/a%3Ab', want: { name: 'a:b' } },
    { method: 'GET', url: '/api/v1/namespaces/default/configmaps/a%zz', want: { name: 'a%zz' } },
    // empty segments are skipped: doubled and trailing slashes
    { method: 'GET', url: '/api//v1/namespaces//default/pods/p/', want: { verb: 'get', apiVersion: 'v1', namespace: 'default', resource: 'pods', name: 'p', subresource: '', rest: [] } },
    { method: 'GET', url: '/api/v1/namespaces/default/pods/p/proxy//a//b/', want: { subresource: 'proxy', rest: ['a', 'b'] } },
    // legacy watch prefix before a namespace's own object and its subresources
    { method: 'GET', url: '/api/v1/watch/namespaces/ns1', want: { verb: 'watch', resource: 'namespaces', name: 'ns1', namespace: 'ns1' } },
    { method: 'GET', url: '/api/v1/watch/namespaces/ns1/status', want: { verb: 'watch', resource: 'namespaces', name: 'ns1', subresource: 'status', namespace: '' } },
    { method: 'OPTIONS', url: '/api/v1/namespaces/default/pods', want: { isResourceRequest: true, verb: 'options', resource: 'pods' } },
  ])('$method $url', ({ method, url, want }) => {
    const u = new URL(url, 'https://x');
    expect(parseRequestInfo(method, u.pathname, u.searchParams)).toMatchObject(want);
  });
});
