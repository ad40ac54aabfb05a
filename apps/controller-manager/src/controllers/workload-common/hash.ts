/** Characters of upstream rand.SafeEncodeString (no vowels, no confusable digits). */
const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** 32-bit FNV-1a of `bytes`, as an unsigned integer. */
export function fnv32a(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const b of bytes) {
    hash ^= b;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** upstream rand.SafeEncodeString: maps each character to a safe alphanumeric. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHANUMS[s.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

/** JSON with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/**
 * upstream controller.ComputeHash: FNV-32a of the object (here its canonical JSON), then
 * the collision count as 4 little-endian bytes when set, rendered as the safe encoding of
 * the decimal hash. Stable across processes; a new collisionCount gives a new hash.
 */
export function computeHash(value: unknown, collisionCount?: number): string {
  const json = Buffer.from(canonicalJson(value), 'utf8');
  let bytes: Uint8Array = json;
  if (collisionCount !== undefined && collisionCount !== null) {
    const extra = Buffer.alloc(4);
    extra.writeUInt32LE(collisionCount >>> 0);
    bytes = Buffer.concat([json, extra]);
  }
  return safeEncodeString(String(fnv32a(bytes)));
}
