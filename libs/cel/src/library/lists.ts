// List library (SPEC "Validation expressions": indexOf, lastIndexOf, min, max, sum, isSorted;
// upstream apiserver/pkg/cel/library/lists.go). Elements are compared with the language's
// ordering (ints, uints, doubles across types; strings; bools; bytes; durations; timestamps).

import { DurationClass, durationNanos, evalError, isDuration, isUint, makeDuration, UintClass, type Environment } from '../engine';
import { celEquals } from '../values';
import { compareTimestamps } from '../timestamps';

const sync = { async: false };

function items(list: readonly unknown[] | Set<unknown>): unknown[] {
  return Array.isArray(list) ? (list as unknown[]) : [...list];
}

function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (isUint(v)) return v.value;
  return undefined;
}

/** -1, 0 or 1: the language's ordering of two comparable values; throws for values without one. */
export function compareValues(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) {
    // Mixed int/double: compare exactly (bigint vs number compare by value in JS).
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    // Code point order, as upstream compares UTF-8 bytes.
    return a === b ? 0 : Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
  if (isDuration(a) && isDuration(b)) {
    const [x, y] = [durationNanos(a), durationNanos(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a instanceof Date && b instanceof Date) return compareTimestamps(a, b);
  throw evalError('no such overload: list elements are not comparable');
}

export function isSorted(list: readonly unknown[] | Set<unknown>): boolean {
  const xs = items(list);
  for (let i = 1; i < xs.length; i++) if (compareValues(xs[i - 1], xs[i]) > 0) return false;
  return true;
}

export function listMin(list: readonly unknown[] | Set<unknown>): unknown {
  const xs = items(list);
  if (xs.length === 0) throw evalError('min called on empty list');
  let best = xs[0];
  for (const x of xs.slice(1)) if (compareValues(x, best) < 0) best = x;
  return best;
}

export function listMax(list: readonly unknown[] | Set<unknown>): unknown {
  const xs = items(list);
  if (xs.length === 0) throw evalError('max called on empty list');
  let best = xs[0];
  for (const x of xs.slice(1)) if (compareValues(x, best) > 0) best = x;
  return best;
}

export function listSum(list: readonly unknown[] | Set<unknown>): unknown {
  const xs = items(list);
  if (xs.length === 0) return 0n;
  const first = xs[0];
  if (typeof first === 'bigint') {
    let s = 0n;
    for (const x of xs) {
      if (typeof x !== 'bigint') throw evalError('sum: list elements must all be int');
      s += x;
    }
    if (s > 2n ** 63n - 1n || s < -(2n ** 63n)) throw evalError('integer overflow');
    return s;
  }
  if (typeof first === 'number') {
    let s = 0;
    for (const x of xs) {
      if (typeof x !== 'number') throw evalError('sum: list elements must all be double');
      s += x;
    }
    return s;
  }
  if (isUint(first)) {
    let s = 0n;
    for (const x of xs) {
      if (!isUint(x)) throw evalError('sum: list elements must all be uint');
      s += x.value;
    }
    return new UintClass(s);
  }
  if (first instanceof DurationClass) {
    let s = 0n;
    for (const x of xs) {
      if (!isDuration(x)) throw evalError('sum: list elements must all be durations');
      s += durationNanos(x);
    }
    return makeDuration(s);
  }
  throw evalError('no such overload: sum() needs a list of int, uint, double or duration');
}

export function indexOf(list: readonly unknown[] | Set<unknown>, v: unknown): bigint {
  const xs = items(list);
  for (let i = 0; i < xs.length; i++) if (celEquals(xs[i], v)) return BigInt(i);
  return -1n;
}

export function lastIndexOf(list: readonly unknown[] | Set<unknown>, v: unknown): bigint {
  const xs = items(list);
  for (let i = xs.length - 1; i >= 0; i--) if (celEquals(xs[i], v)) return BigInt(i);
  return -1n;
}

export function registerLists(env: Environment): void {
  env.registerFunction('list<A>.isSorted(): bool', isSorted, sync);
  env.registerFunction('list<A>.min(): A', listMin, sync);
  env.registerFunction('list<A>.max(): A', listMax, sync);
  env.registerFunction('list<A>.sum(): A', listSum, sync);
  env.registerFunction('list<A>.indexOf(A): int', indexOf, sync);
  env.registerFunction('list<A>.lastIndexOf(A): int', lastIndexOf, sync);
}
