import { escapePropertyName, unescapePropertyName } from './escaping';

// SPEC "Validation expressions", escaping of property names (upstream escaping_test.go).
describe('property-name escaping', () => {
  it.each([
    ['metadata', 'metadata'],
    ['x-y', 'x__dash__y'],
    ['a.b', 'a__dot__b'],
    ['a/b', 'a__slash__b'],
    ['__', '__underscores__'],
    ['a__b', 'a__underscores__b'],
    ['___', '__underscores___'],
    ['____', '__underscores____underscores__'],
    ['_a', '_a'],
    ['a.__', 'a__dot____underscores__'],
    ['-start', '__dash__start'],
    ['/', '__slash__'],
    ['true', '__true__'],
    ['namespace', '__namespace__'],
    ['in', '__in__'],
    ['while', '__while__'],
    ['int', 'int'],
    ['__dash__', '__underscores__dash__underscores__'],
  ])('%s is reachable as %s and back', (name, ident) => {
    expect(escapePropertyName(name)).toBe(ident);
    expect(unescapePropertyName(ident)).toBe(name);
  });

  it.each(['1a', 'a b', 'a:b', 'ä', '', '@x'])('%j is not reachable', (name) => {
    expect(escapePropertyName(name)).toBeUndefined();
  });
});
