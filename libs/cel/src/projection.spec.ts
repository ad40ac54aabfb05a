import { CelEnvironment } from './environment';
import { merge, project, type Projection } from './projection';
import type { CelSchema } from './schema';

/** A projection as plain data: `true`, or an object of the fields. */
const plain = (p: Projection | undefined): unknown => (p === undefined || p === true ? p : Object.fromEntries([...p].map(([k, v]) => [k, plain(v)])));

describe('what an expression reads of a variable', () => {
  const env = new CelEnvironment({ variables: [{ name: 'object' }, { name: 'oldObject' }, { name: 'request' }] });
  it.each([
    { expression: 'object.metadata.name.size() <= 253', want: { metadata: { name: true } } },
    { expression: "has(object.metadata.labels) && 'x' in object.metadata.labels", want: { metadata: { labels: true } } },
    { expression: "object.data.all(k, !k.startsWith('secret-')) && object.kind == 'ConfigMap'", want: { data: true, kind: true } },
    { expression: 'object.?spec.?replicas.orValue(1) > 0', want: { spec: { replicas: true } } },
    { expression: 'object.metadata.name == oldObject.metadata.name', want: { metadata: { name: true } } },
    { expression: 'object.spec.containers[0].image != ""', want: { spec: { containers: true } } },
    { expression: 'object == oldObject', want: true },
    { expression: 'object["metadata"].name != ""', want: true },
    { expression: 'cel.bind(m, object.metadata, m.name != "")', want: { metadata: true } },
    { expression: "request.operation == 'CREATE'", want: undefined },
  ])('$expression', ({ expression, want }) => {
    expect(plain(env.compile(expression).readsOf('object'))).toEqual(want);
  });

  it('merges what two expressions read, and projects a value to it', () => {
    const reads = merge(env.compile('object.metadata.name != ""').readsOf('object'), env.compile('object.data.size() < 3').readsOf('object'))!;
    expect(plain(reads)).toEqual({ metadata: { name: true }, data: true });
    const obj = { kind: 'ConfigMap', metadata: { name: 'a', managedFields: [{ manager: 'x' }], uid: 'u' }, data: { k: 'v' } };
    expect(project(obj, reads)).toEqual({ metadata: { name: 'a' }, data: { k: 'v' } });
    expect(merge(reads, true)).toBe(true);
  });
});

describe('conversion of a projected value (CelValueConverter.convertProjected)', () => {
  const defs: Record<string, CelSchema> = {
    '#/components/schemas/Meta': { type: 'object', properties: { name: { type: 'string' }, namespace: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } }, generation: { type: 'integer' } } },
    '#/components/schemas/Template': { type: 'object', properties: { image: { type: 'string' }, created: { type: 'string', format: 'date-time' } } },
  };
  const schema: CelSchema = {
    type: 'object',
    properties: {
      kind: { type: 'string' },
      metadata: { $ref: '#/components/schemas/Meta' },
      data: { type: 'object', additionalProperties: { type: 'string' } },
      spec: { type: 'object', properties: { replicas: { type: 'integer' }, port: { 'x-kubernetes-int-or-string': true }, template: { $ref: '#/components/schemas/Template' }, 'x-y': { type: 'string' } } },
      counts: { type: 'object', additionalProperties: { type: 'object', properties: { n: { type: 'integer' }, m: { type: 'integer' } } } },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } },
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    },
  };
  const env = new CelEnvironment({ variables: [{ name: 'object' }], resolveRef: (ref) => defs[ref] });
  const reads = [
    'object.metadata.name.size() < 9',
    'object.metadata.namespace != "x"',
    "'a' in object.metadata.labels",
    'object.metadata.generation > 0',
    'object.data.size() < 3',
    'object.spec.replicas > 0 && object.spec.port != 0 && object.spec.template.image != "" && object.spec.template.created > timestamp("2020-01-01T00:00:00Z") && object.spec.x__dash__y != ""',
    'object.counts.c1.n > 0',
    'object.extra.foo.bar == 1',
    'object.embedded.metadata.name != "" && object.embedded.spec.size > 0',
    "object.tags == ['a']",
    'object.kind == "K"',
  ].reduce<Projection | undefined>((p, e) => merge(p, env.compile(e).readsOf('object')), undefined)!;
  /** The value's object keys in order, recursively (toStrictEqual does not compare key order). */
  const order = (v: unknown): unknown => (v && typeof v === 'object' && !(v instanceof Date) ? Object.keys(v).map((k) => [k, order((v as Record<string, unknown>)[k])]) : null);
  const full = {
    kind: 'K',
    metadata: { name: 'a', namespace: 'n', labels: { '10': 'x', a: 'b', '2': 'y' }, generation: 3, uid: 'u', managedFields: [{ manager: 'm' }] },
    data: { k: 'v', '7': 'w' },
    spec: { replicas: 2, port: 80, template: { image: 'i', created: '2026-01-01T00:00:00Z', other: 1 }, 'x-y': 'z', ignored: true },
    counts: { c1: { n: 1, m: 2 }, c2: { n: 3 } },
    extra: { foo: { bar: 1, baz: 2 }, qux: 3 },
    embedded: { apiVersion: 'v1', kind: 'E', metadata: { name: 'e', generateName: 'g' }, spec: { size: 4 } },
    tags: ['a', 'b'],
    status: { phase: 'x' },
  };
  it.each([
    { name: 'a whole object', value: full },
    { name: 'fields missing', value: { kind: 'K', metadata: { name: 'a' } } },
    { name: 'fields null or undefined', value: { kind: null, metadata: null, spec: { replicas: undefined, template: null } } },
    { name: 'an object field holding a string', value: { metadata: 'x', spec: 7 } },
    { name: 'an object field holding a list', value: { metadata: [{ name: 'a' }], data: ['x'] } },
    { name: 'a map field holding a list, a list field holding an object', value: { metadata: { labels: ['a'] }, tags: { a: 1 } } },
    { name: 'not an object', value: 'text' },
    { name: 'null', value: null },
  ])('$name: as converting the projected copy does', ({ value }) => {
    const want = env.converter().convert(project(value, reads), schema);
    const converter = env.converter();
    for (let i = 0; i < 2; i++) {
      // twice: the second conversion reuses the plan made by the first
      const got = converter.convertProjected(value, reads, schema);
      expect(got).toStrictEqual(want);
      expect(order(got)).toEqual(order(want));
    }
  });

  it('follows a new schema object of the same projection (a CRD whose schema changed): no plan of the old one is used', () => {
    // `kind` no longer declared (left out), `spec.template.created` a plain string (no longer a timestamp)
    const changed: CelSchema = { type: 'object', properties: { metadata: schema.properties!.metadata, spec: { type: 'object', properties: { template: { type: 'object', properties: { created: { type: 'string' } } } } } } };
    const want = (s: CelSchema) => env.converter().convert(project(full, reads), s);
    expect(want(changed)).not.toStrictEqual(want(schema));
    const converter = env.converter();
    for (const s of [schema, changed, schema, changed]) expect(converter.convertProjected(full, reads, s)).toStrictEqual(want(s));
  });

  it('converts whole (projection true) and schema-less values as convert does', () => {
    expect(env.converter().convertProjected(full, true, schema)).toStrictEqual(env.converter().convert(full, schema));
    expect(env.converter().convertProjected(full, reads)).toStrictEqual(env.converter().convert(project(full, reads)));
  });
});
