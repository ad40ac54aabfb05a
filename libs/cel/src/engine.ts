// The one place that imports the expression engine (@marcbachmann/cel-js): its environment
// class, error classes and runtime value classes. Everything else in this library goes through
// these names, so a change of engine touches this file and the instrumentation in program.ts.

import { Environment, EvaluationError, Optional, ParseError, TypeError as CelTypeError } from '@marcbachmann/cel-js';

export { Environment, EvaluationError, Optional, ParseError, CelTypeError };

/** The engine's duration value: whole seconds and nanoseconds. */
export interface EngineDuration {
  readonly seconds: bigint;
  readonly nanos: number;
  toString(): string;
}

/** The engine's unsigned integer value. */
export interface EngineUint {
  readonly value: bigint;
  valueOf(): bigint;
}

/** The engine's type value (`type(x)`). */
export interface EngineType {
  readonly name: string;
}

// The engine does not export its Duration, UnsignedInt and Type classes from the package root
// (only from a subpath our module resolution cannot name): take them from values it builds.
const probe = new Environment();

// The engine runs with the fixes in patches/@marcbachmann+cel-js+8.0.0.patch (literals, has(),
// optional entries, map literal keys...), applied by npm's postinstall (patch-package). Refuse
// to run without them rather than evaluate expressions with other semantics.
try {
  probe.evaluate("br'x' == b'x' && .5 == 0.5");
} catch {
  throw new Error('the CEL engine @marcbachmann/cel-js is not patched: run `npm ci` (its postinstall applies patches/@marcbachmann+cel-js+8.0.0.patch)');
}
type Ctor<T> = new (...args: any[]) => T;
export const DurationClass = (probe.evaluate('duration("1s")') as object).constructor as Ctor<EngineDuration> & {
  fromMilliseconds(ms: number): EngineDuration;
};
export const UintClass = (probe.evaluate('1u') as object).constructor as Ctor<EngineUint>;
export const TypeClass = (probe.evaluate('type(1)') as object).constructor as Ctor<EngineType>;

/** A duration of `nanos` nanoseconds in the engine's representation. */
export function makeDuration(nanos: bigint): EngineDuration {
  const seconds = nanos / 1_000_000_000n;
  return new DurationClass(seconds, Number(nanos - seconds * 1_000_000_000n));
}

/** Nanoseconds of an engine duration. */
export function durationNanos(d: EngineDuration): bigint {
  return d.seconds * 1_000_000_000n + BigInt(d.nanos);
}

export function isDuration(v: unknown): v is EngineDuration {
  return v instanceof DurationClass;
}

export function isUint(v: unknown): v is EngineUint {
  return v instanceof UintClass;
}

/** An error raised by a library function while evaluating (reported like the engine's own). */
export function evalError(message: string): Error {
  return new EvaluationError(message);
}
