import { formatMicroTime } from '@orch/apimachinery';
import { parseServiceCidr } from '../registry/service-ip/ranges';
import { advertiseAddress, apiEndpointSlices, apiEndpointsSubsets, apiServiceServingHosts, apiServiceSpecs, endpointLeaseName, liveEndpoints } from './api-endpoints';

const lease = (holder: string, renewedMsAgo: number, durationSeconds = 15) => ({
  apiVersion: 'coordination.orch.io/v1',
  kind: 'Lease',
  metadata: { name: 'x' },
  spec: { holderIdentity: holder, leaseDurationSeconds: durationSeconds, renewTime: formatMicroTime((Date.now() - renewedMsAgo) * 1000) },
});

describe('the Services in front of the API', () => {
  const cidr = parseServiceCidr('10.96.0.0/12', true);

  it.each([
    { compat: true, want: [{ name: 'orch', clusterIP: '10.96.0.1' }, { name: 'kubernetes', clusterIP: '10.96.0.2' }] },
    { compat: false, want: [{ name: 'orch', clusterIP: '10.96.0.1' }] },
  ])('orch on the first address, kubernetes on the second under the compatibility option ($compat)', ({ compat, want }) => {
    expect(apiServiceSpecs(cidr, compat)).toEqual(want);
  });

  it('the serving certificate carries their addresses and in-cluster names', () => {
    expect(apiServiceServingHosts(apiServiceSpecs(cidr, true))).toEqual(
      expect.arrayContaining(['10.96.0.1', '10.96.0.2', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', 'orch.default.svc']),
    );
  });

  it('endpoints are the gateways whose lease is live', () => {
    const now = Date.now();
    const live = liveEndpoints([lease('10.0.0.2:6443', 1000), lease('10.0.0.1:6443', 0), lease('10.0.0.9:6443', 20_000), lease('garbage', 0)] as never[], now);
    expect(live).toEqual([
      { ip: '10.0.0.1', port: 6443 },
      { ip: '10.0.0.2', port: 6443 },
    ]);
    expect(apiEndpointsSubsets(live)).toEqual([{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);
  });

  it('one EndpointSlice per gateway port, labelled for the proxy, the first named after the Service', () => {
    const slices = apiEndpointSlices('kubernetes', [{ ip: '127.0.0.1', port: 6443 }, { ip: '127.0.0.1', port: 6444 }], true);
    expect(slices.map((s) => s.metadata.name)).toEqual(['kubernetes', 'kubernetes-6444']);
    expect(slices[0].metadata.labels).toEqual({
      'orch.io/service-name': 'kubernetes',
      'kubernetes.io/service-name': 'kubernetes',
      'endpointslice.orch.io/managed-by': 'gateway.orch.io',
      'endpointslice.kubernetes.io/managed-by': 'gateway.orch.io',
    });
    expect(slices[1].endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true, serving: true, terminating: false } }]);
  });

  it.each([
    { flag: '10.1.2.3', bind: '0.0.0.0', want: '10.1.2.3' },
    { flag: '', bind: '127.0.0.1', want: '127.0.0.1' },
  ])('advertise address: flag $flag, bind $bind', ({ flag, bind, want }) => {
    expect(advertiseAddress(flag, bind)).toBe(want);
  });

  it('lease names are valid object names', () => {
    expect(endpointLeaseName('127.0.0.1', 6443)).toBe('orch-apiserver-127-0-0-1-6443');
  });
});
