// The SPEC type mapping from schemas ("Validation expressions"): object, map, list (set and
// map lists compare without order), bool, double, int, string with byte / date / date-time /
// duration formats, int-or-string; escaped property names; checked field names and types.

import { CelEnvironment } from './environment';
import { CelCompileError } from './errors';
import type { Projection } from './projection';
import type { CelSchema } from './schema';

const schema: CelSchema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    ratio: { type: 'number' },
    enabled: { type: 'boolean' },
    name: { type: 'string' },
    port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    data: { type: 'string', format: 'byte' },
    created: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    timeout: { type: 'string', format: 'duration' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    'x-y': { type: 'string' },
    namespace: { type: 'string' },
    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ordered: { type: 'array', items: { type: 'string' } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
    },
    template: { $ref: '#/components/schemas/Template' },
    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } },
  },
};
const definitions: Record<string, CelSchema> = { Template: { type: 'object', properties: { image: { type: 'string' } } } };
const env = new CelEnvironment({
  variables: [
    { name: 'self', schema },
    { name: 'oldSelf', schema },
  ],
  resolveRef: (ref) => definitions[ref.split('/').pop()!],
});

const object = {
  replicas: 3,
  ratio: 1,
  enabled: true,
  name: 'web',
  port: 8080,
  data: Buffer.from('hello').toString('base64'),
  created: '2024-01-02T03:04:05Z',
  day: '2024-01-02',
  timeout: '1m30s',
  labels: { 'app.orch.io/name': 'web' },
  'x-y': 'dash',
  namespace: 'ns',
  tags: ['a', 'b'],
  ordered: ['a', 'b'],
  ports: [
    { name: 'http', port: 80 },
    { name: 'https', port: 443 },
  ],
  template: { image: 'nginx' },
  extra: { anything: { nested: 1 } },
  embedded: { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'e' }, spec: { size: 2 } },
};
const reordered = { ...object, tags: ['b', 'a'], ordered: ['b', 'a'], ports: [object.ports[1], object.ports[0]] };

function run(expression: string, old: unknown = object): unknown {
  const converter = env.converter();
  const r = env.compile(expression).evaluate({ self: converter.convert(object, schema), oldSelf: converter.convert(old, schema) });
  if (r instanceof Promise) throw new Error('unexpected async');
  return r.value;
}

describe('type mapping', () => {
  it.each([
    ['integer is int', 'self.replicas + 1 == 4 && type(self.replicas) == int'],
    ['number is double', 'self.ratio * 2.0 == 2.0 && type(self.ratio) == double'],
    ['boolean is bool', 'self.enabled'],
    ['int-or-string holds an int', 'self.port == 8080'],
    ['format byte is bytes', 'self.data == b"hello"'],
    ['format date-time is a timestamp', 'self.created == timestamp("2024-01-02T03:04:05Z") && self.created.getFullYear() == 2024'],
    ['format date is a timestamp', 'self.day < self.created'],
    ['format duration is a duration', 'self.timeout == duration("90s")'],
    ['additionalProperties is a map', 'self.labels["app.orch.io/name"] == "web"'],
    ['a $ref is followed', 'self.template.image == "nginx"'],
    ['preserved unknown fields are dynamic', 'self.extra.anything.nested == 1'],
    ['an embedded resource has apiVersion, kind and metadata', 'self.embedded.kind == "Thing" && self.embedded.metadata.name == "e" && self.embedded.spec.size == 2'],
    ['escaped property names', 'self.x__dash__y == "dash" && self.__namespace__ == "ns"'],
    ['a reserved word is also reachable as itself after a dot', 'self.namespace == "ns"'],
  ])('%s', (_name, expression) => expect(run(expression)).toBe(true));

  it('a date-time keeps its nanoseconds and offset', () => {
    const self = env.toCel({ ...object, created: '2024-01-02T03:04:05.123456789+01:00' }, schema);
    const r = env.compile('string(self.created) + " " + string(self.created + duration("1ns") - self.created)').evaluate({ self, oldSelf: null });
    expect(r).toEqual({ value: '2024-01-02T02:04:05.123456789Z 0.000000001s', cost: expect.any(Number) });
  });

  it('int-or-string holds a string too', () => {
    const r = env.compile('self.port == "http"').evaluate({ self: env.toCel({ port: 'http' }, schema), oldSelf: null });
    expect(r).toEqual({ value: true, cost: expect.any(Number) });
  });
});

