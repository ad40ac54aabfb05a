// Timestamps with nanosecond precision. The engine keeps a timestamp as a JavaScript Date
// (milliseconds); the nanoseconds below the millisecond ride on the Date under a symbol, so the
// engine's own accessors keep working while parsing, printing, arithmetic, equality and
// ordering (this library's) see every digit upstream keeps.

/** Nanoseconds below the Date's millisecond (0..999,999). */
const SUB_MILLI = Symbol('cel.timestamp.subMilliNanos');

type Timestamp = Date & { [SUB_MILLI]?: number };

const NANOS_PER_MILLI = 1_000_000n;

/** Timestamps span the years 1 to 9999 (upstream's range). */
const MIN_NANOS = -62_135_596_800_000n * NANOS_PER_MILLI;
const MAX_NANOS = 253_402_300_799_999_999_999n;

/** Nanoseconds since the Unix epoch. */
export function timestampNanos(d: Date): bigint {
  return BigInt(d.getTime()) * NANOS_PER_MILLI + BigInt((d as Timestamp)[SUB_MILLI] ?? 0);
}

/** Whether `nanos` since the epoch is within the years 1 to 9999. */
export function timestampInRange(nanos: bigint): boolean {
  return nanos >= MIN_NANOS && nanos <= MAX_NANOS;
}

/** The timestamp `nanos` nanoseconds after the Unix epoch (floor to the millisecond for the Date). */
export function makeTimestamp(nanos: bigint): Date {
  let ms = nanos / NANOS_PER_MILLI;
  let sub = nanos - ms * NANOS_PER_MILLI;
  if (sub < 0n) {
    ms -= 1n;
    sub += NANOS_PER_MILLI;
  }
  const d = new Date(Number(ms)) as Timestamp;
  if (sub !== 0n) d[SUB_MILLI] = Number(sub);
  return d;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses RFC 3339 text (`2006-01-02T15:04:05.999999999Z07:00`, as Go's time.RFC3339Nano) into a
 * timestamp; undefined when it is not RFC 3339 or out of the years 1 to 9999.
 */
export function parseTimestamp(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  let nanos = BigInt(d.getTime()) * NANOS_PER_MILLI + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  if (!m[8]) {
    const offsetMinutes = Number(m[10]) * 60 + Number(m[11]);
    if (Number(m[10]) > 23 || Number(m[11]) > 59) return undefined;
    nanos -= BigInt((m[9] === '-' ? -1 : 1) * offsetMinutes) * 60_000_000_000n;
  }
  return timestampInRange(nanos) ? makeTimestamp(nanos) : undefined;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** RFC 3339 text in UTC with only the fractional digits needed (as upstream prints timestamps). */
export function timestampText(d: Date): string {
  const nanos = timestampNanos(d);
  const fraction = ((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const whole = d.toISOString().slice(0, 19);
  return fraction === 0n ? `${whole}Z` : `${whole}.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}

/** -1, 0 or 1 as `a` is before, at or after `b`. */
export function compareTimestamps(a: Date, b: Date): number {
  const [x, y] = [timestampNanos(a), timestampNanos(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
