import { clusterIPLowerBand, dynamicOrder, ipOffset, nodePortLowerBand, parseIPv4, parseNodePortRange, parseServiceCidr } from './ranges';

describe('clusterIPLowerBand: min(max(16, cidrSize/16), 256) (SPEC)', () => {
  it.each([
    { name: '/30 (4 addresses): one pool', cidrSize: 4, want: 0 },
    { name: '/28 (16 addresses): one pool', cidrSize: 16, want: 0 },
    { name: '/27 (32): the minimum 16', cidrSize: 32, want: 16 },
    { name: '/24 (256): 256/16 = 16', cidrSize: 256, want: 16 },
    { name: '/23 (512): 512/16 = 32', cidrSize: 512, want: 32 },
    { name: '/20 (4096): 4096/16 = 256', cidrSize: 4096, want: 256 },
    { name: '/16 (65536): capped at 256', cidrSize: 65536, want: 256 },
    { name: '/12 (1048576): capped at 256', cidrSize: 1048576, want: 256 },
  ])('$name', ({ cidrSize, want }) => expect(clusterIPLowerBand(cidrSize)).toBe(want));
});

describe('parseServiceCidr', () => {
  it.each([
    { name: 'kubeadm default', input: '10.96.0.0/12', gate: true, want: { cidr: '10.96.0.0/12', size: 1048574, lower: 256, first: '10.96.0.1' } },
    { name: 'local loopback profile', input: '127.96.0.0/16', gate: true, want: { cidr: '127.96.0.0/16', size: 65534, lower: 256, first: '127.96.0.1' } },
    { name: '/24', input: '192.168.7.0/24', gate: true, want: { cidr: '192.168.7.0/24', size: 254, lower: 16, first: '192.168.7.1' } },
    { name: 'host bits are masked off', input: '10.0.0.77/24', gate: true, want: { cidr: '10.0.0.0/24', size: 254, lower: 16, first: '10.0.0.1' } },
    { name: '/27 bands 16 + 14', input: '10.0.0.0/27', gate: true, want: { cidr: '10.0.0.0/27', size: 30, lower: 16, first: '10.0.0.1' } },
    { name: 'gate off: one shared pool', input: '10.96.0.0/12', gate: false, want: { cidr: '10.96.0.0/12', size: 1048574, lower: 0, first: '10.96.0.1' } },
  ])('$name', ({ input, gate, want }) => {
    const r = parseServiceCidr(input, gate);
    expect({ cidr: r.cidr, size: r.size, lower: r.lower, first: [r.first >>> 24, (r.first >>> 16) & 255, (r.first >>> 8) & 255, r.first & 255].join('.') }).toEqual(want);
  });

  it.each([
    { name: 'IPv6', input: 'fd00::/108', want: /IPv6 ranges are not supported/ },
    { name: 'dual stack', input: '10.0.0.0/24,fd00::/108', want: /dual-stack ranges are not supported/ },
    { name: 'no mask', input: '10.0.0.0', want: /not a CIDR/ },
    { name: 'bad address', input: '10.0.0.256/24', want: /not a valid IPv4 CIDR/ },
    { name: 'leading zero', input: '10.0.0.01/24', want: /not a valid IPv4 CIDR/ },
    { name: 'too large', input: '10.0.0.0/8', want: /too large; for 32-bit addresses, the mask must be >= 12/ },
    { name: 'too small', input: '10.0.0.0/31', want: /too small/ },
  ])('rejects $name', ({ input, want }) => expect(() => parseServiceCidr(input, true)).toThrow(want));
});

describe('ipOffset', () => {
  const r = parseServiceCidr('10.0.0.0/24', true);
  it.each([
    { name: 'first usable', ip: '10.0.0.1', want: 0 },
    { name: 'last usable', ip: '10.0.0.254', want: 253 },
    { name: 'network address', ip: '10.0.0.0', want: undefined },
    { name: 'broadcast address', ip: '10.0.0.255', want: undefined },
    { name: 'outside', ip: '10.0.1.1', want: undefined },
    { name: 'not an IP', ip: 'banana', want: undefined },
  ])('$name', ({ ip, want }) => expect(ipOffset(r, ip)).toBe(want));
});

describe('parseIPv4', () => {
  it.each([
    { input: '0.0.0.0', want: 0 },
    { input: '255.255.255.255', want: 4294967295 },
    { input: '127.96.0.10', want: 0x7f60000a },
    { input: '1.2.3', want: undefined },
    { input: '1.2.3.4.5', want: undefined },
    { input: '::1', want: undefined },
  ])('$input', ({ input, want }) => expect(parseIPv4(input)).toBe(want));
});

describe('node port range', () => {
  it.each([
    { name: 'default', input: '30000-32767', want: { text: '30000-32767', base: 30000, size: 2768, lower: 86 } },
    { name: 'base+extra form', input: '30000+99', want: { text: '30000-30099', base: 30000, size: 100, lower: 16 } },
    { name: 'large range capped at 128', input: '20000-32767', want: { text: '20000-32767', base: 20000, size: 12768, lower: 128 } },
    { name: 'tiny range: one pool', input: '30000-30009', want: { text: '30000-30009', base: 30000, size: 10, lower: 0 } },
  ])('$name', ({ input, want }) => expect(parseNodePortRange(input)).toEqual(want));

  it.each([
    { input: '30000', want: /want a port range/ },
    { input: '32767-30000', want: /first <= last/ },
    { input: '0-100', want: /first <= last/ },
    { input: '60000-70000', want: /<= 65535/ },
  ])('rejects $input', ({ input, want }) => expect(() => parseNodePortRange(input)).toThrow(want));

  it('lower band of node ports: min(max(16, size/32), 128)', () => {
    expect([16, 17, 512, 2768, 4096, 100000].map(nodePortLowerBand)).toEqual([0, 16, 16, 86, 128, 128]);
  });
});

describe('dynamicOrder', () => {
  it.each([
    { name: 'upper band first from the random start, wrapping, then the lower band', bands: { size: 8, lower: 3 }, random: 0.5, want: [5, 6, 7, 3, 4, 1, 2, 0] },
    { name: 'start 0', bands: { size: 6, lower: 2 }, random: 0, want: [2, 3, 4, 5, 0, 1] },
    { name: 'no lower band: one pool', bands: { size: 4, lower: 0 }, random: 0.25, want: [1, 2, 3, 0] },
    { name: 'all lower band', bands: { size: 3, lower: 3 }, random: 0, want: [0, 1, 2] },
  ])('$name', ({ bands, random, want }) => expect([...dynamicOrder(bands, () => random)]).toEqual(want));
});
