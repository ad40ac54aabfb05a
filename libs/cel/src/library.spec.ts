// Every SPEC library function ("Validation expressions"), table-driven: expression → value,
// or → the evaluation error it must raise.

import { CelEnvironment } from './environment';
import { CelEvaluationError } from './errors';
import { compileRegex, matches } from './library/regex';
import { celToJson } from './values';

const env = new CelEnvironment({ variables: [{ name: 'xs', type: 'list<int>' }, { name: 's', type: 'string' }, { name: 'm', type: 'map<string, int>' }] });

function run(expression: string, activation: Record<string, unknown> = {}): unknown {
  const result = env.compile(expression).evaluate({ xs: [3n, 1n, 2n], s: 'hello', m: { a: 1n }, ...activation });
  if (result instanceof Promise) throw new Error('unexpected asynchronous result');
  return celToJson(result.value);
}

type Row = readonly [expression: string, want: unknown];

function table(rows: readonly Row[]) {
  it.each(rows)('%s', (expression, want) => expect(run(expression)).toEqual(want));
}

function errors(rows: readonly (readonly [expression: string, message: RegExp])[]) {
  it.each(rows)('%s fails', (expression, message) => {
    expect(() => run(expression)).toThrow(CelEvaluationError);
    expect(() => run(expression)).toThrow(message);
  });
}

describe('macros', () => {
  table([
    ['has(m.a)', true],
    ['has(m.b)', false],
    ['xs.all(x, x > 0)', true],
    ['xs.exists(x, x == 2)', true],
    ['xs.exists_one(x, x > 2)', true],
    ['xs.map(x, x * 2)', [6, 2, 4]],
    ['xs.map(x, x > 1, x * 10)', [30, 20]],
    ['xs.filter(x, x != 1)', [3, 2]],
  ]);
});

describe('extended strings', () => {
  table([
    ['"hello".charAt(1)', 'e'],
    ['"hello".charAt(5)', ''],
    ['"héllo".charAt(1)', 'é'],
    ['"hello".indexOf("l")', 2],
    ['"hello".indexOf("l", 3)', 3],
    ['"hello".lastIndexOf("l")', 3],
    ['"hello".lastIndexOf("l", 2)', 2],
    ['"HeLLo ÀB".lowerAscii()', 'hello Àb'],
    ['"hello àb".upperAscii()', 'HELLO àB'],
    ['"a-b-c".replace("-", "+")', 'a+b+c'],
    ['"a-b-c".replace("-", "+", 1)', 'a+b-c'],
    ['"abc".replace("", "_")', '_a_b_c_'],
    ['"a,b,c".split(",")', ['a', 'b', 'c']],
    ['"a,b,c".split(",", 2)', ['a', 'b,c']],
    ['["a", "b"].join()', 'ab'],
    ['["a", "b"].join("-")', 'a-b'],
    ['"hello".substring(1)', 'ello'],
    ['"hello".substring(1, 3)', 'el'],
    ['"  \\t hi \\n".trim()', 'hi'],
    ['"\\u00a0hi\\u2003".trim()', 'hi'],
    ['"%s has %d items (%.2f%%)".format([dyn("box"), dyn(3), dyn(12.345)])', 'box has 3 items (12.35%)'],
    ['"%x %X %o %b".format([255, 255, 8, 5])', 'ff FF 10 101'],
    ['strings.quote("a\\"b\\n")', '"a\\"b\\n"'],
  ]);
  errors([
    ['"hello".charAt(6)', /index out of range/],
    ['"%d".format(["x"])', /decimal clause can only be used on integers/],
    ['"%s %s".format(["x"])', /index 1 out of range/],
  ]);
});

