import type { Endpoint, EndpointSlice, Service } from './model';
import { categorizeEndpoints, endpointsFor, planService, routeFor } from './plan';

type Cond = Pick<Endpoint, 'ready' | 'serving' | 'terminating' | 'local'>;
const ep = (name: string, c: Partial<Cond>): Endpoint => ({ ip: name, port: 80, key: `${name}:80`, ready: true, serving: true, terminating: false, local: false, ...c });
const READY_LOCAL = { local: true };
const READY_REMOTE = { local: false };
const TERM_LOCAL = { local: true, ready: false, serving: true, terminating: true };
const TERM_REMOTE = { local: false, ready: false, serving: true, terminating: true };
const NOT_SERVING_LOCAL = { local: true, ready: false, serving: false, terminating: true };

describe('traffic policy selection (routeFor ∘ categorizeEndpoints)', () => {
  it.each([
    // --- Cluster policy
    { name: 'Cluster: every ready endpoint', policyLocal: false, eps: { a: READY_LOCAL, b: READY_REMOTE, c: TERM_REMOTE }, want: ['a', 'b'] },
    { name: 'Cluster: none ready → serving terminating ones', policyLocal: false, eps: { a: TERM_LOCAL, b: TERM_REMOTE, c: NOT_SERVING_LOCAL }, want: ['a', 'b'] },
    { name: 'Cluster: nothing usable → refused', policyLocal: false, eps: { c: NOT_SERVING_LOCAL }, want: 'refused' },
    { name: 'Cluster: no endpoints → refused', policyLocal: false, eps: {}, want: 'refused' },
    // --- Local policy
    { name: 'Local: only ready local endpoints', policyLocal: true, eps: { a: READY_LOCAL, b: READY_REMOTE, c: TERM_LOCAL }, want: ['a'] },
    { name: 'Local: all local terminating → the serving terminating ones', policyLocal: true, eps: { a: TERM_LOCAL, b: READY_REMOTE, c: NOT_SERVING_LOCAL }, want: ['a'] },
    { name: 'Local: none local, some elsewhere → dropped', policyLocal: true, eps: { b: READY_REMOTE }, want: 'dropped' },
    { name: 'Local: none local, only terminating elsewhere → dropped', policyLocal: true, eps: { b: TERM_REMOTE }, want: 'dropped' },
    { name: 'Local: nothing usable anywhere → refused', policyLocal: true, eps: { c: NOT_SERVING_LOCAL }, want: 'refused' },
  ])('$name', ({ policyLocal, eps, want }) => {
    const route = routeFor(categorizeEndpoints(Object.entries(eps).map(([n, c]) => ep(n, c))), policyLocal);
    const got = !route ? 'refused' : route.action === 'drop' ? 'dropped' : route.endpoints.map((e) => e.ip);
    expect(got).toEqual(want);
  });
});

const slice = (name: string, ports: EndpointSlice['ports'], endpoints: EndpointSlice['endpoints'], addressType = 'IPv4'): EndpointSlice => ({
  apiVersion: 'discovery.orch.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default' },
  addressType,
  ports,
  endpoints,
});

describe('endpointsFor', () => {
  it.each([
    {
      name: 'conditions: unset ready = ready, unset serving = ready, nodeName decides locality',
      slices: [slice('s1', [{ name: 'http', port: 8080, protocol: 'TCP' }], [{ addresses: ['10.1.0.1'], nodeName: 'me' }, { addresses: ['10.1.0.2'], conditions: { ready: false }, nodeName: 'other' }])],
      want: [
        { key: '10.1.0.1:8080', ready: true, serving: true, terminating: false, local: true },
        { key: '10.1.0.2:8080', ready: false, serving: false, terminating: false, local: false },
      ],
    },
    {
      name: 'the port by name and protocol; duplicates across slices once; IPv6 and FQDN slices skipped',
      slices: [
        slice('s1', [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }], [{ addresses: ['10.1.0.1'] }]),
        slice('s2', [{ name: 'http', port: 8080, protocol: 'TCP' }], [{ addresses: ['10.1.0.1'] }, { addresses: ['10.1.0.3'] }]),
        slice('s3', [{ name: 'http', port: 8080, protocol: 'TCP' }], [{ addresses: ['fd00::1'] }], 'IPv6'),
        slice('s4', [{ name: 'other', port: 9000, protocol: 'TCP' }], [{ addresses: ['10.1.0.9'] }]),
      ],
      want: [
        { key: '10.1.0.1:8080', ready: true, serving: true, terminating: false, local: false },
        { key: '10.1.0.3:8080', ready: true, serving: true, terminating: false, local: false },
      ],
    },
  ])('$name', ({ slices, want }) => {
    expect(endpointsFor(slices, 'http', 'TCP', 'me').map(({ key, ready, serving, terminating, local }) => ({ key, ready, serving, terminating, local }))).toEqual(want);
  });
});

describe('planService', () => {
  const svc = (spec: Service['spec']): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec });
  const readyHere = [slice('s', [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }], [{ addresses: ['10.1.0.1'], nodeName: 'me' }])];
  const readyElsewhere = [slice('s', [{ name: 'http', port: 8080, protocol: 'TCP' }], [{ addresses: ['10.1.0.1'], nodeName: 'far' }])];
  const opts = { nodeName: 'me', nodePortAddresses: ['127.0.0.1'] };
  const show = (s: Service, slices: EndpointSlice[]) =>
    planService(s, slices, opts).map((f) => `${f.key} ${f.route.action === 'drop' ? 'drop' : f.route.endpoints.map((e) => e.key).join(',')}${f.affinityTimeoutMs ? ` affinity=${f.affinityTimeoutMs}` : ''}`);

  it.each([
    {
      name: 'cluster IP and node port, TCP and UDP',
      spec: { type: 'NodePort', clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }, { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 }] },
      slices: readyHere,
      want: ['TCP/127.96.0.10:80 10.1.0.1:8080', 'TCP/127.0.0.1:30080 10.1.0.1:8080', 'UDP/127.96.0.10:53 10.1.0.1:53', 'UDP/127.0.0.1:30053 10.1.0.1:53'],
    },
    {
      name: 'ClientIP affinity with the default timeout',
      spec: { clusterIP: '127.96.0.10', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      slices: readyHere,
      want: ['TCP/127.96.0.10:80 10.1.0.1:8080 affinity=10800000'],
    },
    {
      name: 'internalTrafficPolicy Local, endpoints elsewhere: cluster IP drops; node port (Cluster) forwards',
      spec: { type: 'NodePort', clusterIP: '127.96.0.10', internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Cluster', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] },
      slices: readyElsewhere,
      want: ['TCP/127.96.0.10:80 drop', 'TCP/127.0.0.1:30080 10.1.0.1:8080'],
    },
    {
      name: 'externalTrafficPolicy Local, endpoints elsewhere: node port not forwarded',
      spec: { type: 'NodePort', clusterIP: '127.96.0.10', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] },
      slices: readyElsewhere,
      want: ['TCP/127.96.0.10:80 10.1.0.1:8080', 'TCP/127.0.0.1:30080 drop'],
    },
    { name: 'no endpoints: nothing listens (refused)', spec: { clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }, slices: [], want: [] },
    { name: 'headless', spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }, slices: readyHere, want: [] },
    { name: 'ExternalName', spec: { type: 'ExternalName' }, slices: readyHere, want: [] },
    { name: 'SCTP is not proxied', spec: { clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'SCTP' }] }, slices: readyHere, want: [] },
  ])('$name', ({ spec, slices, want }) => expect(show(svc(spec), slices)).toEqual(want));
});
