import { FieldError } from '@orch/apimachinery';
import { isScalar, shortTypeName, type FieldType, type ScalarType, type TypeSchema } from './model';
import { goTypeName, jsonFields, schemaForKind, typeSchema } from './registry';

/** Result of checking a decoded object against its kind's schema. */
export interface FieldCheckResult {
  /** Unknown fields as paths like upstream strict decoding: `.spec.foo`, `.spec.containers[0].bogus`. */
  unknown: string[];
  /**
   * Values of the wrong JSON type (or unparsable quantities, times, base64, ...). `field` is the
   * path (`spec.replicas`), `detail` the upstream-like decode message
   * (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`).
   */
  typeErrors: FieldError[];
  /** A value of a field, list item or map entry the schema declares is null: only then has normalizeNulls work to do. */
  nulls: boolean;
}

/**
 * Where a value sits: a link to where its parent sits, so that the path for messages and the
 * Go decoder's error context are spelled only for a value that has a problem.
 */
interface Loc {
  readonly up?: Loc;
  /** The struct field (`field`), map key (`entry`) or list index (`index`) that leads here from `up`. */
  readonly step: string | number;
  readonly how: 'field' | 'entry' | 'index';
  /** Short name of the innermost struct type ('' at the root). */
  readonly struct: string;
}

const ROOT: Loc = { step: '', how: 'field', struct: '' };

/** `spec.containers[0].image` */
function pathOf(loc: Loc): string {
  if (!loc.up) return '';
  const p = pathOf(loc.up);
  if (loc.how === 'index') return `${p}[${loc.step}]`;
  return loc.how === 'entry' || p ? `${p}.${loc.step}` : String(loc.step);
}

/** JSON field names from the root without indices or map keys, as Go's decoder reports them. */
function goStackOf(loc: Loc): string[] {
  if (!loc.up) return [];
  const stack = goStackOf(loc.up);
  if (loc.how === 'field') stack.push(String(loc.step));
  return stack;
}

interface Ctx {
  result: FieldCheckResult;
}

const QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$/;
const QUANTITY_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
const DURATION = /^[-+]?(?:0|(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_LIMIT = 2 ** 63;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON kind of a value as Go's decoder names it. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

function typeError(ctx: Ctx, loc: Loc, value: unknown, detail: string): void {
  ctx.result.typeErrors.push(FieldError.typeInvalid(pathOf(loc), value, detail));
}

/** Go's UnmarshalTypeError text for `value` found where `type` was expected. */
function mismatch(ctx: Ctx, loc: Loc, value: unknown, type: FieldType, valueText = jsonKind(value)): void {
  const goStack = goStackOf(loc);
  const into = goStack.length ? `Go struct field ${loc.struct}.${goStack.join('.')}` : 'Go value';
  typeError(ctx, loc, value, `json: cannot unmarshal ${valueText} into ${into} of type ${goTypeName(type)}`);
}

/** Position Go's base64 decoder reports for an invalid string, or -1 when valid. */
function base64Error(s: string): number {
  const data = s.replace(/[\r\n]/g, '');
  const bad = data.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return bad;
  const pad = data.indexOf('=');
  if (pad >= 0 && (!/^=*$/.test(data.slice(pad)) || data.length - pad > 2)) return pad;
  if (data.length % 4 !== 0) return data.length - (data.length % 4);
  return -1;
}

function validTime(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [year, month, day, hour, min, sec] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = !m[9] || (Number(m[9]) < 24 && Number(m[10]) < 60);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && min < 60 && sec < 60 && offsetOk;
}

function checkScalar(ctx: Ctx, scalar: ScalarType, value: unknown, loc: Loc, declared: FieldType): void {
  const t = typeof value;
  switch (scalar) {
    case 'raw':
      return;
    case 'string':
      if (t !== 'string') mismatch(ctx, loc, value, declared);
      return;
    case 'boolean':
      if (t !== 'boolean') mismatch(ctx, loc, value, declared);
      return;
    case 'double':
      if (t !== 'number') mismatch(ctx, loc, value, declared);
      return;
    case 'int32':
    case 'int64': {
      if (t !== 'number') return mismatch(ctx, loc, value, declared);
      const n = value as number;
      const fits = scalar === 'int32' ? n >= INT32_MIN && n <= INT32_MAX : n >= -INT64_LIMIT && n < INT64_LIMIT;
      if (!Number.isInteger(n) || !fits) mismatch(ctx, loc, value, declared, `number ${String(n)}`);
      return;
    }
    case 'bytes': {
      if (t !== 'string') return mismatch(ctx, loc, value, declared);
      const at = base64Error(value as string);
      if (at >= 0) typeError(ctx, loc, value, `illegal base64 data at input byte ${at}`);
      return;
    }
    case 'time':
    case 'microtime': {
      if (t !== 'string') return typeError(ctx, loc, value, `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`);
      if (!validTime(value as string)) {
        const layout = scalar === 'time' ? '2006-01-02T15:04:05Z07:00' : '2006-01-02T15:04:05.000000Z07:00';
        typeError(ctx, loc, value, `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(value)} as RFC 3339`);
      }
      return;
    }
    case 'duration':
      if (t !== 'string') return typeError(ctx, loc, value, `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`);
      if (!DURATION.test(value as string)) typeError(ctx, loc, value, `time: invalid duration ${JSON.stringify(value)}`);
      return;
    case 'quantity':
      if ((t === 'string' && QUANTITY.test(value as string)) || (t === 'number' && Number.isFinite(value))) return;
      typeError(ctx, loc, value, QUANTITY_MESSAGE);
      return;
    case 'int-or-string':
      if (t === 'string') return;
      if (t === 'number' && Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX) return;
      typeError(ctx, loc, value, `json: cannot unmarshal ${t === 'number' ? `number ${String(value)}` : jsonKind(value)} into Go value of type int32`);
      return;
  }
}

/** The alternative of a union type whose JSON form matches the value's kind. */
function unionAlternative(schema: TypeSchema, value: unknown): FieldType | undefined {
  for (const f of schema.fields) {
    const ft = f.type;
    if (Array.isArray(value) ? !isScalar(ft) && 'array' in ft : isObject(value) ? !isScalar(ft) && 'ref' in ft : ft === 'boolean' && typeof value === 'boolean') {
      return ft;
    }
  }
  return undefined;
}

function checkValue(ctx: Ctx, type: FieldType, value: unknown, loc: Loc): void {
  if (value === null || value === undefined) {
    ctx.result.nulls = true;
    return; // null leaves the field unset, as Go's decoder does
  }
  if (isScalar(type)) return checkScalar(ctx, type, value, loc, type);
  if ('array' in type) {
    if (!Array.isArray(value)) return mismatch(ctx, loc, value, type);
    value.forEach((item, i) => checkValue(ctx, type.array, item, { up: loc, step: i, how: 'index', struct: loc.struct }));
    return;
  }
  if ('map' in type) {
    if (!isObject(value)) return mismatch(ctx, loc, value, type);
    for (const [k, v] of Object.entries(value)) checkValue(ctx, type.map, v, { up: loc, step: k, how: 'entry', struct: loc.struct });
    return;
  }
  const schema = typeSchema(type.ref)!;
  if (schema.scalar) return checkScalar(ctx, schema.scalar, value, loc, type);
  if (schema.items) {
    if (!Array.isArray(value)) return mismatch(ctx, loc, value, type);
    value.forEach((item, i) => checkValue(ctx, schema.items!, item, { up: loc, step: i, how: 'index', struct: loc.struct }));
    return;
  }
  if (schema.union) {
    const alt = unionAlternative(schema, value);
    if (!alt) return mismatch(ctx, loc, value, type);
    return checkValue(ctx, alt, value, loc);
  }
  if (!isObject(value)) return mismatch(ctx, loc, value, type);
  checkStruct(ctx, schema, value, loc);
}

function checkStruct(ctx: Ctx, schema: TypeSchema, obj: Record<string, unknown>, loc: Loc): void {
  const fields = jsonFields(schema);
  const struct = shortTypeName(schema.name);
  for (const [key, value] of Object.entries(obj)) {
    const field = fields.get(key);
    const at: Loc = { up: loc, step: key, how: 'field', struct };
    if (!field) ctx.result.unknown.push(`.${pathOf(at)}`);
    else checkValue(ctx, field.type, value, at);
  }
}

/**
 * Walks a decoded JSON object against the schema of its kind: reports unknown fields
 * (for fieldValidation Strict/Warn) and values upstream's JSON decoding would reject
 * (a 400 BadRequest). `null` is accepted anywhere (it leaves the field unset); `raw`
 * fields accept any JSON. Throws when the kind has no schema.
 */
export function checkFields(obj: unknown, group: string, version: string, kind: string): FieldCheckResult {
  const schema = schemaForKind(group, version, kind);
  if (!schema) throw new Error(`no schema for kind ${kind} in ${group ? `${group}/` : ''}${version}`);
  const ctx: Ctx = { result: { unknown: [], typeErrors: [], nulls: false } };
  checkValue(ctx, { ref: schema.name }, obj, ROOT);
  return ctx.result;
}

/** The zero value Go's decoder leaves for `null` where a value of `type` is required (a list item, a map value). */
function zeroValue(type: FieldType): unknown {
  if (isScalar(type)) {
    switch (type) {
      case 'string':
      case 'bytes':
      case 'duration':
        return '';
      case 'boolean':
        return false;
      case 'int32':
      case 'int64':
      case 'double':
      case 'int-or-string':
        return 0;
      default:
        return null; // time, quantity, raw: Go keeps them as "unset"
    }
  }
  if ('array' in type || 'map' in type) return null;
  const schema = typeSchema(type.ref)!;
  if (schema.scalar) return zeroValue(schema.scalar);
  return schema.items || schema.union ? null : {};
}

function normalizeValue(type: FieldType, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  const items = (t: FieldType, list: unknown[]) => list.map((item) => (item === null ? zeroValue(t) : normalizeValue(t, item)));
  if (isScalar(type)) return value;
  if ('array' in type) return Array.isArray(value) ? items(type.array, value) : value;
  if ('map' in type) {
    if (!isObject(value)) return value;
    for (const [k, v] of Object.entries(value)) value[k] = v === null ? zeroValue(type.map) : normalizeValue(type.map, v);
    return value;
  }
  const schema = typeSchema(type.ref)!;
  if (schema.scalar) return value;
  if (schema.items) return Array.isArray(value) ? items(schema.items, value) : value;
  if (schema.union) {
    const alt = unionAlternative(schema, value);
    return alt ? normalizeValue(alt, value) : value;
  }
  if (!isObject(value)) return value;
  const fields = jsonFields(schema);
  for (const [key, v] of Object.entries(value)) {
    const field = fields.get(key);
    if (!field) continue;
    if (v === null) delete value[key];
    else value[key] = normalizeValue(field.type, v);
  }
  return value;
}

/**
 * Gives a decoded object (already accepted by checkFields) the shape Go's typed decoding
 * leaves, so no later code meets a `null` the schema does not allow: a `null` field is dropped
 * (unset), a `null` list item or map value becomes the zero value of its type (`{}` for a
 * struct, `""`, `0`, `false`), as in upstream where `taints: [null]` decodes to one empty Taint
 * (which validation then reports). `raw` fields and unknown fields are left as they are.
 * Mutates `obj` in place and returns it.
 */
export function normalizeNulls<T>(obj: T, group: string, version: string, kind: string): T {
  const schema = schemaForKind(group, version, kind);
  if (schema && isObject(obj)) normalizeValue({ ref: schema.name }, obj);
  return obj;
}
