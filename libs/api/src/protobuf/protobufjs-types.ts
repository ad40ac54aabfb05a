import { Field, MapField, Root, Type, type FieldBase } from 'protobufjs';
import { isScalar, type FieldSchema, type FieldType, type ScalarType, type TypeSchema } from '../schemas/model';
import { typeSchema } from '../schemas/registry';

// protobufjs message types built from the schema source: one message per named type, fields
// under their upstream numbers (proto2: optional scalars with presence, unpacked repeated
// fields, map<string, V> fields as upstream's generated.proto declares them). The codec does
// not use them (compile.ts generates its own per-type code): the codec spec reads the codec's
// bytes with them, a reader independent of it (not exported from the library).

const META = 'io.orch.apimachinery.pkg.apis.meta.v1';

/** The named type whose message carries a scalar's protobuf form (Time{seconds=1,nanos=2}, ...). */
const SCALAR_MESSAGES: Readonly<Partial<Record<ScalarType, string>>> = {
  time: `${META}.Time`,
  microtime: `${META}.MicroTime`,
  duration: `${META}.Duration`,
  quantity: 'io.orch.apimachinery.pkg.api.resource.Quantity',
  'int-or-string': 'io.orch.apimachinery.pkg.util.intstr.IntOrString',
  raw: 'io.orch.apimachinery.pkg.runtime.RawExtension',
};

const PRIMITIVES: Readonly<Partial<Record<ScalarType, string>>> = {
  string: 'string',
  boolean: 'bool',
  int32: 'int32',
  int64: 'int64',
  double: 'double',
  bytes: 'bytes',
};

/** Property names protobufjs messages use for themselves. */
const RESERVED = new Set(['$type', 'toJSON', 'constructor', '__proto__', 'prototype']);

/** The protobufjs property name of a field (JSON names like `$ref` or `x-kubernetes-list-type` are not identifiers). */
function protoFieldName(jsonName: string): string {
  const safe = jsonName.replace(/[^A-Za-z0-9_]/g, '_');
  return RESERVED.has(jsonName) || /^\d/.test(safe) ? `_${safe}` : safe;
}

function protoTypeName(qualified: string): string {
  return qualified.replace(/[^A-Za-z0-9_]/g, '_');
}

/** The protobuf field type of one element (a primitive keyword or a message name). */
function elementType(t: FieldType, pending: TypeSchema[]): string {
  if (isScalar(t)) {
    const primitive = PRIMITIVES[t];
    if (primitive) return primitive;
    return messageName(typeSchema(SCALAR_MESSAGES[t]!)!, pending);
  }
  if ('ref' in t) return messageName(typeSchema(t.ref)!, pending);
  throw new Error(`protobuf: nested list or map element ${JSON.stringify(t)} has no upstream encoding`);
}

const root = new Root();
const built = new Map<string, Type>();

function messageName(schema: TypeSchema, pending: TypeSchema[]): string {
  if (!built.has(schema.name) && !pending.includes(schema)) pending.push(schema);
  return protoTypeName(schema.name);
}

function protoField(f: FieldSchema, pending: TypeSchema[]): FieldBase {
  const name = protoFieldName(f.name);
  const t = f.type;
  if (!isScalar(t) && 'map' in t) return new MapField(name, f.proto, 'string', elementType(t.map, pending));
  if (!isScalar(t) && 'array' in t) return new Field(name, f.proto, elementType(t.array, pending), 'repeated', { packed: false });
  return new Field(name, f.proto, elementType(t, pending));
}

/**
 * The protobufjs message type of a named type (built on first use, with every type it
 * references). Fields numbered 0 (TypeMeta, Table) are not part of the message.
 */
export function messageType(schema: TypeSchema): Type {
  const existing = built.get(schema.name);
  if (existing) return existing;
  const pending: TypeSchema[] = [schema];
  for (let i = 0; i < pending.length; i++) {
    const s = pending[i];
    const type = new Type(protoTypeName(s.name));
    for (const f of s.fields) if (f.proto > 0) type.add(protoField(f, pending));
    root.add(type);
    built.set(s.name, type);
  }
  root.resolveAll();
  return built.get(schema.name)!;
}
