import { decodeJson, decodeYaml, encodeJson, encodeYaml } from './codec';
import { StatusError } from './errors';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('decodeJson', () => {
  it.each([
    { name: 'no duplicates', input: '{"a":{"b":1},"c":{"b":2}}', want: { value: { a: { b: 1 }, c: { b: 2 } }, duplicates: [] } },
    { name: 'top-level duplicate, last wins', input: '{"a":1,"a":2}', want: { value: { a: 2 }, duplicates: ['.a'] } },
    { name: 'nested map', input: '{"metadata":{"labels":{"a":"1","b":"2","a":"3"}}}', want: { value: { metadata: { labels: { a: '3', b: '2' } } }, duplicates: ['.metadata.labels.a'] } },
    {
      name: 'inside a list',
      input: '{"spec":{"containers":[{"name":"a"},{"name":"b","image":"x","name":"c"}]}}',
      want: { value: { spec: { containers: [{ name: 'a' }, { name: 'c', image: 'x' }] } }, duplicates: ['.spec.containers[1].name'] },
    },
    { name: 'escaped key equals plain key', input: '{"a":1,"\\u0061":2}', want: { value: { a: 2 }, duplicates: ['.a'] } },
    { name: 'each repeat reported', input: '{"a":1,"a":2,"a":3}', want: { value: { a: 3 }, duplicates: ['.a', '.a'] } },
    { name: 'top-level array', input: '[{"a":1,"a":1}]', want: { value: [{ a: 1 }], duplicates: ['[0].a'] } },
    { name: 'scalars and whitespace', input: ' \n\t[1, -2.5e3, "x\\"y", true, false, null, {}, []] \r\n', want: { value: [1, -2500, 'x"y', true, false, null, {}, []], duplicates: [] } },
    { name: 'buffer input', input: Buffer.from('{"k":"é"}'), want: { value: { k: 'é' }, duplicates: [] } },
    // A ':' in a string: the keys cannot be counted by the ':' alone, the scan decides.
    { name: 'duplicate with a ":" in a value', input: '{"t":"12:00","t":"13:00"}', want: { value: { t: '13:00' }, duplicates: ['.t'] } },
    { name: 'duplicate with a ":" in a key', input: '{"a:b":1,"c":{"d":2,"d":3}}', want: { value: { 'a:b': 1, c: { d: 3 } }, duplicates: ['.c.d'] } },
    { name: 'a ":" in a key and a value, no duplicate', input: '{"a:b":"c:d"}', want: { value: { 'a:b': 'c:d' }, duplicates: [] } },
    { name: 'duplicate in an empty-keyed object', input: '{"":1,"":2}', want: { value: { '': 2 }, duplicates: ['.'] } },
    { name: 'as deep as allowed', input: '['.repeat(256) + ']'.repeat(256), want: { value: JSON.parse('['.repeat(256) + ']'.repeat(256)), duplicates: [] } },
  ])('$name', ({ input, want }) => {
    expect(decodeJson(input)).toEqual(want);
  });

  it.each([
    { name: 'empty', input: '', want: 'line 1, column 1: unexpected end of JSON input' },
    { name: 'truncated', input: '{"a":1', want: 'line 1, column 7: unexpected end of JSON input' },
    { name: 'missing value', input: '{"a":}', want: "line 1, column 6: invalid character '}' looking for beginning of value" },
    { name: 'missing colon', input: '{"a" 1}', want: "line 1, column 6: invalid character '1' after object key" },
    { name: 'missing comma', input: '{"a":1 "b":2}', want: `line 1, column 8: invalid character '"' after object key:value pair` },
    { name: 'bad key', input: '{,}', want: "line 1, column 2: invalid character ',' looking for beginning of object key string" },
    { name: 'trailing comma in array', input: '[1,]', want: "line 1, column 4: invalid character ']' looking for beginning of value" },
    { name: 'array separator', input: '[1 2]', want: "line 1, column 4: invalid character '2' after array element" },
    { name: 'bad literal', input: '{"a":tru}', want: "line 1, column 9: invalid character '}' in literal true (expecting 'e')" },
    { name: 'control character', input: '{"a":"\u0001"}', want: "line 1, column 7: invalid character '\\x01' in string literal" },
    { name: 'bad escape', input: '{"a":"\\q"}', want: "line 1, column 8: invalid character 'q' in string escape code" },
    { name: 'bad unicode escape', input: '"\\u12g4"', want: "line 1, column 6: invalid character 'g' in \\u hexadecimal character escape" },
    { name: 'bare minus', input: '-', want: 'line 1, column 2: unexpected end of JSON input' },
    { name: 'minus then letter', input: '[-a]', want: "line 1, column 3: invalid character 'a' in numeric literal" },
    { name: 'leading zero', input: '{"a":01}', want: "line 1, column 7: invalid character '1' after object key:value pair" },
    { name: 'fraction without digits', input: '1.', want: 'line 1, column 3: unexpected end of JSON input' },
    { name: 'exponent without digits', input: '1e+]', want: "line 1, column 4: invalid character ']' in numeric literal" },
    { name: 'trailing garbage', input: '{} x', want: "line 1, column 4: invalid character 'x' after top-level value" },
    { name: 'single quote', input: "{'a':1}", want: "line 1, column 2: invalid character '\\'' looking for beginning of object key string" },
    { name: 'position on a later line', input: '{\n  "a": 1,\n  "b":\n}', want: "line 4, column 1: invalid character '}' looking for beginning of value" },
    { name: 'too deep', input: '['.repeat(257) + ']'.repeat(257), want: 'line 1, column 257: exceeded max depth of 256' },
    { name: 'far too deep (no stack overflow)', input: '['.repeat(100_000) + ']'.repeat(100_000), want: 'line 1, column 257: exceeded max depth of 256' },
    { name: 'too deep in objects, no ":" in strings', input: '{"a":'.repeat(257) + '1' + '}'.repeat(257), want: "line 1, column 1281: exceeded max depth of 256" },
  ])('rejects $name', ({ input, want }) => {
    const err = statusOf(() => decodeJson(input));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: `json parse error at ${want}` });
  });

  // Its speed against JSON.parse is measured by `npm run bench -- --only=codec`, not here.
  it('decodes a 1 MB body with duplicates, reporting each duplicate', () => {
    const item = (i: number): string => `{"metadata":{"name":"pod-${i}","labels":{"app":"web","tier":"front","app":"api"}},"spec":{"containers":[{"name":"c","image":"img:${i}","args":["--a","--b"]}]}}`;
    const items: string[] = [];
    let size = 0;
    for (let i = 0; size < 1024 * 1024; i++) {
      items.push(item(i));
      size += items[i].length + 1;
    }
    const body = Buffer.from(`{"kind":"List","items":[${items.join(',')}]}`);
    const { value, duplicates } = decodeJson(body);
    expect((value as { items: unknown[] }).items).toHaveLength(items.length);
    expect(duplicates).toHaveLength(items.length);
    expect(duplicates[7]).toBe('.items[7].metadata.labels.app');
  });
});

