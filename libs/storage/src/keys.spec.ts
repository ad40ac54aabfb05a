import { prefixEnd, prefixEndBytes } from './keys';

describe('prefixEnd', () => {
  it.each([
    { name: 'ascii', input: '/a/b/', want: '/a/b0' },
    { name: 'last char bumped', input: 'ab', want: 'ac' },
    { name: 'empty prefix is unbounded', input: '', want: undefined },
    { name: 'multi-byte char', input: 'aé', want: 'aê' },
    { name: 'skips the surrogate range', input: 'a\ud7ff', want: 'a\ue000' },
    { name: 'max code point is dropped', input: 'a\u{10ffff}', want: 'b' },
    { name: 'only max code points', input: '\u{10ffff}', want: undefined },
  ])('$name', ({ input, want }) => {
    expect(prefixEnd(input)).toBe(want);
  });

  it('bounds exactly the keys with the prefix, in UTF-8 byte order', () => {
    const prefix = 'k\u00ff';
    const end = Buffer.from(prefixEnd(prefix)!);
    const keys = ['k\u00ff', 'k\u00ffz', 'k\u00ff\u{1f600}', 'k\u0100', 'k\u00fe\u{10ffff}', 'l', 'k'];
    const inRange = keys.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from(prefix)) >= 0 && Buffer.compare(Buffer.from(k), end) < 0);
    expect(inRange).toEqual(keys.filter((k) => k.startsWith(prefix)));
  });
});

describe('prefixEndBytes', () => {
  it.each([
    { name: 'ascii', input: [0x61, 0x62], want: [0x61, 0x63] },
    { name: 'trailing 0xff dropped', input: [0x61, 0xff], want: [0x62] },
    { name: 'all 0xff means to the end', input: [0xff, 0xff], want: [0] },
    { name: 'empty means to the end', input: [], want: [0] },
  ])('$name', ({ input, want }) => {
    expect([...prefixEndBytes(Buffer.from(input))]).toEqual(want);
  });
});
