import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureFrontProxyPki, ensurePki, issueClientCert } from '@orch/auth';
import { cpuQuantity, memoryQuantity, parsePath } from './api';
import { RequestAuthenticator, authenticationConfigFrom } from './authentication';
import { cpuRate } from './scraper';

describe('parsePath', () => {
  it.each<{ path: string; want: unknown }>([
    { path: '/apis/metrics.k8s.io/v1beta1', want: 'discovery' },
    { path: '/apis/metrics.orch.io/v1beta1/nodes', want: { group: 'metrics.orch.io', verb: 'list', resource: 'nodes', namespace: '', name: '' } },
    { path: '/apis/metrics.k8s.io/v1beta1/nodes/n1', want: { group: 'metrics.k8s.io', verb: 'get', resource: 'nodes', namespace: '', name: 'n1' } },
    { path: '/apis/metrics.k8s.io/v1beta1/pods', want: { group: 'metrics.k8s.io', verb: 'list', resource: 'pods', namespace: '', name: '' } },
    { path: '/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p', want: { group: 'metrics.k8s.io', verb: 'get', resource: 'pods', namespace: 'ns', name: 'p' } },
    { path: '/apis/metrics.k8s.io/v1beta1/namespaces/ns/nodes', want: undefined },
    { path: '/apis/other.io/v1beta1/nodes', want: undefined },
  ])('$path', ({ path, want }) => {
    expect(parsePath(path)).toEqual(want);
  });
});

describe('quantities and rates', () => {
  it.each([
    [0.25, '250000000n'],
    [2, '2000000000n'],
  ])('cpu %p cores is %s', (cores, want) => expect(cpuQuantity(cores)).toBe(want));
  it('memory in KiB', () => expect(memoryQuantity(3 * 1024 * 1024)).toBe('3072Ki'));
  it.each<{ name: string; prev?: { at: number; cpuNanos: number }; cur: { at: number; cpuNanos: number }; want?: number }>([
    { name: 'a rate from two points', prev: { at: 0, cpuNanos: 0 }, cur: { at: 2000, cpuNanos: 1e9 }, want: 0.5 },
    { name: 'no rate from one point', cur: { at: 2000, cpuNanos: 1e9 } },
    { name: 'no rate across a counter reset', prev: { at: 0, cpuNanos: 5e9 }, cur: { at: 2000, cpuNanos: 1e9 } },
  ])('$name', ({ prev, cur, want }) => expect(cpuRate(prev, cur)?.cores).toBe(want));
});

describe('RequestAuthenticator (delegated authentication)', () => {
  let dir: string;
  let authn: RequestAuthenticator;
  let certs: { proxy: Buffer; otherProxyName: Buffer; user: Buffer };
  const der = (pem: string) => Buffer.from(new X509Certificate(pem).raw);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ms-authn-'));
    const pki = await ensurePki(join(dir, 'pki'));
    const front = await ensureFrontProxyPki(join(dir, 'pki'));
    authn = new RequestAuthenticator(
      authenticationConfigFrom({
        'client-ca-file': pki.ca.certPem,
        'requestheader-client-ca-file': front.ca.certPem,
        'requestheader-allowed-names': '["front-proxy-client"]',
        'requestheader-username-headers': '["X-Remote-User"]',
        'requestheader-group-headers': '["X-Remote-Group"]',
        'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      }),
    );
    // A certificate from the cluster CA named like the front proxy is still no front proxy.
    const impostor = await issueClientCert(pki, { cn: 'front-proxy-client' });
    certs = { proxy: der(front.client.certPem), otherProxyName: der(impostor.certPem), user: der((await issueClientCert(pki, { cn: 'alice', orgs: ['dev'] })).certPem) };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const identity = { 'x-remote-user': 'bob', 'x-remote-group': ['g1', 'g2'], 'x-remote-extra-scopes%2Fa': 'x' };
  it.each<{ name: string; cert: () => Buffer | undefined; want: unknown }>([
    { name: 'the front proxy carries the caller in headers', cert: () => certs.proxy, want: { username: 'bob', groups: ['g1', 'g2'], extra: { 'scopes/a': ['x'] } } },
    { name: 'a client certificate is its subject; identity headers are ignored', cert: () => certs.user, want: { username: 'alice', groups: ['dev', 'system:authenticated'], extra: {} } },
    { name: 'a cluster-CA certificate named like the proxy is its subject, not the headers', cert: () => certs.otherProxyName, want: { username: 'front-proxy-client', groups: ['system:authenticated'], extra: {} } },
    { name: 'no certificate is not authenticated', cert: () => undefined, want: undefined },
  ])('$name', ({ cert, want }) => {
    expect(authn.authenticate(cert(), identity)).toEqual(want);
  });
});