describe('decodeYaml', () => {
  it.each([
    { name: 'simple', input: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n', want: { value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, duplicates: [] } },
    { name: 'duplicate key', input: 'a: 1\na: 2\n', want: { value: { a: 2 }, duplicates: ['.a'] } },
    {
      name: 'duplicate in a list item',
      input: 'spec:\n  containers:\n  - name: a\n    name: b\n',
      want: { value: { spec: { containers: [{ name: 'b' }] } }, duplicates: ['.spec.containers[0].name'] },
    },
    { name: 'merge keys are not duplicates', input: 'base: &b {p: 1, q: 2}\nd:\n  <<: *b\n  q: 3\n', want: { value: { base: { p: 1, q: 2 }, d: { p: 1, q: 3 } }, duplicates: [] } },
    {
      name: 'YAML 1.1 scalars as Go yaml.v2, timestamps stay strings',
      input: 'a: yes\nb: 0777\nc: 2024-01-02T03:04:05Z\nd: "yes"\ne: 1:20\nf: ~\n',
      want: { value: { a: true, b: 511, c: '2024-01-02T03:04:05Z', d: 'yes', e: '1:20', f: null }, duplicates: [] },
    },
    { name: 'JSON body', input: '{"a":1,"a":2}', want: { value: { a: 2 }, duplicates: ['.a'] } },
    { name: 'flow style YAML that is not JSON', input: '{a: 1, b: [x]}', want: { value: { a: 1, b: ['x'] }, duplicates: [] } },
    { name: 'document markers and a trailing empty document', input: '---\na: 1\n---\n# nothing\n', want: { value: { a: 1 }, duplicates: [] } },
    { name: 'buffer input', input: Buffer.from('k: é\n'), want: { value: { k: 'é' }, duplicates: [] } },
  ])('$name', ({ input, want }) => {
    expect(decodeYaml(input)).toEqual(want);
  });

  it.each([
    { name: 'syntax error', input: 'a: b: c\n', want: 'error converting YAML to JSON: yaml: line 1: Nested mappings are not allowed in compact mappings' },
    { name: 'two documents', input: 'a: 1\n---\nb: 2\n', want: 'the body contains 2 YAML documents; exactly one object is expected' },
    { name: 'list', input: '- a\n', want: 'the YAML body must decode to an object, got a list' },
    { name: 'scalar', input: 'hello\n', want: 'the YAML body must decode to an object, got a scalar' },
    { name: 'empty', input: '', want: 'the YAML body must decode to an object, got nothing' },
    { name: 'complex key', input: '? [a]\n: b\n', want: 'error converting YAML to JSON: yaml: line 1: mapping keys must be strings, numbers or booleans' },
    { name: 'alias bomb', input: `a: &a [x, x]\n${Array.from({ length: 12 }, (_, i) => `l${i}: &l${i} [*${i ? `l${i - 1}` : 'a'}, *${i ? `l${i - 1}` : 'a'}]`).join('\n')}\n`, want: 'error converting YAML to JSON: yaml: Excessive alias count indicates a resource exhaustion attack' },
    // Nesting the yaml parser would follow until the stack overflows: refused before parsing.
    { name: 'compact sequences 100,000 deep', input: '- '.repeat(100_000), want: 'error converting YAML to JSON: yaml: exceeded max depth of 256' },
    { name: 'flow collections 300 deep', input: `a: ${'['.repeat(300)}${']'.repeat(300)}`, want: 'error converting YAML to JSON: yaml: exceeded max depth of 256' },
    { name: 'indentation 300 deep', input: Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'), want: 'error converting YAML to JSON: yaml: exceeded max depth of 256' },
    { name: 'more than 200,000 values', input: `a: [${Array.from({ length: 200_001 }, () => '1').join(',')}]`, want: 'the body holds more than 200000 values (objects, lists and scalars); split it or make it smaller' },
  ])('rejects $name', ({ input, want }) => {
    const err = statusOf(() => decodeYaml(input));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: want });
  });
});

