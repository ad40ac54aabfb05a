import { StatusError } from './errors';
import { ageSince, formatMicroTime, formatTime, humanDuration, parseMicroTime, parseTime } from './time';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5); // 2024-01-02T03:04:05Z
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('formatTime / formatMicroTime', () => {
  it.each([
    { name: 'date', input: new Date(T0), want: '2024-01-02T03:04:05Z' },
    { name: 'fraction dropped', input: T0 + 999, want: '2024-01-02T03:04:05Z' },
    { name: 'before the epoch', input: -500, want: '1969-12-31T23:59:59Z' },
  ])('formatTime $name', ({ input, want }) => {
    expect(formatTime(input)).toBe(want);
  });

  it.each([
    { name: 'micros', input: T0 * 1000 + 123456, want: '2024-01-02T03:04:05.123456Z' },
    { name: 'padded', input: T0 * 1000 + 42, want: '2024-01-02T03:04:05.000042Z' },
    { name: 'whole second', input: T0 * 1000, want: '2024-01-02T03:04:05.000000Z' },
  ])('formatMicroTime $name', ({ input, want }) => {
    expect(formatMicroTime(input)).toBe(want);
  });
});

describe('parseTime / parseMicroTime', () => {
  it.each([
    { name: 'utc', input: '2024-01-02T03:04:05Z', want: T0 },
    { name: 'offset', input: '2024-01-02T04:04:05+01:00', want: T0 },
    { name: 'negative offset', input: '2024-01-01T22:34:05-04:30', want: T0 },
    { name: 'fraction', input: '2024-01-02T03:04:05.5Z', want: T0 + 500 },
    { name: 'nanoseconds truncated', input: '2024-01-02T03:04:05.123456789Z', want: T0 + 123 },
    { name: 'leap day', input: '2024-02-29T00:00:00Z', want: Date.UTC(2024, 1, 29) },
  ])('parseTime $name', ({ input, want }) => {
    expect(parseTime(input)).toBe(want);
  });

  it.each([
    { name: 'not a time', input: 'yesterday', why: 'expected YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)' },
    { name: 'lower-case t', input: '2024-01-02t03:04:05Z', why: 'expected YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)' },
    { name: 'no zone', input: '2024-01-02T03:04:05', why: 'expected YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)' },
    { name: 'month', input: '2024-13-01T00:00:00Z', why: 'month out of range' },
    { name: 'day', input: '2023-02-29T00:00:00Z', why: 'day out of range' },
    { name: 'hour', input: '2024-01-01T24:00:00Z', why: 'time out of range' },
  ])('parseTime rejects $name', ({ input, why }) => {
    const err = statusOf(() => parseTime(input));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: `parsing time ${JSON.stringify(input)} as RFC 3339: ${why}` });
  });

  it.each([
    { name: 'micro time', input: '2024-01-02T03:04:05.123456Z', want: T0 * 1000 + 123456 },
    { name: 'round trip', input: formatMicroTime(T0 * 1000 + 7), want: T0 * 1000 + 7 },
  ])('parseMicroTime $name', ({ input, want }) => {
    expect(parseMicroTime(input)).toBe(want);
  });

  it.each([
    { name: 'three digits', input: '2024-01-02T03:04:05.123Z' },
    { name: 'no fraction', input: '2024-01-02T03:04:05Z' },
  ])('parseMicroTime rejects $name', ({ input }) => {
    expect(statusOf(() => parseMicroTime(input)).code).toBe(400);
  });
});

describe('humanDuration', () => {
  it.each([
    // upstream duration_test.go
    { d: SECOND, want: '1s' },
    { d: 70 * SECOND, want: '70s' },
    { d: 190 * SECOND, want: '3m10s' },
    { d: 70 * MINUTE, want: '70m' },
    { d: 47 * HOUR, want: '47h' },
    { d: 49 * HOUR, want: '2d1h' },
    { d: (8 * 24 + 2) * HOUR, want: '8d' },
    { d: 367 * DAY, want: '367d' },
    { d: (365 * 2 * 24 + 25) * HOUR, want: '2y1d' },
    { d: (365 * 8 * 24 + 2) * HOUR, want: '8y' },
    // boundaries
    { d: 0, want: '0s' },
    { d: -1500, want: '0s' },
    { d: -2 * SECOND, want: '<invalid>' },
    { d: 119 * SECOND + 999, want: '119s' },
    { d: 2 * MINUTE, want: '2m' },
    { d: 9 * MINUTE + 59 * SECOND, want: '9m59s' },
    { d: 10 * MINUTE + 30 * SECOND, want: '10m' },
    { d: 179 * MINUTE, want: '179m' },
    { d: 3 * HOUR, want: '3h' },
    { d: 3 * HOUR + 5 * MINUTE, want: '3h5m' },
    { d: 8 * HOUR + 5 * MINUTE, want: '8h' },
    { d: 48 * HOUR, want: '2d' },
    { d: 7 * DAY + 23 * HOUR, want: '7d23h' },
    { d: 2 * 365 * DAY, want: '2y' },
    { d: 20 * 365 * DAY, want: '20y' },
  ])('$d ms → $want', ({ d, want }) => {
    expect(humanDuration(d)).toBe(want);
  });

  it.each([
    { name: 'no timestamp', ts: undefined, want: '<unknown>' },
    { name: 'an hour ago', ts: '2024-01-02T03:04:05Z', want: '60m' },
  ])('ageSince: $name', ({ ts, want }) => {
    expect(ageSince(ts, T0 + HOUR)).toBe(want);
  });
});
