import { isScalar, jsonFields, typeSchema, type FieldSchema, type FieldType, type GroupVersionKind, type ScalarType, type TypeSchema } from '@orch/api';

// OpenAPI v3 schema objects (components.schemas) derived from the schema source: names like
// io.orch.api.core.v1.Pod, the x-kubernetes-* extensions kubectl reads for strategic merge
// patch and explain, formats, required fields, defaults and enums. No prose descriptions.

export type SchemaObject = Record<string, unknown>;

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

const META = 'io.orch.apimachinery.pkg.apis.meta.v1';
const RAW_EXTENSION = 'io.orch.apimachinery.pkg.runtime.RawExtension';
const APIEXTENSIONS_JSON = 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON';

/** Named types standing for scalars that are referenced, as upstream does (Time, Quantity, ...). */
const SCALAR_TYPE_NAMES: Readonly<Partial<Record<ScalarType, string>>> = {
  time: `${META}.Time`,
  microtime: `${META}.MicroTime`,
  duration: `${META}.Duration`,
  quantity: 'io.orch.apimachinery.pkg.api.resource.Quantity',
  'int-or-string': 'io.orch.apimachinery.pkg.util.intstr.IntOrString',
};

/** Schemas of types whose JSON form is a scalar (the `scalar` of the type). */
const SCALAR_DEFINITIONS: Readonly<Record<ScalarType, SchemaObject>> = {
  string: { type: 'string' },
  boolean: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  bytes: { type: 'string', format: 'byte' },
  time: { type: 'string', format: 'date-time' },
  microtime: { type: 'string', format: 'date-time' },
  duration: { type: 'string' },
  quantity: { oneOf: [{ type: 'string' }, { type: 'number' }] },
  'int-or-string': { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
  raw: { type: 'object' },
};

export function ref(name: string): SchemaObject {
  return { $ref: `${SCHEMA_REF_PREFIX}${name}` };
}

/**
 * The named type a `raw` field refers to: FieldsV1 for managed fields, apiextensions JSON
 * inside CRD schemas, RawExtension elsewhere (the schema source keeps them all as `raw`).
 */
function rawTypeName(owner: TypeSchema, field?: FieldSchema): string {
  if (field?.name === 'fieldsV1') return `${META}.FieldsV1`;
  if (owner.pkg === 'apiextensions/v1') return APIEXTENSIONS_JSON;
  return RAW_EXTENSION;
}

/** The named type referenced by a scalar field type, if any. */
function scalarTypeName(t: ScalarType, owner: TypeSchema, field?: FieldSchema): string | undefined {
  return t === 'raw' ? rawTypeName(owner, field) : SCALAR_TYPE_NAMES[t];
}

/** Schema of a value of type `t` in a field of `owner` (a `$ref` for named types). */
function valueSchema(t: FieldType, owner: TypeSchema, field?: FieldSchema): SchemaObject {
  if (isScalar(t)) {
    const named = scalarTypeName(t, owner, field);
    return named ? ref(named) : { ...SCALAR_DEFINITIONS[t] };
  }
  if ('array' in t) return { type: 'array', items: valueSchema(t.array, owner, field) };
  if ('map' in t) return { type: 'object', additionalProperties: valueSchema(t.map, owner, field) };
  return ref(t.ref);
}

/** The property schema of a field with its list, map and patch extensions. */
function propertySchema(f: FieldSchema, owner: TypeSchema): SchemaObject {
  const base = valueSchema(f.type, owner, f);
  const extra: SchemaObject = {};
  if (f.enum) {
    // An enum field of list type constrains its items.
    if (base.items && !('$ref' in (base.items as SchemaObject))) (base.items as SchemaObject).enum = [...f.enum];
    else if (!('$ref' in base)) extra.enum = [...f.enum];
  }
  if (f.default !== undefined) extra.default = f.default;
  if (f.listType) extra['x-kubernetes-list-type'] = f.listType;
  if (f.listMapKeys) extra['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
  if (f.patchMergeKey) extra['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
  if (f.patchStrategy) extra['x-kubernetes-patch-strategy'] = f.patchStrategy;
  const mapType = f.mapType ?? f.structType;
  if (mapType) extra['x-kubernetes-map-type'] = mapType;
  if (Object.keys(extra).length === 0) return base;
  // Siblings of a $ref are ignored in OpenAPI 3.0: wrap the reference in allOf, as upstream.
  return '$ref' in base ? { allOf: [base], ...extra } : { ...base, ...extra };
}

/** The components.schemas entry of a named type; `gvks` become its x-kubernetes-group-version-kind. */
export function definition(t: TypeSchema, gvks: readonly GroupVersionKind[] = []): SchemaObject {
  let out: SchemaObject;
  if (t.scalar) out = { ...SCALAR_DEFINITIONS[t.scalar] };
  else if (t.items) out = { type: 'array', items: valueSchema(t.items, t) };
  else if (t.union) out = {}; // any of its alternatives (JSONSchemaPropsOrBool, ...)
  else {
    const properties: Record<string, SchemaObject> = {};
    const required: string[] = [];
    for (const [name, f] of jsonFields(t)) {
      properties[name] = propertySchema(f, t);
      if (f.required) required.push(name);
    }
    out = { type: 'object', properties };
    if (required.length) out.required = required;
    if (t.structType === 'atomic') out['x-kubernetes-map-type'] = 'atomic';
  }
  if (t.name === APIEXTENSIONS_JSON) out = { 'x-kubernetes-preserve-unknown-fields': true };
  if (gvks.length) out['x-kubernetes-group-version-kind'] = gvks.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));
  return out;
}

/** Named types a type refers to directly (including the named forms of scalar fields). */
function references(t: TypeSchema): string[] {
  const out: string[] = [];
  const visit = (ft: FieldType, f?: FieldSchema) => {
    if (isScalar(ft)) {
      const named = scalarTypeName(ft, t, f);
      if (named) out.push(named);
    } else if ('array' in ft) visit(ft.array, f);
    else if ('map' in ft) visit(ft.map, f);
    else out.push(ft.ref);
  };
  for (const f of t.fields) visit(f.type, f);
  if (t.items) visit(t.items);
  return out;
}

/** Every named type reachable from `roots` (roots included), in discovery order. */
export function reachableTypes(roots: readonly TypeSchema[]): TypeSchema[] {
  const seen = new Map<string, TypeSchema>();
  const stack = [...roots];
  while (stack.length) {
    const t = stack.pop()!;
    if (seen.has(t.name)) continue;
    seen.set(t.name, t);
    for (const name of references(t)) {
      const next = typeSchema(name);
      if (next && !seen.has(name)) stack.push(next);
    }
  }
  return [...seen.values()];
}