describe('lists', () => {
  table([
    ['[1, 2, 3].isSorted()', true],
    ['xs.isSorted()', false],
    ['["a", "b"].isSorted()', true],
    ['xs.min()', 1],
    ['xs.max()', 3],
    ['[1.5, 0.5].min()', 0.5],
    ['xs.sum()', 6],
    ['[0.5, 0.25].sum()', 0.75],
    ['[duration("1s"), duration("500ms")].sum() == duration("1.5s")', true],
    ['xs.indexOf(2)', 2],
    ['[1, 2, 1].lastIndexOf(1)', 2],
    ['xs.indexOf(9)', -1],
    ['[].sum()', 0],
  ]);
  errors([
    ['[].min()', /min called on empty list/],
    ['[].max()', /max called on empty list/],
  ]);
});

describe('regex', () => {
  table([
    ['"abc 123 def 456".find("[0-9]+")', '123'],
    ['"abc".find("[0-9]+")', ''],
    ['"abc 123 def 456".findAll("[0-9]+")', ['123', '456']],
    ['"abc 123 def 456".findAll("[0-9]+", 1)', ['123']],
    ['"abc 123".findAll("[0-9]+", 0)', []],
    ['"foobar".matches("^fo+")', true],
    ['"foobar".matches("x")', false],
    ['matches("foobar", "bar$")', true],
  ]);
  // matches() asks re2js for a boolean only (test); a Matcher's find() is the reference, on patterns of every shape
  // (anchors, classes, alternation, repetition, empty matches, flags, Unicode and surrogate pairs) and inputs that match or not.
  const patterns = ['^[a-z0-9-]+$', '^fo+', 'bar$', 'x', '', '^$', 'a|b', '(a+)+$', '[[:alpha:]]+', '\\d{2,3}', '(?i)ABC', '(?m)^b$', '(?s)a.c', '\\bword\\b', '[^a-z]', '\\pL+', '^.$', 'é', '😀', '.*', 'a*?', '^(?:ab)*$'];
  const inputs = ['', 'abc', 'foobar', 'a-b-c', 'UPPER', 'x', 'a\nb\nc', 'a\nc', 'word here', 'éa', '😀', '12', '1234', 'ab', 'abab', 'aab', 'a'.repeat(100) + '!'];
  it.each(patterns.flatMap((p) => inputs.map((s) => [p, s] as const)))('matches(%j, %j) is what a Matcher finds', (p, s) => {
    expect(matches(s, p)).toBe(compileRegex(p).matcher(s).find());
  });
  // The plainest patterns (anchored, ASCII classes and characters, one quantifier) are matched by a JavaScript RegExp: differential
  // against re2js on seeded random inputs over ASCII letters, digits, punctuation, newlines, non-ASCII and lone surrogates.
  const plain = ['^[a-z0-9-]+$', '^[a-z0-9]*$', '^a', '^ab?c$', '^[-a-c_]x$', '^[A-Z]+', '^x[0-9]$', '^', '^$', '^[a-z]', '^_[a-]?', '^[a-zA-Z0-9_]*z$'];
  const alphabet = ['a', 'b', 'c', 'x', 'z', 'A', 'Z', '0', '9', '-', '_', '.', ' ', '\n', 'é', '😀', '\ud800', '$', '^'];
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const fuzzed = Array.from({ length: 400 }, () => Array.from({ length: random(8) }, () => alphabet[random(alphabet.length)]).join(''));
  it.each(plain)('matches(s, %j) is what a Matcher finds, for 400 random inputs', (p) => {
    for (const s of ['', 'abc', 'a-b-c', ...fuzzed]) expect([s, matches(s, p)]).toEqual([s, compileRegex(p).matcher(s).find()]);
  });
  it.each([
    ['several optional items (exponential for a backtracking engine)', '^' + 'a?'.repeat(40) + 'a'.repeat(40) + '$', 'a'.repeat(39) + 'b', false],
    ['several unbounded quantifiers (polynomial for a backtracking engine)', '^[a-z]+[a-z]+[a-z]+[a-z]+$', 'a'.repeat(5000) + '!', false],
    ['not anchored at the start', '[a-z]+$', 'a'.repeat(20000) + '!', false],
  ])('a pattern not of that shape is matched by RE2, in linear time: %s', (_name, p, s, want) => {
    expect(matches(s, p)).toBe(want);
  });
  it('matches in linear time where a backtracking engine would not return', () => {
    expect(run(`("a" * 1).matches("(a+)+$")`.replace('("a" * 1)', JSON.stringify('a'.repeat(30000) + 'b')))).toBe(false);
  });
  it('refuses a pattern RE2 does not accept when compiling', () => {
    expect(() => env.compile('s.matches("(?<=a)b")')).toThrow(/invalid regular expression/);
  });
});