describe('encodeJson', () => {
  it.each([
    { name: 'compact with newline', obj: { a: 1, b: [true, null] }, pretty: false, want: '{"a":1,"b":[true,null]}\n' },
    { name: 'pretty', obj: { a: { b: [] } }, pretty: true, want: '{\n  "a": {\n    "b": []\n  }\n}\n' },
    { name: 'HTML characters escaped as Go does', obj: { a: '<b>&\u2028' }, pretty: false, want: '{"a":"\\u003cb\\u003e\\u0026\\u2028"}\n' },
  ])('$name', ({ obj, pretty, want }) => {
    expect(encodeJson(obj, pretty)).toBe(want);
    expect(JSON.parse(encodeJson(obj, pretty))).toEqual(obj);
  });
});

describe('encodeYaml', () => {
  it.each([
    {
      name: 'pod in yaml.v2 style',
      obj: {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { name: 'p', creationTimestamp: '2024-01-02T03:04:05Z', labels: { on: 'yes' } },
        spec: { containers: [{ name: 'c', args: ['yes', '1', '', 'a: b'] }], nodeName: null },
      },
      want: [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  creationTimestamp: "2024-01-02T03:04:05Z"',
        '  labels:',
        '    "on": "yes"',
        '  name: p',
        'spec:',
        '  containers:',
        '  - args:',
        '    - "yes"',
        '    - "1"',
        '    - ""',
        '    - "a: b"',
        '    name: c',
        '  nodeName: null',
        '',
      ].join('\n'),
    },
    { name: 'shared objects are not aliased', obj: (() => { const s = { x: 1 }; return { a: s, b: s }; })(), want: 'a:\n  x: 1\nb:\n  x: 1\n' },
    { name: 'long strings are not folded', obj: { a: 'word '.repeat(40).trim() }, want: `a: ${'word '.repeat(40).trim()}\n` },
  ])('$name', ({ obj, want }) => {
    expect(encodeYaml(obj)).toBe(want);
    expect(decodeYaml(want).value).toEqual(JSON.parse(JSON.stringify(obj)));
  });
});

describe('body limits', () => {
  it('a JSON body of more than 200,000 values is a 400 naming the limit', () => {
    const err = statusOf(() => decodeJson(`[${Array.from({ length: 200_001 }, () => '0').join(',')}]`));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: 'the body holds more than 200000 values (objects, lists and scalars); split it or make it smaller' });
  });

  it.each([
    { name: 'YAML nested 200 deep by indentation', input: Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1' },
    { name: 'quoted brackets are not nesting', input: `a: "${'['.repeat(1000)}"` },
    { name: 'a comment with brackets', input: `a: 1 # ${'['.repeat(1000)}` },
  ])('accepts $name', ({ input }) => {
    expect(() => decodeYaml(input)).not.toThrow();
  });
});
