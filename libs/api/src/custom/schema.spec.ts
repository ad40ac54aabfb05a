import { applySchemaDefaults, schemaHasDefaults } from './defaults';
import type { JSONSchemaProps } from './json-schema';
import { JsonPath } from './jsonpath';
import { pruneUnknownFields } from './prune';
import { structuralSchemaErrors } from './structural';
import { validateCustomResource } from './validate';

const WIDGET: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 100 },
        color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
        name: { type: 'string', maxLength: 5, pattern: '^[a-z]+$' },
        email: { type: 'string', format: 'email' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set', maxItems: 3 },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } } },
        optional: { type: 'string', nullable: true },
        plain: { type: 'string' },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

const cr = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec, ...extra });

describe('pruneUnknownFields', () => {
  it.each<{ name: string; obj: Record<string, unknown>; want: Record<string, unknown>; unknown: string[] }>([
    { name: 'keeps what the schema specifies', obj: cr({ size: 1, tags: ['a'] }), want: cr({ size: 1, tags: ['a'] }), unknown: [] },
    { name: 'drops an unknown root field', obj: cr({ size: 1 }, { bogus: 1 }), want: cr({ size: 1 }), unknown: ['bogus'] },
    { name: 'drops unknown spec and list item fields', obj: cr({ size: 1, nope: 2, ports: [{ name: 'a', x: 1 }] }), want: cr({ size: 1, ports: [{ name: 'a' }] }), unknown: ['spec.nope', 'spec.ports[0].x'] },
    { name: 'drops unknown metadata fields', obj: { ...cr({ size: 1 }), metadata: { name: 'w', nme: 'x' } }, want: cr({ size: 1 }), unknown: ['metadata.nme'] },
    { name: 'keeps map values and prunes inside them', obj: cr({ labels: { a: 'b' } }), want: cr({ labels: { a: 'b' } }), unknown: [] },
    {
      name: 'preserve-unknown-fields keeps unknown fields but prunes specified ones',
      obj: cr({ free: { anything: { deep: 1 }, known: { a: 'x', b: 'y' } } }),
      want: cr({ free: { anything: { deep: 1 }, known: { a: 'x' } } }),
      unknown: ['spec.free.known.b'],
    },
    {
      name: 'an embedded resource keeps apiVersion, kind and metadata',
      obj: cr({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', zzz: 1 }, spec: { x: 'a', y: 'b' } } }),
      want: cr({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'a' } } }),
      unknown: ['spec.template.metadata.zzz', 'spec.template.spec.y'],
    },
  ])('$name', ({ obj, want, unknown }) => {
    expect(pruneUnknownFields(obj, WIDGET)).toEqual(unknown);
    expect(obj).toEqual(want);
  });
});

describe('applySchemaDefaults', () => {
  it.each<{ name: string; spec: Record<string, unknown>; want: Record<string, unknown> }>([
    { name: 'fills an absent property', spec: { size: 1 }, want: { size: 1, color: 'red' } },
    { name: 'keeps a given value', spec: { size: 1, color: 'blue' }, want: { size: 1, color: 'blue' } },
    { name: 'replaces a null in a non-nullable field with the default', spec: { size: 1, color: null }, want: { size: 1, color: 'red' } },
    { name: 'drops a null in a non-nullable field without default', spec: { size: 1, plain: null }, want: { size: 1, color: 'red' } },
    { name: 'keeps a null in a nullable field', spec: { size: 1, optional: null }, want: { size: 1, color: 'red', optional: null } },
    { name: 'defaults inside list items', spec: { size: 1, ports: [{ name: 'a' }, { name: 'b', port: 8 }] }, want: { size: 1, color: 'red', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 8 }] } },
  ])('$name', ({ spec, want }) => {
    const obj = cr(spec);
    applySchemaDefaults(obj, WIDGET);
    expect(obj.spec).toEqual(want);
  });

  it('knows whether a schema has defaults', () => {
    expect(schemaHasDefaults(WIDGET)).toBe(true);
    expect(schemaHasDefaults({ type: 'object', properties: { a: { type: 'string' } } })).toBe(false);
  });
});

