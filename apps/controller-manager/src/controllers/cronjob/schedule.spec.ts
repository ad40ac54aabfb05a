import { parseGoDuration, parseSchedule } from './schedule';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z'));

describe('parseSchedule errors (robfig ParseStandard messages)', () => {
  it.each([
    { spec: '', want: 'empty spec string' },
    { spec: '* * * *', want: 'expected exactly 5 fields, found 4' },
    { spec: '60 * * * *', want: 'end of range (60) above maximum (59)' },
    { spec: '* * * * 7', want: 'end of range (7) above maximum (6)' },
    { spec: '* * 0 * *', want: 'beginning of range (0) below minimum (1)' },
    { spec: '5-1 * * * *', want: 'beginning of range (5) beyond end of range (1)' },
    { spec: '*/0 * * * *', want: 'step of range should be a positive number' },
    { spec: '1-2-3 * * * *', want: 'too many hyphens' },
    { spec: '*/2/3 * * * *', want: 'too many slashes' },
    { spec: 'a * * * *', want: 'failed to parse int from a' },
    { spec: '@fortnightly', want: 'unrecognized descriptor' },
    { spec: 'TZ=Nowhere/City * * * * *', want: 'provided bad location Nowhere/City' },
  ])('$spec → $want', ({ spec, want }) => {
    expect(() => parseSchedule(spec, 'UTC')).toThrow(want);
  });
});

describe('Schedule.next', () => {
  it.each([
    { name: 'every minute', spec: '* * * * *', after: '2024-01-01T00:00:30Z', want: '2024-01-01T00:01:00Z' },
    { name: 'strictly after', spec: '0 0 * * *', after: '2024-01-01T00:00:00Z', want: '2024-01-02T00:00:00Z' },
    { name: 'steps', spec: '*/15 * * * *', after: '2024-01-01T00:16:00Z', want: '2024-01-01T00:30:00Z' },
    { name: 'lists and ranges', spec: '5,10-12 3 * * *', after: '2024-01-01T03:10:00Z', want: '2024-01-01T03:11:00Z' },
    { name: 'weekday names', spec: '0 9 * * MON-FRI', after: '2024-01-05T10:00:00Z', want: '2024-01-08T09:00:00Z' },
    { name: 'month names', spec: '0 0 1 jan *', after: '2024-06-01T00:00:00Z', want: '2025-01-01T00:00:00Z' },
    { name: 'day of month OR day of week when both are restricted', spec: '0 0 13 * 5', after: '2024-01-01T00:00:00Z', want: '2024-01-05T00:00:00Z' },
    { name: 'a stepped day of month is restricted too', spec: '0 0 */2 * 1', after: '2024-01-01T00:00:00Z', want: '2024-01-03T00:00:00Z' },
    { name: 'day of month * ANDs with day of week', spec: '0 0 * * 1', after: '2024-01-01T00:00:00Z', want: '2024-01-08T00:00:00Z' },
    { name: '@monthly', spec: '@monthly', after: '2024-01-15T00:00:00Z', want: '2024-02-01T00:00:00Z' },
    { name: '@hourly', spec: '@hourly', after: '2024-01-15T10:00:00Z', want: '2024-01-15T11:00:00Z' },
    { name: 'leap day', spec: '0 0 29 2 *', after: '2024-03-01T00:00:00Z', want: '2028-02-29T00:00:00Z' },
    { name: 'never (30 February)', spec: '0 0 30 2 *', after: '2024-03-01T00:00:00Z', want: undefined },
    { name: '@every from the second', spec: '@every 90s', after: '2024-01-01T00:00:10.500Z', want: '2024-01-01T00:01:40Z' },
    { name: 'time zone (winter)', spec: 'TZ=America/New_York 0 9 * * *', after: '2024-01-01T00:00:00Z', want: '2024-01-01T14:00:00Z' },
    { name: 'time zone (summer)', spec: 'CRON_TZ=America/New_York 0 9 * * *', after: '2024-07-01T00:00:00Z', want: '2024-07-01T13:00:00Z' },
    { name: 'a time in the DST gap is skipped that day', spec: 'TZ=America/New_York 30 2 * * *', after: '2024-03-10T00:00:00Z', want: '2024-03-11T06:30:00Z' },
    { name: 'a time in the DST overlap: first occurrence', spec: 'TZ=America/New_York 30 1 * * *', after: '2024-11-03T04:00:00Z', want: '2024-11-03T05:30:00Z' },
    { name: 'a time in the DST overlap: second occurrence', spec: 'TZ=America/New_York 30 1 * * *', after: '2024-11-03T05:30:00Z', want: '2024-11-03T06:30:00Z' },
    { name: 'midnight across a DST change', spec: 'TZ=Europe/Berlin 0 0 * * *', after: '2024-03-30T23:00:00Z', want: '2024-03-31T22:00:00Z' },
  ])('$name: $spec after $after → $want', ({ spec, after, want }) => {
    expect(iso(parseSchedule(spec, 'UTC').next(Date.parse(after)))).toBe(want);
  });

  it('uses the default zone without a TZ prefix', () => {
    expect(iso(parseSchedule('0 0 * * *', 'Asia/Kolkata').next(Date.parse('2024-01-01T00:00:00Z')))).toBe('2024-01-01T18:30:00Z');
  });
});

describe('parseGoDuration', () => {
  it.each([
    { text: '90s', want: 90_000 },
    { text: '1h30m', want: 5_400_000 },
    { text: '1.5h', want: 5_400_000 },
    { text: '250ms', want: 250 },
    { text: '0', want: 0 },
  ])('$text → $want ms', ({ text, want }) => {
    expect(parseGoDuration(text)).toBe(want);
  });

  it.each(['', '5', '1d', 'h'])('rejects %p', (text) => {
    expect(() => parseGoDuration(text)).toThrow(/invalid duration/);
  });
});
