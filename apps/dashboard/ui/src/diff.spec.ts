import { diffLines } from './diff';

describe('diffLines', () => {
  it.each([
    ['no change', 'a\nb', 'a\nb', [' a', ' b']],
    ['a changed line', 'a\nb\nc', 'a\nB\nc', [' a', '-b', '+B', ' c']],
    ['an added line', 'a\nc', 'a\nb\nc', [' a', '+b', ' c']],
    ['a removed line at the end', 'a\nb', 'a', [' a', '-b']],
    ['everything new', '', 'x', ['-', '+x']],
  ])('%s', (_what, before, after, want) => {
    expect(diffLines(before, after).map((l) => `${l.op}${l.text}`)).toEqual(want);
  });
});
