// Standard-library overloads the engine lacks (found by the conformance suite): ordering of
// bytes, conversions between int, uint, timestamps and durations, and string forms of
// timestamps (timestamps.ts) and durations.

import { durationNanos, evalError, UintClass, type EngineDuration, type EngineUint, type Environment } from '../engine';
import { timestampText } from '../timestamps';

const sync = { async: false };
const MAX_INT64 = 2n ** 63n - 1n;

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Duration text as upstream prints it: seconds with a fraction only when needed (`1.5s`). */
export function durationText(d: EngineDuration): string {
  const nanos = durationNanos(d);
  const neg = nanos < 0n;
  const abs = neg ? -nanos : nanos;
  const secs = abs / 1_000_000_000n;
  const frac = abs % 1_000_000_000n;
  return `${neg ? '-' : ''}${secs}${frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '')}s`;
}

export function registerCompat(env: Environment): void {
  env.registerOperator('bytes < bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) < 0);
  env.registerOperator('bytes <= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) <= 0);
  env.registerOperator('bytes > bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) > 0);
  env.registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) >= 0);
  env.registerFunction(
    'int(uint): int',
    (u: EngineUint) => {
      if (u.value > MAX_INT64) throw evalError('integer overflow');
      return u.value;
    },
    sync,
  );
  env.registerFunction('int(google.protobuf.Timestamp): int', (d: Date) => BigInt(Math.floor(d.getTime() / 1000)), sync);
  env.registerFunction('string(google.protobuf.Timestamp): string', timestampText, sync);
  env.registerFunction('string(google.protobuf.Duration): string', durationText, sync);
  env.registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: EngineDuration) => d, sync);
  env.registerFunction('timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (d: Date) => d, sync);
  // Declared for the checker; evaluated with RE2 by the override (overrides.ts).
  env.registerFunction('matches(string, string): bool', () => false, sync);
  // Declared for the checker; evaluated by the equality override (overrides.ts).
  env.registerOperator('optional<dyn> == optional<dyn>', () => false);
  void UintClass;
}
