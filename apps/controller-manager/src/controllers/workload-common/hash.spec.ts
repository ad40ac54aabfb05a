import { canonicalJson, computeHash, fnv32a, safeEncodeString } from './hash';

describe('fnv32a', () => {
  it.each([
    { input: '', want: 0x811c9dc5 },
    { input: 'a', want: 0xe40c292c },
    { input: 'foobar', want: 0xbf9cf968 },
  ])('$input → $want', ({ input, want }) => {
    expect(fnv32a(Buffer.from(input))).toBe(want);
  });
});

describe('safeEncodeString', () => {
  it.each([
    // upstream: alphanums[byte % 27]; pod-template-hash values look like this.
    { input: '0', want: '4' },
    { input: '123', want: '567' },
    { input: '3735928559', want: '7c79f6d99f' },
  ])('$input → $want', ({ input, want }) => {
    expect(safeEncodeString(input)).toBe(want);
  });
});

describe('computeHash', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:v1' }] } };
  it.each([
    { name: 'key order does not matter', a: template, b: { spec: template.spec, metadata: template.metadata }, same: true },
    { name: 'a different image changes it', a: template, b: { ...template, spec: { containers: [{ name: 'main', image: 'web:v2' }] } }, same: false },
  ])('$name', ({ a, b, same }) => {
    expect(computeHash(a) === computeHash(b)).toBe(same);
  });

  it.each([
    { name: 'no collision count', count: undefined },
    { name: 'collision count 0', count: 0 },
    { name: 'collision count 1', count: 1 },
  ])('is safe-encoded and stable: $name', ({ count }) => {
    const h = computeHash(template, count);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(computeHash(structuredClone(template), count)).toBe(h);
  });

  it('a collision count gives a new hash', () => {
    expect(new Set([computeHash(template), computeHash(template, 0), computeHash(template, 1)]).size).toBe(3);
  });

  it('canonicalJson sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  });
});
