/**
 * The end of the key range of `prefix`: the strings s with prefix <= s < end (compared as
 * UTF-8 bytes, as SQLite's BINARY collation and etcd do) are exactly those starting with
 * prefix. Undefined when the range is unbounded (empty prefix).
 */
export function prefixEnd(prefix: string): string | undefined {
  const chars = Array.from(prefix);
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) return chars.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return undefined;
}

/** prefixEnd on bytes, in etcd's convention: "\0" means "to the end of the key space". */
export function prefixEndBytes(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i]++;
      return end;
    }
  }
  return Buffer.from([0]);
}
