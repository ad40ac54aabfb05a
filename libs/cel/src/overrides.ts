// Language semantics this library implements in place of the engine's own built-ins, where the
// engine departs from the language definition in ways the SPEC relies on (found with the
// conformance suite): heterogeneous equality and membership (1 == 1.0 in lists and maps,
// order-insensitive equality of set and map lists), ordering across int/uint/double with the
// language's rounding, overflow of negation and of int/uint conversions, optional selection on
// empty optionals, RE2 `matches`, ASCII-only case mapping and White_Space trimming.
//
// The type checker is still the engine's: an override only replaces the evaluation of a node
// the checker accepted. program.ts installs them.

import { durationNanos, evalError, isDuration, isUint, makeDuration, Optional, UintClass, type EngineDuration } from './engine';
import { durationNanosOf } from './schema';
import { makeTimestamp, parseTimestamp, timestampInRange, timestampNanos } from './timestamps';
import { compareValues } from './library/lists';
import { matches } from './library/regex';
import { lowerAscii, trim, upperAscii } from './library/strings';
import { celEquals, celTypeName } from './values';

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);
const MAX_UINT64 = 2n ** 64n - 1n;
/** 2^63 and 2^64 as doubles: conversions of doubles at or beyond them overflow. */
const TWO_63 = 9223372036854775808;
const TWO_64 = 18446744073709551616;

/** A replaced operation: receives the operands' values (receiver first for methods). */
export type Override = (...operands: unknown[]) => unknown;

function noOverload(name: string, operands: unknown[]): Error {
  return evalError(`found no matching overload for '${name}' applied to '(${operands.map(celTypeName).join(', ')})'`);
}

/** The language's ordering: -1, 0, 1, or undefined when unordered (NaN). Ints and doubles compare as upstream. */
function order(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && Number.isNaN(a)) return undefined;
  if (typeof b === 'number' && Number.isNaN(b)) return undefined;
  const ai = typeof a === 'bigint' ? a : isUint(a) ? a.value : undefined;
  const bi = typeof b === 'bigint' ? b : isUint(b) ? b.value : undefined;
  // An int against a double compares as doubles unless the double is outside the int range.
  if (ai !== undefined && typeof b === 'number') return intDouble(ai, b);
  if (bi !== undefined && typeof a === 'number') {
    const c = intDouble(bi, a);
    return c === undefined ? undefined : -c;
  }
  return compareValues(a, b);
}

function intDouble(i: bigint, d: number): number {
  if (d >= TWO_64) return -1;
  if (d < -TWO_63) return 1;
  const x = Number(i);
  return x < d ? -1 : x > d ? 1 : 0;
}

function relational(op: (c: number) => boolean): Override {
  return (a, b) => {
    const c = order(a, b);
    return c === undefined ? false : op(c);
  };
}

function membership(v: unknown, coll: unknown): boolean {
  if (Array.isArray(coll) || coll instanceof Set) {
    if (coll instanceof Set && (typeof v !== 'object' || v === null) && coll.has(v)) return true;
    for (const x of coll) if (celEquals(v, x)) return true;
    return false;
  }
  if (coll instanceof Map) {
    if (coll.has(v)) return true;
    for (const k of coll.keys()) if (celEquals(k, v)) return true;
    return false;
  }
  if (coll !== null && typeof coll === 'object') {
    const key = typeof v === 'string' ? v : typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : isUint(v) ? String(v.value) : typeof v === 'number' && Number.isInteger(v) ? String(v) : undefined;
    return key !== undefined && Object.prototype.hasOwnProperty.call(coll, key) && (coll as Record<string, unknown>)[key] !== undefined;
  }
  throw noOverload('@in', [v, coll]);
}

function toInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (isUint(v)) {
    if (v.value > MAX_INT64) throw evalError('integer overflow');
    return v.value;
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v >= TWO_63 || v <= -TWO_63) throw evalError('double out of int range');
    return BigInt(Math.trunc(v));
  }
  if (typeof v === 'string') {
    if (!/^[+-]?[0-9]+$/.test(v)) throw evalError(`cannot convert '${v}' to int`);
    const n = BigInt(v);
    if (n > MAX_INT64 || n < MIN_INT64) throw evalError('integer overflow');
    return n;
  }
  if (v instanceof Date) return BigInt(Math.floor(v.getTime() / 1000));
  throw noOverload('int', [v]);
}

function toUint(v: unknown): unknown {
  if (isUint(v)) return v;
  if (typeof v === 'bigint') {
    if (v < 0n) throw evalError('unsigned integer overflow');
    return new UintClass(v);
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0 || v >= TWO_64) throw evalError('double out of uint range');
    return new UintClass(BigInt(Math.trunc(v)));
  }
  if (typeof v === 'string') {
    if (!/^\+?[0-9]+$/.test(v)) throw evalError(`cannot convert '${v}' to uint`);
    const n = BigInt(v);
    if (n > MAX_UINT64) throw evalError('unsigned integer overflow');
    return new UintClass(n);
  }
  throw noOverload('uint', [v]);
}

