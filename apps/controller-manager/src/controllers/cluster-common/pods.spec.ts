import { findPort, podIPOfFamily, shouldPodBeInEndpoints, shouldSetHostname } from './pods';
import type { Pod, Service } from '../../framework/api';

const pod = (p: { phase?: string; ip?: string; ips?: string[]; deleting?: boolean; ports?: { name?: string; containerPort: number; protocol?: string }[]; hostname?: string; subdomain?: string } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { containers: [{ name: 'c', ports: p.ports }], hostname: p.hostname, subdomain: p.subdomain },
  status: { phase: p.phase ?? 'Running', podIP: p.ip, podIPs: p.ips?.map((ip) => ({ ip })) },
});

describe('shouldPodBeInEndpoints', () => {
  it.each([
    { name: 'running with an IP', input: pod({ ip: '10.0.0.1' }), terminating: false, want: true },
    { name: 'no IP yet', input: pod(), terminating: false, want: false },
    { name: 'succeeded', input: pod({ ip: '10.0.0.1', phase: 'Succeeded' }), terminating: true, want: false },
    { name: 'failed', input: pod({ ip: '10.0.0.1', phase: 'Failed' }), terminating: true, want: false },
    { name: 'terminating excluded', input: pod({ ip: '10.0.0.1', deleting: true }), terminating: false, want: false },
    { name: 'terminating included', input: pod({ ip: '10.0.0.1', deleting: true }), terminating: true, want: true },
  ])('$name', ({ input, terminating, want }) => {
    expect(shouldPodBeInEndpoints(input, terminating)).toBe(want);
  });
});

describe('podIPOfFamily', () => {
  it.each([
    { name: 'podIP', input: pod({ ip: '10.0.0.1' }), family: 'IPv4' as const, want: '10.0.0.1' },
    { name: 'podIPs preferred', input: pod({ ip: '10.0.0.1', ips: ['fd00::1', '10.0.0.2'] }), family: 'IPv4' as const, want: '10.0.0.2' },
    { name: 'IPv6 family', input: pod({ ips: ['10.0.0.2', 'fd00::1'] }), family: 'IPv6' as const, want: 'fd00::1' },
    { name: 'no address of the family', input: pod({ ip: '10.0.0.1' }), family: 'IPv6' as const, want: undefined },
  ])('$name', ({ input, family, want }) => {
    expect(podIPOfFamily(input, family)).toBe(want);
  });
});

describe('findPort', () => {
  const named = pod({ ports: [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }] });
  it.each([
    { name: 'number target', port: { port: 80, targetPort: 9090 }, want: 9090 },
    { name: 'numeric string target', port: { port: 80, targetPort: '9091' }, want: 9091 },
    { name: 'unset target is the port', port: { port: 80 }, want: 80 },
    { name: 'named target', port: { port: 80, targetPort: 'http' }, want: 8080 },
    { name: 'named target with protocol', port: { port: 53, targetPort: 'dns', protocol: 'UDP' }, want: 53 },
    { name: 'named target with other protocol', port: { port: 53, targetPort: 'dns' }, want: undefined },
    { name: 'unknown name', port: { port: 80, targetPort: 'grpc' }, want: undefined },
  ])('$name', ({ port, want }) => {
    expect(findPort(named, port)).toBe(want);
  });
});

describe('shouldSetHostname', () => {
  const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns' } };
  it.each([
    { name: 'hostname and matching subdomain', input: pod({ hostname: 'h', subdomain: 'web' }), want: true },
    { name: 'other subdomain', input: pod({ hostname: 'h', subdomain: 'db' }), want: false },
    { name: 'no hostname', input: pod({ subdomain: 'web' }), want: false },
  ])('$name', ({ input, want }) => {
    expect(shouldSetHostname(input, svc)).toBe(want);
  });
});