describe('URLs', () => {
  table([
    ['isURL("https://example.com/")', true],
    ['isURL("/absolute-path")', true],
    ['isURL("example.com")', false],
    ['isURL("https://exa mple.com/")', false],
    ['url("https://example.com:80/").getScheme()', 'https'],
    ['url("https://example.com:80/").getHost()', 'example.com:80'],
    ['url("https://[::1]:80/").getHost()', '[::1]:80'],
    ['url("https://example.com:80/").getHostname()', 'example.com'],
    ['url("https://[::1]:80/").getHostname()', '::1'],
    ['url("https://example.com:80/").getPort()', '80'],
    ['url("https://example.com/").getPort()', ''],
    ['url("https://example.com/path with spaces/").getEscapedPath()', '/path%20with%20spaces/'],
    ['url("https://example.com/a%2Fb").getEscapedPath()', '/a%2Fb'],
    ['url("https://example.com/path?k1=a&k2=b&k2=c").getQuery()', { k1: ['a'], k2: ['b', 'c'] }],
    ['url("/p?q=a+b").getQuery()', { q: ['a b'] }],
    ['url("https://a.b/x") == url("https://a.b/x")', true],
  ]);
  errors([['url("example.com")', /URL parse error/]]);
});

describe('quantity', () => {
  table([
    ['isQuantity("1Gi")', true],
    ['isQuantity("1.5")', true],
    ['isQuantity("one")', false],
    ['quantity("1.5").isInteger()', false],
    ['quantity("1k").isInteger()', true],
    ['quantity("1k").asInteger()', 1000],
    ['quantity("1500m").asApproximateFloat()', 1.5],
    ['quantity("-1").sign()', -1],
    ['quantity("0").sign()', 0],
    ['quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi")', true],
    ['quantity("1").add(2) == quantity("3")', true],
    ['quantity("1Gi").sub(quantity("512Mi")) == quantity("512Mi")', true],
    ['quantity("5").sub(1) == quantity("4")', true],
    ['quantity("1Gi").isGreaterThan(quantity("1G"))', true],
    ['quantity("1").isLessThan(quantity("1001m"))', true],
    ['quantity("1").compareTo(quantity("1000m"))', 0],
    ['quantity("2").compareTo(quantity("1"))', 1],
    ['quantity("1") == quantity("1000m")', true],
  ]);
  errors([
    ['quantity("one")', /invalid quantity/],
    ['quantity("1.5").asInteger()', /cannot convert value to integer/],
  ]);
});

describe('optional types', () => {
  table([
    ['optional.of(1).hasValue()', true],
    ['optional.none().hasValue()', false],
    ['optional.ofNonZeroValue("").hasValue()', false],
    ['optional.ofNonZeroValue("x").value()', 'x'],
    ['{"a": 1}.?a.orValue(0)', 1],
    ['{"a": 1}.?b.orValue(0)', 0],
    ['[1, 2][?5].hasValue()', false],
    ['optional.none().or(optional.of(3)).value()', 3],
    ['optional.of(2).optMap(x, x * 10).value()', 20],
    ['optional.of(2).optFlatMap(x, optional.none()).hasValue()', false],
    ['optional.of(1) == optional.of(1)', true],
  ]);
  errors([['optional.none().value()', /not present/]]);
});

describe('cross-type numeric comparison', () => {
  table([
    ['1 < 1.5', true],
    ['2u > 1', true],
    ['1.0 >= 1', true],
    ['dyn(1) == 1.0', true],
    ['dyn([1, 2]) == [1.0, 2.0]', true],
    ['dyn({"a": 1}) == {"a": 1.0}', true],
    ['dyn(1u) in [1, 2]', true],
  ]);
});