describe('list types', () => {
  it.each([
    ['a set list equals its reordering', 'self.tags == oldSelf.tags', true],
    ['a map list equals its reordering', 'self.ports == oldSelf.ports', true],
    ['an atomic list does not', 'self.ordered == oldSelf.ordered', false],
    ['whole objects compare by value (transition rule)', 'self == oldSelf', false],
  ])('%s', (_name, expression, want) => expect(run(expression, reordered)).toBe(want));

  it('a set list is still a list', () => {
    expect(run('self.tags.size() == 2 && "a" in self.tags && self.tags.all(t, t.size() == 1) && self.ports.exists(p, p.port == 443)')).toBe(true);
  });
});

describe('checking against the schema', () => {
  it.each([
    ['self.replicass > 1', /undefined field 'replicass'/],
    ['self.replicas == "three"', /no such overload/],
    ['self.name + 1', /no such overload/],
    ['self.template.imag == ""', /imag/],
    ['self.x-y == ""', /undefined field 'x'/],
    ['oldSelf.tags.all(t, t > 1)', /no such overload/],
  ])('%s does not compile', (expression, message) => {
    expect(() => env.compile(expression)).toThrow(CelCompileError);
    expect(() => env.compile(expression)).toThrow(message);
  });

  it('reports the position in upstream form', () => {
    expect(() => env.compile('self.replicas > 1 &&\n self.nam == ""')).toThrow(/^ERROR: <input>:2:\d+: /);
  });

  it('returns the inferred result type and refuses another', () => {
    expect(env.compile('self.name').resultType).toBe('string');
    expect(() => env.compile('self.name', { resultTypes: ['bool'] })).toThrow(/must evaluate to bool, not string/);
  });
});

describe('CelValueConverter.largestSize: a bound of every size in what it converted', () => {
  /** The largest size in a converted value, walked: strings, bytes, lists, sets, maps and their keys. */
  function walked(v: unknown): number {
    if (typeof v === 'string' || v instanceof Uint8Array) return v.length;
    if (Array.isArray(v) || v instanceof Set) return Math.max(Array.isArray(v) ? v.length : v.size, ...[...v].map(walked));
    if (v && typeof v === 'object' && [null, Object.prototype].includes(Object.getPrototypeOf(v))) {
      const keys = Object.keys(v);
      return Math.max(keys.length, ...keys.map((k) => Math.max(k.length, walked((v as Record<string, unknown>)[k]))));
    }
    return 1;
  }
  const long = 'x'.repeat(300);
  it.each([
    ['the test object', object],
    ['a long string', { ...object, name: long }],
    ['a long map key', { ...object, labels: { [long]: 'v' } }],
    ['a long escaped key, preserved', { ...object, extra: { [`${long}-dash`]: 1 } }],
    ['many map entries', { ...object, labels: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 'v'])) }],
    ['a long list', { ...object, ordered: Array.from({ length: 400 }, (_, i) => `i${i}`) }],
    ['a long set list', { ...object, tags: Array.from({ length: 400 }, (_, i) => `t${i}`) }],
    ['a long nested string', { ...object, template: { image: long } }],
    ['an undeclared long field (left out)', { ...object, undeclared: long }],
  ])('%s', (_name, value) => {
    const converter = env.converter();
    const converted = converter.convert(value, schema);
    expect(converter.largestSize).toBeGreaterThanOrEqual(walked(converted));
    // Projected: what a projection keeps is bounded as well.
    const projecting = env.converter();
    const projected = projecting.convertProjected(value, new Map<string, Projection>([['labels', true], ['ordered', true], ['template', new Map([['image', true]])], ['name', true]]), schema);
    expect(projecting.largestSize).toBeGreaterThanOrEqual(walked(projected));
  });
});