function optionalSelect(obj: unknown, key: unknown): unknown {
  if (obj instanceof Optional) {
    if (!obj.hasValue()) return Optional.none();
    obj = obj.value();
  }
  if (Array.isArray(obj) || obj instanceof Set) {
    const xs = [...obj];
    const i = typeof key === 'bigint' ? key : isUint(key) ? key.value : typeof key === 'number' && Number.isInteger(key) ? BigInt(key) : undefined;
    if (i === undefined) throw noOverload('_[?_]', [obj, key]);
    return i >= 0n && i < BigInt(xs.length) ? Optional.of(xs[Number(i)]) : Optional.none();
  }
  if (obj instanceof Map) {
    if (obj.has(key)) return Optional.of(obj.get(key));
    for (const [k, v] of obj) if (celEquals(k, key)) return Optional.of(v);
    return Optional.none();
  }
  if (obj !== null && typeof obj === 'object') {
    const name = typeof key === 'string' ? key : String(isUint(key) ? key.value : key);
    const value = Object.prototype.hasOwnProperty.call(obj, name) || !isRecord(obj) ? (obj as Record<string, unknown>)[name] : undefined;
    return value === undefined ? Optional.none() : Optional.of(value);
  }
  throw noOverload('_?._', [obj, key]);
}

function isRecord(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

function negate(v: unknown): unknown {
  if (typeof v === 'bigint') {
    if (v === MIN_INT64) throw evalError('integer overflow');
    return -v;
  }
  if (typeof v === 'number') return -v;
  throw noOverload('-_', [v]);
}

// --- arithmetic -------------------------------------------------------------------------------

/** Durations are 64-bit nanosecond counts (about ±292 years); timestamps span years 1 to 9999. */
const MAX_DURATION_NANOS = MAX_INT64;

function checkedInt(v: bigint): bigint {
  if (v > MAX_INT64 || v < MIN_INT64) throw evalError('integer overflow');
  return v;
}

function checkedUint(v: bigint): unknown {
  if (v < 0n || v > MAX_UINT64) throw evalError('unsigned integer overflow');
  return new UintClass(v);
}

function checkedDuration(nanos: bigint): EngineDuration {
  if (nanos > MAX_DURATION_NANOS || nanos < -MAX_DURATION_NANOS) throw evalError('duration out of range');
  return makeDuration(nanos);
}

function checkedTimestamp(nanos: bigint): Date {
  if (!timestampInRange(nanos)) throw evalError('timestamp out of range');
  return makeTimestamp(nanos);
}

function add(a: unknown, b: unknown): unknown {
  if (typeof a === 'bigint' && typeof b === 'bigint') return checkedInt(a + b);
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  if (typeof a === 'string' && typeof b === 'string') return a + b;
  if (isUint(a) && isUint(b)) return checkedUint(a.value + b.value);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return new Uint8Array([...a, ...b]);
  if ((Array.isArray(a) || a instanceof Set) && (Array.isArray(b) || b instanceof Set)) return [...a, ...b];
  if (isDuration(a) && isDuration(b)) return checkedDuration(durationNanos(a) + durationNanos(b));
  if (a instanceof Date && isDuration(b)) return checkedTimestamp(timestampNanos(a) + durationNanos(b));
  if (isDuration(a) && b instanceof Date) return checkedTimestamp(timestampNanos(b) + durationNanos(a));
  throw noOverload('_+_', [a, b]);
}

function subtract(a: unknown, b: unknown): unknown {
  if (typeof a === 'bigint' && typeof b === 'bigint') return checkedInt(a - b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (isUint(a) && isUint(b)) return checkedUint(a.value - b.value);
  if (isDuration(a) && isDuration(b)) return checkedDuration(durationNanos(a) - durationNanos(b));
  if (a instanceof Date && isDuration(b)) return checkedTimestamp(timestampNanos(a) - durationNanos(b));
  if (a instanceof Date && b instanceof Date) return checkedDuration(timestampNanos(a) - timestampNanos(b));
  throw noOverload('_-_', [a, b]);
}

function divide(a: unknown, b: unknown): unknown {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    if (b === 0n) throw evalError('division by zero');
    return checkedInt(a / b);
  }
  if (typeof a === 'number' && typeof b === 'number') return a / b;
  if (isUint(a) && isUint(b)) {
    if (b.value === 0n) throw evalError('division by zero');
    return new UintClass(a.value / b.value);
  }
  throw noOverload('_/_', [a, b]);
}

function timestamp(v: unknown): unknown {
  if (v instanceof Date) return v;
  if (typeof v === 'string') {
    const ts = parseTimestamp(v);
    if (!ts) throw evalError(`invalid timestamp '${v}'`);
    return ts;
  }
  if (typeof v === 'bigint') return checkedTimestamp(v * 1_000_000_000n);
  throw noOverload('timestamp', [v]);
}

function duration(v: unknown): unknown {
  if (isDuration(v)) return v;
  if (typeof v === 'string') {
    const nanos = durationNanosOf(v);
    if (nanos === undefined) throw evalError(`invalid duration '${v}'`);
    return checkedDuration(nanos);
  }
  throw noOverload('duration', [v]);
}

// --- timestamp accessors with a time zone ----------------------------------------------------

/** Calendar fields of a timestamp in a time zone: an IANA name, `UTC`, or a fixed offset `[+-]HH:MM`. */
function fieldsIn(ts: Date, zone: string | undefined): { year: number; month: number; day: number; weekday: number; hour: number; minute: number; second: number; ms: number; yearStart: number } {
  let shifted: Date;
  const offset = zone === undefined ? undefined : /^([+-])?(\d{2}):(\d{2})$/.exec(zone);
  if (zone === undefined || zone === 'UTC') shifted = ts;
  else if (offset) shifted = new Date(ts.getTime() + (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000);
  else {
    let parts: Intl.DateTimeFormatPart[];
    try {
      parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(ts);
    } catch {
      throw evalError(`invalid time zone '${zone}'`);
    }
    const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
    shifted = new Date(Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'), ts.getUTCMilliseconds()));
  }
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth(),
    day: shifted.getUTCDate(),
    weekday: shifted.getUTCDay(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
    second: shifted.getUTCSeconds(),
    ms: shifted.getUTCMilliseconds(),
    yearStart: Date.UTC(shifted.getUTCFullYear(), 0, 1),
  };
}

type Fields = ReturnType<typeof fieldsIn>;

/** Duration accessors: whole hours, minutes, seconds or milliseconds of the duration. */
const DURATION_ACCESSORS: Readonly<Record<string, bigint>> = {
  getHours: 3_600_000_000_000n,
  getMinutes: 60_000_000_000n,
  getSeconds: 1_000_000_000n,
  getMilliseconds: 1_000_000n,
};

function accessor(name: string, read: (f: Fields, ts: Date) => number): Override {
  return (ts, zone) => {
    if (isDuration(ts) && zone === undefined && DURATION_ACCESSORS[name]) return durationNanos(ts) / DURATION_ACCESSORS[name];
    if (!(ts instanceof Date) || (zone !== undefined && typeof zone !== 'string')) throw noOverload(name, zone === undefined ? [ts] : [ts, zone]);
    return BigInt(read(fieldsIn(ts, zone), ts));
  };
}

const TIMESTAMP_ACCESSORS: Readonly<Record<string, (f: Fields, ts: Date) => number>> = {
  getFullYear: (f) => f.year,
  getMonth: (f) => f.month,
  getDate: (f) => f.day,
  getDayOfMonth: (f) => f.day - 1,
  getDayOfWeek: (f) => f.weekday,
  getDayOfYear: (f) => Math.floor((Date.UTC(f.year, f.month, f.day) - f.yearStart) / 86_400_000),
  getHours: (f) => f.hour,
  getMinutes: (f) => f.minute,
  getSeconds: (f) => f.second,
  getMilliseconds: (f) => f.ms,
};

/** Replacements of operators, by the engine's operator name. */
export const OPERATOR_OVERRIDES: Readonly<Record<string, Override>> = {
  '==': (a, b) => celEquals(a, b),
  '!=': (a, b) => !celEquals(a, b),
  '<': relational((c) => c < 0),
  '<=': relational((c) => c <= 0),
  '>': relational((c) => c > 0),
  '>=': relational((c) => c >= 0),
  in: membership,
  '-_': negate,
  '+': add,
  '-': subtract,
  '/': divide,
  '.?': optionalSelect,
  '[?]': optionalSelect,
};

/** Replacements of functions, by name and number of operands (receiver included). */
export const FUNCTION_OVERRIDES: Readonly<Record<string, { arity: number; fn: Override; arity2?: true }>> = {
  ...Object.fromEntries(Object.entries(TIMESTAMP_ACCESSORS).map(([name, read]) => [name, { arity: 1, arity2: true as const, fn: accessor(name, read) }])),
  duration: { arity: 1, fn: duration },
  timestamp: { arity: 1, fn: timestamp },
  matches: { arity: 2, fn: (s, re) => (typeof s === 'string' && typeof re === 'string' ? matches(s, re) : fail('matches', [s, re])) },
  lowerAscii: { arity: 1, fn: (s) => (typeof s === 'string' ? lowerAscii(s) : fail('lowerAscii', [s])) },
  upperAscii: { arity: 1, fn: (s) => (typeof s === 'string' ? upperAscii(s) : fail('upperAscii', [s])) },
  trim: { arity: 1, fn: (s) => (typeof s === 'string' ? trim(s) : fail('trim', [s])) },
  int: { arity: 1, fn: toInt },
  uint: { arity: 1, fn: toUint },
};

function fail(name: string, operands: unknown[]): never {
  throw noOverload(name, operands);
}
