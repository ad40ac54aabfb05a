import { StatusError } from '@orch/apimachinery';
import { parseGoBool, queryBool } from './query';

describe('boolean query parameters (one parser, Go strconv.ParseBool)', () => {
  it.each([
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((v) => ({ v, want: true })),
    ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map((v) => ({ v, want: false })),
    ...['yes', 'tRuE', 'on', '2', ' true'].map((v) => ({ v, want: undefined })),
  ])('parseGoBool($v) = $want', ({ v, want }) => {
    expect(parseGoBool(v)).toBe(want);
  });

  it.each([
    { query: '', want: undefined },
    { query: 'pretty', want: true },
    { query: 'pretty=', want: true },
    { query: 'pretty=True', want: true },
    { query: 'pretty=0', want: false },
  ])('queryBool(?$query)', ({ query, want }) => {
    expect(queryBool(new URLSearchParams(query), 'pretty')).toBe(want);
  });

  it('a value Go does not accept is a 400 naming the parameter', () => {
    let err: unknown;
    try {
      queryBool(new URLSearchParams('allowWatchBookmarks=yes'), 'allowWatchBookmarks');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(400);
    expect((err as StatusError).message).toContain('allowWatchBookmarks: "yes"');
  });
});
