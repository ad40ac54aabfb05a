import { cidrContains, nodePortAddresses } from './node-addresses';

describe('nodePortAddresses', () => {
  const local = ['127.0.0.1', '10.0.2.15', '192.168.1.4'];
  it.each([
    { name: 'no CIDRs: all addresses', cidrs: [], want: ['0.0.0.0'] },
    { name: 'loopback only', cidrs: ['127.0.0.0/8'], want: ['127.0.0.1'] },
    { name: 'several ranges', cidrs: ['10.0.0.0/8', '192.168.1.4/32'], want: ['10.0.2.15', '192.168.1.4'] },
  ])('$name', ({ cidrs, want }) => expect(nodePortAddresses(cidrs, local)).toEqual(want));

  it.each([
    { cidrs: ['172.16.0.0/12'], want: /no address of this machine is in these ranges/ },
    { cidrs: ['10.0.0.0'], want: /is not an IPv4 CIDR/ },
  ])('rejects $cidrs', ({ cidrs, want }) => expect(() => nodePortAddresses(cidrs, local)).toThrow(want));

  it.each([
    { cidr: '10.0.0.0/8', ip: '10.255.1.1', want: true },
    { cidr: '10.0.0.0/8', ip: '11.0.0.1', want: false },
    { cidr: '0.0.0.0/0', ip: '8.8.8.8', want: true },
    { cidr: '192.168.1.4/32', ip: '192.168.1.5', want: false },
  ])('$cidr contains $ip: $want', ({ cidr, ip, want }) => expect(cidrContains(cidr, ip)).toBe(want));
});