describe('validateCustomResource', () => {
  it.each<{ name: string; spec: Record<string, unknown>; want: string[] }>([
    { name: 'a valid object', spec: { size: 3, color: 'blue', name: 'ab', tags: ['a', 'b'], port: 'http', ports: [{ name: 'a' }] }, want: [] },
    { name: 'a missing required field', spec: { color: 'red' }, want: ['spec.size: Required value'] },
    { name: 'a wrong type', spec: { size: 'big' }, want: ['spec.size: Invalid value: "big": spec.size in body must be of type integer: "big"'] },
    { name: 'a fraction where an integer is wanted', spec: { size: 1.5 }, want: ['spec.size: Invalid value: 1.5: spec.size in body must be of type integer: "number"'] },
    { name: 'above the maximum', spec: { size: 200 }, want: ['spec.size: Invalid value: 200: spec.size in body should be less than or equal to 100'] },
    { name: 'below the minimum', spec: { size: 0 }, want: ['spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1'] },
    { name: 'not in the enum', spec: { size: 1, color: 'pink' }, want: ['spec.color: Unsupported value: "pink": supported values: "red", "blue"'] },
    { name: 'too long and not matching the pattern', spec: { size: 1, name: 'ABCDEFG' }, want: ['spec.name: Too long: "ABCDEFG": may not be more than 5 bytes', "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'"] },
    { name: 'a bad format', spec: { size: 1, email: 'nope' }, want: ['spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"'] },
    { name: 'int-or-string gets an object', spec: { size: 1, port: {} }, want: ['spec.port: Invalid value: {}: spec.port in body must be of type integer or string: "object"'] },
    { name: 'a duplicate in a set', spec: { size: 1, tags: ['a', 'a'] }, want: ['spec.tags[1]: Duplicate value: "a"'] },
    { name: 'too many items', spec: { size: 1, tags: ['a', 'b', 'c', 'd'] }, want: ['spec.tags: Too many: 4: must have at most 3 items'] },
    { name: 'a duplicate map key', spec: { size: 1, ports: [{ name: 'a' }, { name: 'a' }] }, want: ['spec.ports[1]: Duplicate value: {"name":"a"}'] },
    { name: 'null where not nullable', spec: { size: 1, plain: null }, want: ['spec.plain: Invalid value: "null": spec.plain in body must be of type string: "null"'] },
    { name: 'null where nullable', spec: { size: 1, optional: null }, want: [] },
    { name: 'an embedded resource without kind', spec: { size: 1, template: { apiVersion: 'v1' } }, want: ['spec.template.kind: Required value: must not be empty'] },
    { name: 'a map value of the wrong type', spec: { size: 1, labels: { a: 1 } }, want: ['spec.labels.a: Invalid value: 1: spec.labels.a in body must be of type string: "integer"'] },
  ])('$name', ({ spec, want }) => {
    expect(validateCustomResource(cr(spec), WIDGET).map((e) => e.toString())).toEqual(want);
  });

  it.each<{ name: string; schema: JSONSchemaProps; value: unknown; ok: boolean }>([
    { name: 'anyOf met', schema: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 2 }] }, value: 1, ok: true },
    { name: 'anyOf not met', schema: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 2 }] }, value: 5, ok: false },
    { name: 'oneOf met by both', schema: { type: 'integer', oneOf: [{ minimum: 1 }, { maximum: 10 }] }, value: 5, ok: false },
    { name: 'not', schema: { type: 'string', not: { enum: ['x'] } }, value: 'x', ok: false },
    { name: 'allOf on a property', schema: { type: 'object', properties: { a: { type: 'integer' } }, allOf: [{ properties: { a: { minimum: 3 } } }] }, value: { a: 1 }, ok: false },
  ])('junctors: $name', ({ schema, value, ok }) => {
    const errs = validateCustomResource({ v: value }, { type: 'object', properties: { v: schema } });
    expect(errs.length === 0).toBe(ok);
  });
});

