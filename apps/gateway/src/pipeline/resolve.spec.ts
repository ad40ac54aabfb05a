import type { FastifyReply, FastifyRequest } from 'fastify';
import { Catalog } from '@orch/api';
import { StatusError } from '@orch/apimachinery';
import { parseRequestInfo } from '../request/request-info';
import type { ApiRequest } from './api-request';
import { newApiRequest } from './pipeline';
import { MAX_MANAGERS, cachedFieldManagers, fieldManagerOf, resolveStage } from './resolve';
import { managerFromUserAgent } from '@orch/apimachinery';

const catalog = new Catalog();

function request(method: string, url: string, headers: Record<string, string> = {}): ApiRequest {
  const r = newApiRequest({ method, url, headers } as unknown as FastifyRequest, {} as FastifyReply);
  r.info = parseRequestInfo(method, r.path, r.query);
  r.user = { username: 'alice', groups: ['system:authenticated'] };
  return r;
}

function resolve(r: ApiRequest, k8sAliases = true): ApiRequest {
  resolveStage(catalog, { k8sAliases })(r);
  return r;
}

describe('resolveStage', () => {
  it.each([
    { name: 'a namespaced collection', method: 'GET', url: '/api/v1/namespaces/d/pods', kind: 'Pod', ns: 'd' },
    { name: 'a cluster-scoped object', method: 'GET', url: '/api/v1/nodes/n', kind: 'Node', ns: '' },
    { name: 'a k8s.io alias', method: 'POST', url: '/apis/rbac.authorization.k8s.io/v1/namespaces/d/roles', kind: 'Role', ns: 'd' },
    { name: 'the scale subresource (its own kind)', method: 'PUT', url: '/apis/apps/v1/namespaces/d/deployments/x/scale', kind: 'Scale', ns: 'd' },
    { name: 'the eviction subresource', method: 'POST', url: '/api/v1/namespaces/d/pods/p/eviction', kind: 'Eviction', ns: 'd' },
    { name: 'a virtual kind', method: 'POST', url: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', ns: '' },
  ])('$name', ({ method, url, kind, ns }) => {
    const t = resolve(request(method, url)).target!;
    expect(t.bodyKind.kind).toBe(kind);
    expect(t.namespace).toBe(ns);
    expect(t.ctx.user.username).toBe('alice');
  });

  it.each([
    { name: 'an unknown resource', method: 'GET', url: '/api/v1/widgets', code: 404 },
    { name: 'a cluster-scoped resource under a namespace', method: 'GET', url: '/api/v1/namespaces/d/nodes', code: 404 },
    { name: 'an unknown subresource', method: 'GET', url: '/api/v1/namespaces/d/pods/p/bogus', code: 404 },
    { name: 'a verb the subresource lacks', method: 'DELETE', url: '/api/v1/namespaces/d/pods/p/eviction', code: 405 },
    { name: 'a verb the resource lacks', method: 'DELETE', url: '/api/v1/namespaces', code: 405 },
    { name: 'a bad dryRun', method: 'POST', url: '/api/v1/namespaces/d/configmaps?dryRun=Some', code: 400 },
    { name: 'a bad fieldValidation on a write', method: 'POST', url: '/api/v1/namespaces/d/configmaps?fieldValidation=Loud', code: 400 },
  ])('$code for $name', ({ method, url, code }) => {
    expect(() => resolve(request(method, url))).toThrow(expect.objectContaining({ code }));
  });

  it.each([
    { name: 'logs as text', url: '/api/v1/namespaces/d/pods/p/log', accept: 'text/plain' },
    { name: 'logs as anything', url: '/api/v1/namespaces/d/pods/p/log?follow=true', accept: '*/*' },
    { name: 'a service proxy for HTML', url: '/api/v1/namespaces/d/services/s/proxy/index.html', accept: 'text/html' },
    { name: 'exec with an odd Accept', url: '/api/v1/namespaces/d/pods/p/exec?command=true', accept: 'application/octet-stream' },
  ])('a stream is not refused for its Accept: $name', ({ url, accept }) => {
    expect(resolve(request('GET', url, { accept })).target!.repr).toEqual(expect.objectContaining({ kind: 'json' }));
  });

  it('a stream keeps the API encoding it asked for its errors', () => {
    expect(resolve(request('GET', '/api/v1/namespaces/d/pods/p/log', { accept: 'application/yaml' })).target!.repr).toEqual(expect.objectContaining({ kind: 'yaml' }));
  });

  it('an API object asked for as text is still 406', () => {
    expect(() => resolve(request('GET', '/api/v1/namespaces/d/pods/p', { accept: 'text/plain' }))).toThrow(expect.objectContaining({ code: 406 }));
  });

  it('the k8s.io aliases are 404 with the compatibility option off', () => {
    expect(() => resolve(request('GET', '/apis/rbac.authorization.k8s.io/v1/roles'), false)).toThrow(StatusError);
  });

  it('non-resource requests pass through', () => {
    expect(resolve(request('GET', '/healthz')).target).toBeUndefined();
  });

  it.each([
    { name: 'a product and version', ua: 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc', manager: 'kubectl' },
    { name: 'no User-Agent', ua: undefined, manager: '' },
    { name: 'an unprintable character dropped', ua: 'my\u0007tool/1', manager: 'mytool' },
  ])('a write without fieldManager is recorded for its User-Agent: $name', ({ ua, manager }) => {
    for (let i = 0; i < 2; i++) expect(resolve(request('POST', '/api/v1/namespaces/d/configmaps', ua === undefined ? {} : { 'user-agent': ua })).target!.ctx.fieldManager).toBe(manager);
  });

  it.each([
    { method: 'GET', path: '/api/v1/namespaces/d/configmaps/c', manager: undefined },
    { method: 'GET', path: '/api/v1/namespaces/d/configmaps', manager: undefined },
    { method: 'PUT', path: '/api/v1/namespaces/d/configmaps/c', manager: 'kubectl' },
    { method: 'PATCH', path: '/api/v1/namespaces/d/configmaps/c?fieldManager=mine', manager: 'mine' },
    { method: 'DELETE', path: '/api/v1/namespaces/d/configmaps/c', manager: 'kubectl' },
  ])('$method $path: field manager $manager (reads record none)', ({ method, path, manager }) => {
    expect(resolve(request(method, path, { 'user-agent': 'kubectl/v1.32.0' })).target!.ctx.fieldManager).toBe(manager);
  });

  // The cache of managers by User-Agent is bounded: distinct headers cannot grow it, and its answers stay upstream's.
  it('remembers at most MAX_MANAGERS User-Agents, and long ones not at all', () => {
    for (let i = 0; i <= MAX_MANAGERS; i++) fieldManagerOf(`tool-${i}/1`);
    expect(cachedFieldManagers()).toBeLessThanOrEqual(MAX_MANAGERS);
    expect(cachedFieldManagers()).toBeGreaterThan(0);
    const before = cachedFieldManagers();
    const long = `${'x'.repeat(300)}/1`;
    expect(fieldManagerOf(long)).toBe(managerFromUserAgent(long));
    expect(cachedFieldManagers()).toBe(before);
  });
});
