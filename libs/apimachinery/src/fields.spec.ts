import { StatusError } from './errors';
import { escapeFieldValue, parseFieldSelector } from './fields';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('parseFieldSelector', () => {
  it.each([
    { name: 'empty', input: '', want: { text: '', empty: true, reqs: [] } },
    { name: 'only commas', input: ',,', want: { text: '', empty: true, reqs: [] } },
    { name: 'equals', input: 'metadata.name=p', want: { text: 'metadata.name=p', empty: false, reqs: [{ field: 'metadata.name', operator: '=', value: 'p' }] } },
    { name: 'double equals becomes equals', input: 'a==b', want: { text: 'a=b', empty: false, reqs: [{ field: 'a', operator: '=', value: 'b' }] } },
    { name: 'not equals', input: 'spec.nodeName!=n1', want: { text: 'spec.nodeName!=n1', empty: false, reqs: [{ field: 'spec.nodeName', operator: '!=', value: 'n1' }] } },
    { name: 'empty value', input: 'a=', want: { text: 'a=', empty: false, reqs: [{ field: 'a', operator: '=', value: '' }] } },
    {
      name: 'sorted terms',
      input: 'b=1,a==2',
      want: {
        text: 'a=2,b=1',
        empty: false,
        reqs: [
          { field: 'a', operator: '=', value: '2' },
          { field: 'b', operator: '=', value: '1' },
        ],
      },
    },
    { name: 'escaped comma', input: 'a=x\\,y', want: { text: 'a=x\\,y', empty: false, reqs: [{ field: 'a', operator: '=', value: 'x,y' }] } },
    { name: 'escaped equals and backslash', input: 'a=x\\=y\\\\', want: { text: 'a=x\\=y\\\\', empty: false, reqs: [{ field: 'a', operator: '=', value: 'x=y\\' }] } },
  ])('$name', ({ input, want }) => {
    const sel = parseFieldSelector(input);
    expect({ text: sel.toString(), empty: sel.empty(), reqs: sel.requirements() }).toEqual(want);
  });

  it.each([
    { name: 'no operator', input: 'a', want: "invalid selector: 'a'; can't understand 'a'" },
    { name: 'first sorted bad term', input: 'b,a', want: "invalid selector: 'b,a'; can't understand 'a'" },
    { name: 'unknown escape', input: 'a=b\\x', want: 'invalid field selector: invalid escape sequence: \\x' },
    { name: 'trailing backslash', input: 'a=b\\', want: 'invalid field selector: invalid escape sequence: \\' },
    { name: 'bare equals in value', input: 'a=b=c', want: 'invalid field selector: unescaped character in value: 61' },
  ])('rejects $name', ({ input, want }) => {
    const err = statusOf(() => parseFieldSelector(input));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: want });
  });
});

describe('FieldSelector.matches', () => {
  it.each<{ name: string; selector: string; fields: Record<string, string>; want: boolean }>([
    { name: 'empty', selector: '', fields: { a: 'x' }, want: true },
    { name: 'equals hit', selector: 'a=x', fields: { a: 'x' }, want: true },
    { name: 'equals miss', selector: 'a=x', fields: { a: 'y' }, want: false },
    { name: 'equals absent', selector: 'a=x', fields: {}, want: false },
    { name: 'absent is empty', selector: 'a=', fields: {}, want: true },
    { name: 'not equals absent', selector: 'a!=x', fields: {}, want: true },
    { name: 'not equals same', selector: 'a!=x', fields: { a: 'x' }, want: false },
    { name: 'and', selector: 'a=x,b!=y', fields: { a: 'x', b: 'y' }, want: false },
    { name: 'escaped value', selector: 'a=x\\,y', fields: { a: 'x,y' }, want: true },
  ])('$name', ({ selector, fields, want }) => {
    expect(parseFieldSelector(selector).matches(fields)).toBe(want);
  });
});

describe('FieldSelector helpers', () => {
  it.each([
    { name: 'exact', selector: 'spec.nodeName=n1,metadata.name!=x', field: 'spec.nodeName', want: 'n1' },
    { name: 'not equals is not exact', selector: 'metadata.name!=x', field: 'metadata.name', want: undefined },
    { name: 'absent', selector: '', field: 'spec.nodeName', want: undefined },
  ])('requiresExactMatch: $name', ({ selector, field, want }) => {
    expect(parseFieldSelector(selector).requiresExactMatch(field)).toBe(want);
  });

  it.each([
    { name: 'all supported', selector: 'metadata.name=a,metadata.namespace=b', want: undefined },
    { name: 'unsupported', selector: 'metadata.name=a,spec.foo=b', want: 'field label not supported: spec.foo' },
  ])('checkSupported: $name', ({ selector, want }) => {
    const check = (): void => parseFieldSelector(selector).checkSupported(new Set(['metadata.name', 'metadata.namespace']));
    if (want === undefined) expect(check).not.toThrow();
    else expect({ code: statusOf(check).code, message: statusOf(check).message }).toEqual({ code: 400, message: want });
  });

  it.each([
    { name: 'plain', input: 'abc', want: 'abc' },
    { name: 'specials', input: 'a,b=c\\d', want: 'a\\,b\\=c\\\\d' },
  ])('escapeFieldValue: $name round-trips', ({ input, want }) => {
    expect(escapeFieldValue(input)).toBe(want);
    expect(parseFieldSelector(`f=${escapeFieldValue(input)}`).requirements()[0].value).toBe(input);
  });
});
