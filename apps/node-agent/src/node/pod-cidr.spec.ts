import { PodIpAllocator, defaultPodCidr, parsePodCidr } from './pod-cidr';

describe('defaultPodCidr', () => {
  it.each([{ name: 'n1' }, { name: 'worker-2' }, { name: 'sim-node-999' }])('$name gets a stable /24 in 127.128.0.0/9', ({ name }) => {
    const cidr = defaultPodCidr(name);
    expect(cidr).toMatch(/^127\.(1[3-9]\d|12[89]|2[0-4]\d|25[0-4])\.\d{1,3}\.0\/24$/);
    expect(defaultPodCidr(name)).toBe(cidr);
    expect(() => parsePodCidr(cidr)).not.toThrow();
  });

  it('differs between node names', () => {
    const cidrs = new Set(Array.from({ length: 50 }, (_, i) => defaultPodCidr(`node-${i}`)));
    expect(cidrs.size).toBeGreaterThan(45);
  });
});

describe('parsePodCidr', () => {
  it.each([
    { input: '127.10.0.0/24', want: '127.10.0' },
    { input: ' 10.1.2.0/24 ', want: '10.1.2' },
    { input: '127.10.0.0/16', want: 'error' },
    { input: '127.10.0.5/24', want: 'error' },
    { input: '127.300.0.0/24', want: 'error' },
    { input: 'fd00::/64', want: 'error' },
  ])('$input', ({ input, want }) => {
    if (want === 'error') expect(() => parsePodCidr(input)).toThrow(/--pod-cidr/);
    else expect(parsePodCidr(input).prefix).toBe(want);
  });
});

describe('PodIpAllocator', () => {
  it('hands out .2 upwards, keeps an address per uid and reuses released ones', () => {
    const a = new PodIpAllocator('127.20.0.0/24');
    expect(a.allocate('a')).toBe('127.20.0.2');
    expect(a.allocate('b')).toBe('127.20.0.3');
    expect(a.allocate('a')).toBe('127.20.0.2');
    a.release('a');
    expect(a.size).toBe(1);
    expect(a.allocate('c', '127.20.0.9')).toBe('127.20.0.9');
    expect(a.allocate('d', '127.20.0.9')).toBe('127.20.0.4');
    expect(a.allocate('e', '10.0.0.1')).toBe('127.20.0.5');
  });

  it('fails clearly when the range is full', () => {
    const a = new PodIpAllocator('127.21.0.0/24');
    for (let i = 0; i < 253; i++) a.allocate(`p${i}`);
    expect(() => a.allocate('one-more')).toThrow(/no free address/);
    a.release('p7');
    expect(a.allocate('one-more')).toBe('127.21.0.9');
  });
});