describe('structuralSchemaErrors', () => {
  const at = 'spec.versions[0].schema.openAPIV3Schema';
  it.each<{ name: string; schema: unknown; want: string[] }>([
    { name: 'a structural schema', schema: WIDGET, want: [] },
    { name: 'no schema', schema: undefined, want: [`${at}: Required value: schemas are required`] },
    { name: 'a root that is not an object', schema: { type: 'string' }, want: [`${at}.type: Invalid value: "string": must be object at the root`] },
    { name: 'a field without a type', schema: { type: 'object', properties: { spec: {} } }, want: [`${at}.properties[spec].type: Required value: must not be empty for specified object fields`] },
    { name: 'list items without a type', schema: { type: 'object', properties: { a: { type: 'array', items: {} } } }, want: [`${at}.properties[a].items.type: Required value: must not be empty for specified array items`] },
    { name: 'a $ref', schema: { type: 'object', properties: { a: { $ref: '#/x', type: 'string' } } }, want: [`${at}.properties[a].$ref: Forbidden: $ref is not supported`] },
    { name: 'properties and additionalProperties', schema: { type: 'object', properties: { a: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } } }, want: [`${at}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`] },
    { name: 'a type inside allOf', schema: { type: 'object', properties: { a: { type: 'string', allOf: [{ type: 'string' }] } } }, want: [`${at}.properties[a].allOf[0].type: Forbidden: must be empty to be structural`] },
    { name: 'a field only allOf specifies', schema: { type: 'object', properties: { a: { type: 'object', allOf: [{ properties: { b: { minimum: 1 } } }] } } }, want: [`${at}.properties[a].properties[b]: Required value: because it is defined in allOf[0].properties[b]`] },
    { name: 'uniqueItems true', schema: { type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, uniqueItems: true } } }, want: [`${at}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`] },
    { name: 'a list-type map without keys', schema: { type: 'object', properties: { a: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { k: { type: 'string' } } } } } }, want: [`${at}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`] },
    { name: 'a bad default', schema: { type: 'object', properties: { a: { type: 'integer', default: 'x' } } }, want: [`${at}.properties[a].default: Invalid value: "x": value in body must be of type integer: "x"`] },
    { name: 'a default with unknown fields', schema: { type: 'object', properties: { a: { type: 'object', properties: {}, default: { z: 1 } } } }, want: [`${at}.properties[a].default: Invalid value: {"z":1}: must not have unknown fields, got: z`] },
    { name: 'metadata beyond name', schema: { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }, want: [`${at}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`] },
    { name: 'an embedded resource without properties', schema: { type: 'object', properties: { t: { type: 'object', 'x-kubernetes-embedded-resource': true } } }, want: [`${at}.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`] },
  ])('$name', ({ schema, want }) => {
    expect(structuralSchemaErrors(schema, at).map((e) => e.toString())).toEqual(want);
  });
});

describe('JsonPath', () => {
  const obj = { spec: { replicas: 3, 'a.b': 'dot' }, status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Synced', status: 'False' }] }, list: [1, 2, 3] };
  it.each<{ path: string; want: unknown[] }>([
    { path: '.spec.replicas', want: [3] },
    { path: ".spec['a.b']", want: ['dot'] },
    { path: '.status.conditions[?(@.type=="Ready")].status', want: ['True'] },
    { path: '.status.conditions[*].type', want: ['Ready', 'Synced'] },
    { path: '.list[-1]', want: [3] },
    { path: '.list[0:2]', want: [1, 2] },
    { path: '..type', want: ['Ready', 'Synced'] },
    { path: '.missing.field', want: [] },
  ])('$path', ({ path, want }) => {
    expect(JsonPath.parse(path).find(obj)).toEqual(want);
  });

  it.each(['spec.replicas', '.spec[', '.status.conditions[?(bad)]'])('refuses %s', (path) => {
    expect(() => JsonPath.parse(path)).toThrow();
  });
});
