import { nowTime } from './object-meta';

describe('nowTime', () => {
  afterEach(() => jest.useRealTimers());

  it.each([
    { name: 'a time', at: '2026-11-28T21:03:14.250Z', want: '2026-11-28T21:03:14Z' },
    { name: 'the start of a second', at: '2026-11-28T21:03:15.000Z', want: '2026-11-28T21:03:15Z' },
    { name: 'the end of a second', at: '2026-11-28T21:03:15.999Z', want: '2026-11-28T21:03:15Z' },
    { name: 'the next second (the cached text is replaced)', at: '2026-11-28T21:03:16.001Z', want: '2026-11-28T21:03:16Z' },
    { name: 'an earlier second (clock set back)', at: '2026-11-28T20:00:00.500Z', want: '2026-11-28T20:00:00Z' },
  ])('now, at $name: RFC 3339 in seconds', ({ at, want }) => {
    jest.useFakeTimers({ now: new Date(at) });
    expect(nowTime()).toBe(want);
    expect(nowTime(new Date(at))).toBe(want);
  });

  it('follows the clock from one call to the next', () => {
    jest.useFakeTimers({ now: new Date('2026-11-28T21:03:14.900Z') });
    expect(nowTime()).toBe('2026-11-28T21:03:14Z');
    jest.advanceTimersByTime(200);
    expect(nowTime()).toBe('2026-11-28T21:03:15Z');
  });
});
