// Expression values at the library's boundary: equality as the language defines it (for the
// list library and tests) and the conversion of results back to JSON (message expressions,
// audit annotations, variables shown to users).

import { durationNanos, isDuration, isUint, Optional, TypeClass } from './engine';
import { compareTimestamps, timestampText } from './timestamps';

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (isUint(v)) return v.value;
  return undefined;
}

/** Value equality of the expression language (numbers compare across int, uint and double). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na == nb;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (a instanceof Date && b instanceof Date) return compareTimestamps(a, b) === 0;
  if (isDuration(a) && isDuration(b)) return durationNanos(a) === durationNanos(b);
  if (a instanceof TypeClass && b instanceof TypeClass) return a.name === b.name;
  if (a instanceof Optional && b instanceof Optional) {
    return a.hasValue() === b.hasValue() && (!a.hasValue() || celEquals(a.value(), b.value()));
  }
  if (a instanceof Set && b instanceof Set) {
    if (a.size !== b.size) return false;
    for (const x of a) if (![...b].some((y) => celEquals(x, y))) return false;
    return true;
  }
  if ((Array.isArray(a) || a instanceof Set) && (Array.isArray(b) || b instanceof Set)) {
    const xs = [...a];
    const ys = [...b];
    if (xs.length !== ys.length) return false;
    if (a instanceof Set || b instanceof Set) return xs.every((x) => ys.some((y) => celEquals(x, y)));
    return xs.every((x, i) => celEquals(x, ys[i]));
  }
  const ea = entries(a);
  const eb = entries(b);
  if (ea && eb) {
    if (ea.size !== eb.size) return false;
    for (const [k, v] of ea) {
      if (eb.has(k)) {
        if (!celEquals(v, eb.get(k))) return false;
        continue;
      }
      // Keys are equal across numeric types too (1 and 1u are one key).
      const other = [...eb.keys()].find((x) => celEquals(x, k));
      if (other === undefined || !celEquals(v, eb.get(other))) return false;
    }
    return true;
  }
  const eq = (a as { equals?: (o: unknown) => boolean }).equals;
  if (typeof eq === 'function' && a.constructor === b.constructor) return eq.call(a, b);
  return false;
}

function entries(v: object): Map<unknown, unknown> | undefined {
  if (v instanceof Map) return v;
  if (isRecord(v)) return new Map(Object.entries(v));
  return undefined;
}

/**
 * An expression value as JSON: ints as numbers (strings beyond 2^53), bytes as base64,
 * timestamps as RFC 3339, durations as Go duration text of seconds (`1.5s`), optionals as
 * their value or null, library objects (quantity, URL) as their text.
 */
export function celToJson(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'string':
    case 'boolean':
      return v;
  }
  if (isUint(v)) return celToJson(v.value);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return timestampText(v);
  if (isDuration(v)) return `${Number(durationNanos(v)) / 1e9}s`;
  if (v instanceof Optional) return v.hasValue() ? celToJson(v.value()) : null;
  if (v instanceof TypeClass) return v.name;
  if (Array.isArray(v) || v instanceof Set) return [...v].map(celToJson);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), celToJson(x)]));
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, celToJson(x)]));
  return String(v);
}

/** The type name of a value as the language prints it (for error messages). */
export function celTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null_type';
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (isUint(v)) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (isDuration(v)) return 'google.protobuf.Duration';
  if (v instanceof Optional) return 'optional_type';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Map || isRecord(v)) return 'map';
  return (v as object).constructor?.name ?? 'object';
}
