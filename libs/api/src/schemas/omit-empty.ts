import { isScalar, type FieldSchema, type FieldType, type TypeSchema } from './model';
import { jsonFields, schemaForKind, typeSchema } from './registry';

// Go's encoding/json leaves out a field tagged `omitempty` when it holds an empty value:
// false, 0, "", an empty slice or map, a nil pointer. Structs (ObjectMeta, Time, Quantity,
// IntOrString...) are never empty, and a pointer's zero value (`replicas: 0`) is a value.
// Upstream objects pass through Go structs on every read and write, so an object has no such
// field whatever form a client sent it in (a protobuf body carries every non-pointer zero
// value, `stdin: false`; a YAML manifest may spell one out). These helpers apply that rule to
// the JSON form, so two spellings of one object compare equal (rollout undo finds its
// ReplicaSet by template equality).

type Json = Record<string, unknown>;

/** Whether Go omits the field when it holds an empty value: `omitempty` on a non-pointer field. */
export function omittedWhenEmpty(field: FieldSchema): boolean {
  return field.omitEmpty === true && field.pointer !== true;
}

/** Whether `value` is an empty value, in Go's `omitempty` sense, of a field of type `type`. */
export function isEmptyValue(type: FieldType, value: unknown): boolean {
  if (isScalar(type)) {
    switch (type) {
      case 'string':
      case 'bytes':
        return value === '';
      case 'boolean':
        return value === false;
      case 'int32':
      case 'int64':
      case 'double':
        return value === 0;
      default:
        return false; // Time, MicroTime, Duration, Quantity, IntOrString, RawExtension are structs
    }
  }
  if ('array' in type) return Array.isArray(value) && value.length === 0;
  if ('map' in type) return isEmptyObject(value);
  const named = typeSchema(type.ref);
  return named?.items !== undefined && Array.isArray(value) && value.length === 0;
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const _ in value) return false;
  return true;
}

/** Per struct type: the fields Go may omit, and the fields whose values hold structs to visit. */
interface Plan {
  omit: readonly FieldSchema[];
  visit: readonly FieldSchema[];
}

const plans = new WeakMap<TypeSchema, Plan>();

function planOf(schema: TypeSchema): Plan {
  let plan = plans.get(schema);
  if (!plan) {
    const fields = [...jsonFields(schema).values()];
    plan = { omit: fields.filter((f) => f.omitEmpty), visit: fields.filter((f) => holdsStructs(f.type)) };
    plans.set(schema, plan);
  }
  return plan;
}

/** Whether values of the type may contain struct objects (with fields of their own). */
function holdsStructs(type: FieldType): boolean {
  if (isScalar(type)) return false;
  if ('array' in type) return holdsStructs(type.array);
  if ('map' in type) return holdsStructs(type.map);
  const named = typeSchema(type.ref)!;
  if (named.scalar) return false;
  return named.items ? holdsStructs(named.items) : true;
}

function visitValue(type: FieldType, value: unknown): void {
  if (typeof value !== 'object' || value === null || isScalar(type)) return;
  if ('array' in type) {
    if (Array.isArray(value)) for (const item of value) visitValue(type.array, item);
    return;
  }
  if ('map' in type) {
    if (!Array.isArray(value)) for (const k in value) visitValue(type.map, (value as Json)[k]);
    return;
  }
  const named = typeSchema(type.ref)!;
  if (named.items) return visitValue({ array: named.items }, value);
  if (named.union) {
    // JSONSchemaPropsOr*: the JSON kind of the value picks the alternative.
    const alt = named.fields.find((f) => !isScalar(f.type) && (Array.isArray(value) ? 'array' in f.type : 'ref' in f.type));
    if (alt) visitValue(alt.type, value);
    return;
  }
  if (!Array.isArray(value)) visitStruct(named, value as Json);
}

function visitStruct(schema: TypeSchema, obj: Json): void {
  const plan = planOf(schema);
  for (const f of plan.omit) {
    const v = obj[f.name];
    if (v === undefined) continue;
    // null decodes to Go's zero value (a nil pointer), which omitempty leaves out too.
    if (v === null || (!f.pointer && isEmptyValue(f.type, v))) delete obj[f.name];
  }
  for (const f of plan.visit) {
    const v = obj[f.name];
    if (v !== undefined) visitValue(f.type, v);
  }
}

/**
 * Removes in place, at every depth, the fields of an object of a built-in kind that Go's
 * JSON encoding of the same object would not have (see omittedWhenEmpty and isEmptyValue).
 * Unknown fields are left alone. Throws when the kind has no schema.
 */
export function omitEmptyFields(obj: Json, group: string, version: string, kind: string): void {
  const schema = schemaForKind(group, version, kind);
  if (!schema) throw new Error(`no schema for kind ${kind} in ${group ? `${group}/` : ''}${version}`);
  visitStruct(schema, obj);
}
