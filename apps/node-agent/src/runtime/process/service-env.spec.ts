import type { Pod, Service } from '../../api/types';
import { serviceLinkEnv, serviceVariables } from './service-env';

type Ports = NonNullable<Service['spec']>['ports'];
const svc = (namespace: string, name: string, clusterIP: string | undefined, ports: Ports = [{ port: 80 }]): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { namespace, name },
  spec: { clusterIP, ports },
});
const pod = (namespace: string, enableServiceLinks?: boolean): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace }, spec: { containers: [], ...(enableServiceLinks === undefined ? {} : { enableServiceLinks }) } });

describe('service link variables (upstream kubelet)', () => {
  it('one Service: host, ports and the Docker link variables', () => {
    expect(serviceVariables(svc('shop', 'web-api', '10.0.0.7', [{ name: 'http', port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }]))).toEqual({
      WEB_API_SERVICE_HOST: '10.0.0.7',
      WEB_API_SERVICE_PORT: '80',
      WEB_API_SERVICE_PORT_HTTP: '80',
      WEB_API_SERVICE_PORT_DNS: '53',
      WEB_API_PORT: 'tcp://10.0.0.7:80',
      WEB_API_PORT_80_TCP: 'tcp://10.0.0.7:80',
      WEB_API_PORT_80_TCP_PROTO: 'tcp',
      WEB_API_PORT_80_TCP_PORT: '80',
      WEB_API_PORT_80_TCP_ADDR: '10.0.0.7',
      WEB_API_PORT_53_UDP: 'udp://10.0.0.7:53',
      WEB_API_PORT_53_UDP_PROTO: 'udp',
      WEB_API_PORT_53_UDP_PORT: '53',
      WEB_API_PORT_53_UDP_ADDR: '10.0.0.7',
    });
  });

  const all = [
    svc('default', 'orch', '10.96.0.1', [{ name: 'https', port: 443 }]),
    svc('default', 'kubernetes', '10.96.0.2', [{ name: 'https', port: 443 }]),
    svc('default', 'other', '10.96.0.9'),
    svc('shop', 'web', '10.96.0.10'),
    svc('shop', 'headless', 'None'),
    svc('shop', 'external', undefined),
  ];
  const hosts = (env: Record<string, string>) => Object.keys(env).filter((k) => k.endsWith('_SERVICE_HOST')).sort();

  it.each([
    { name: 'the API Services and the namespace’s Services with a cluster IP', pod: pod('shop'), want: ['KUBERNETES_SERVICE_HOST', 'ORCH_SERVICE_HOST', 'WEB_SERVICE_HOST'] },
    { name: 'enableServiceLinks: false keeps the API Services only', pod: pod('shop', false), want: ['KUBERNETES_SERVICE_HOST', 'ORCH_SERVICE_HOST'] },
    { name: 'in default, every Service of default', pod: pod('default'), want: ['KUBERNETES_SERVICE_HOST', 'ORCH_SERVICE_HOST', 'OTHER_SERVICE_HOST'] },
  ])('$name', ({ pod: p, want }) => {
    const env = serviceLinkEnv(p, all);
    expect(hosts(env)).toEqual(want);
    expect(env.KUBERNETES_SERVICE_PORT).toBe('443');
    expect(env.ORCH_SERVICE_HOST).toBe('10.96.0.1');
  });

  it('a Service of the pod’s namespace named like an API Service wins', () => {
    expect(serviceLinkEnv(pod('shop'), [...all, svc('shop', 'orch', '10.96.0.50')]).ORCH_SERVICE_HOST).toBe('10.96.0.50');
  });
});
