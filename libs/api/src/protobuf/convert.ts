import { formatMicroTime, formatTime, parseMicroTime, parseTime } from '@orch/apimachinery';
import { isScalar, type FieldSchema, type FieldType, type ScalarType, type TypeSchema } from '../schemas/model';
import { isEmptyValue, omittedWhenEmpty } from '../schemas/omit-empty';
import { typeSchema } from '../schemas/registry';
import { formatGoDuration, parseGoDuration } from '@orch/apimachinery';
import { protoFieldName } from './types';

// Converters between the JSON form of a value and the plain objects protobufjs encodes
// (and the messages it decodes), compiled once per named type from the schema source.
//
// Presence follows the wire: a field is written when the JSON has it (not null), and a
// decoded field is emitted when it was on the wire, so JSON → protobuf → JSON is the
// identity for objects without Go-omitted values. Upstream (gogo) encoders also write the
// zero values of non-pointer fields (`stdin: false`, `generation: 0`); on decode those of
// `omitempty` fields are dropped, as Go's JSON encoding of the decoded struct does
// (omittedWhenEmpty), and so are empty lists and maps and zero times. A pointer field's
// zero value (`replicas: 0`, `storageClassName: ""`) stays.

/** A JSON value could not be converted to or from its protobuf form. */
export class ProtobufError extends Error {
  constructor(
    readonly detail: string,
    /** JSON path of the offending value (`spec.containers[0].ports`), '' at the root. */
    readonly path = '',
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'ProtobufError';
  }
}

/** `err` (thrown while converting the value under `key`, a field name or `[i]`) with `key` prefixed to its path. */
function within(err: unknown, key: string): ProtobufError {
  if (!(err instanceof ProtobufError)) return new ProtobufError(err instanceof Error ? err.message : String(err), key);
  const path = err.path === '' ? key : err.path.startsWith('[') ? `${key}${err.path}` : `${key}.${err.path}`;
  return new ProtobufError(err.detail, path);
}

type Json = Record<string, unknown>;
type Encode = (value: unknown) => unknown;
/** Returns undefined to leave the JSON field out. */
type Decode = (message: unknown) => unknown;

/** Decodes an embedded protobuf object (a RawExtension holding `k8s\0` + Unknown); set by the envelope. */
let decodeEmbedded: (raw: Uint8Array) => unknown = () => {
  throw new ProtobufError('embedded protobuf objects are not supported');
};

export function setEmbeddedDecoder(fn: (raw: Uint8Array) => unknown): void {
  decodeEmbedded = fn;
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasOwn(m: unknown, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(m, key);
}

function fail(message: string): never {
  throw new ProtobufError(message);
}

/** An int64 as protobufjs decodes it (a Long when the `long` package is present). */
function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : (v as { toNumber(): number }).toNumber();
}

// ---------------------------------------------------------------- scalars

function expect(kind: string, ok: boolean): void {
  if (!ok) fail(`expected ${kind}`);
}

const SCALAR_ENCODERS: Record<ScalarType, Encode> = {
  string: (v) => (expect('a string', typeof v === 'string'), v),
  boolean: (v) => (expect('a boolean', typeof v === 'boolean'), v),
  int32: (v) => (expect('an integer', Number.isInteger(v)), v),
  int64: (v) => (expect('an integer', Number.isInteger(v)), v),
  double: (v) => (expect('a number', typeof v === 'number'), v),
  bytes: (v) => (expect('a base64 string', typeof v === 'string'), Buffer.from(v as string, 'base64')),
  time: (v) => {
    expect('an RFC 3339 time', typeof v === 'string');
    return { seconds: Math.floor(epochMs(v as string) / 1000), nanos: 0 };
  },
  microtime: (v) => {
    expect('an RFC 3339 time', typeof v === 'string');
    const micros = /\.\d{6}(Z|[+-])/.test(v as string) ? parseMicroTime(v as string) : epochMs(v as string) * 1000;
    const seconds = Math.floor(micros / 1e6);
    return { seconds, nanos: (micros - seconds * 1e6) * 1000 };
  },
  duration: (v) => (expect('a duration', typeof v === 'string'), { duration: parseGoDuration(v as string).toString() }),
  quantity: (v) => (expect('a quantity', typeof v === 'string' || typeof v === 'number'), { string: String(v) }),
  'int-or-string': (v) => {
    if (typeof v === 'string') return { type: 1, intVal: 0, strVal: v };
    expect('an integer or a string', Number.isInteger(v));
    return { type: 0, intVal: v, strVal: '' };
  },
  raw: (v) => ({ raw: Buffer.from(JSON.stringify(v)) }),
};

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The decimal number in s[at, at+n), or -1 when a character is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Epoch milliseconds of an RFC 3339 time. The form the API writes (`2024-01-02T03:04:05Z`)
 * is parsed here without allocations; any other form, and errors, go through parseTime.
 */
function epochMs(s: string): number {
  if (s.length === 20 && s[4] === '-' && s[7] === '-' && s[10] === 'T' && s[13] === ':' && s[16] === ':' && s[19] === 'Z') {
    const year = digits(s, 0, 4);
    const month = digits(s, 5, 2);
    const day = digits(s, 8, 2);
    const hour = digits(s, 11, 2);
    const minute = digits(s, 14, 2);
    const second = digits(s, 17, 2);
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
    if (year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= days && hour >= 0 && hour < 24 && minute >= 0 && minute < 60 && second >= 0 && second < 60) {
      return Date.UTC(year, month - 1, day, hour, minute, second);
    }
  }
  return parseTime(s);
}

function base64(v: unknown): string {
  return Buffer.from(v as Uint8Array).toString('base64');
}

function decodeRaw(raw: Uint8Array): unknown {
  if (raw.length >= 4 && MAGIC.every((b, i) => raw[i] === b)) return decodeEmbedded(raw);
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    return fail('RawExtension holds neither JSON nor a protobuf object');
  }
}

const SCALAR_DECODERS: Record<ScalarType, Decode> = {
  string: (v) => v,
  boolean: (v) => v,
  int32: (v) => v,
  int64: toNumber,
  double: (v) => v,
  bytes: base64,
  // Upstream writes a zero Time as an empty message: leave it out.
  time: (m) => (hasOwn(m, 'seconds') || hasOwn(m, 'nanos') ? formatTime(toNumber((m as Json).seconds) * 1000) : undefined),
  microtime: (m) =>
    hasOwn(m, 'seconds') || hasOwn(m, 'nanos')
      ? formatMicroTime(toNumber((m as Json).seconds) * 1e6 + Math.floor(((m as Json).nanos as number) / 1000))
      : undefined,
  duration: (m) => formatGoDuration(BigInt(String((m as Json).duration))),
  quantity: (m) => ((m as Json).string as string) || '0',
  'int-or-string': (m) => (toNumber((m as Json).type) === 1 ? (m as Json).strVal : (m as Json).intVal),
  raw: (m) => {
    const raw = (m as Json).raw as Uint8Array;
    return raw.length === 0 ? undefined : decodeRaw(raw);
  },
};

/** The zero value of a list element written for a JSON null (upstream decodes null items as zero values). */
function zeroElement(t: FieldType): unknown {
  if (!isScalar(t)) return {};
  switch (t) {
    case 'string':
      return '';
    case 'boolean':
      return false;
    case 'int32':
    case 'int64':
    case 'double':
      return 0;
    case 'bytes':
      return Buffer.alloc(0);
    default:
      return {};
  }
}

// ---------------------------------------------------------------- compiled converters

const encoders = new Map<string, Encode>();
const decoders = new Map<string, Decode>();

function encoderOf(t: FieldType): Encode {
  if (isScalar(t)) return SCALAR_ENCODERS[t];
  if ('array' in t) {
    const item = encoderOf(t.array);
    const zero = zeroElement(t.array);
    return (v) => {
      if (!Array.isArray(v)) fail('expected a list');
      return v.map((x, i) => {
        try {
          return x === null ? zero : item(x);
        } catch (err) {
          throw within(err, `[${i}]`);
        }
      });
    };
  }
  if ('map' in t) {
    const value = encoderOf(t.map);
    return (v) => {
      if (!isObject(v)) fail('expected an object');
      const out: Json = {};
      for (const k in v) {
        if (v[k] === null || v[k] === undefined) continue;
        try {
          out[k] = value(v[k]);
        } catch (err) {
          throw within(err, k);
        }
      }
      return out;
    };
  }
  return namedEncoder(t.ref);
}

function decoderOf(t: FieldType): Decode {
  if (isScalar(t)) return SCALAR_DECODERS[t];
  if ('array' in t) {
    const item = decoderOf(t.array);
    return (v) => (v as unknown[]).map((x) => item(x) ?? null);
  }
  if ('map' in t) {
    const value = decoderOf(t.map);
    return (v) => {
      const out: Json = {};
      for (const k in v as Json) out[k] = value((v as Json)[k]) ?? null;
      return out;
    };
  }
  return namedDecoder(t.ref);
}

function namedEncoder(name: string): Encode {
  let enc = encoders.get(name);
  if (enc) return enc;
  let impl: Encode | undefined;
  enc = (v) => impl!(v); // recursive types (JSONSchemaProps) refer to themselves
  encoders.set(name, enc);
  const schema = typeSchema(name)!;
  if (schema.scalar) impl = SCALAR_ENCODERS[schema.scalar];
  else if (schema.items) {
    const items = encoderOf({ array: schema.items });
    impl = (v) => ({ items: items(v) });
  } else if (schema.union) impl = unionEncoder(schema);
  else impl = structEncoder(schema);
  return enc;
}

function namedDecoder(name: string): Decode {
  let dec = decoders.get(name);
  if (dec) return dec;
  let impl: Decode | undefined;
  dec = (m) => impl!(m);
  decoders.set(name, dec);
  const schema = typeSchema(name)!;
  if (schema.scalar) impl = SCALAR_DECODERS[schema.scalar];
  else if (schema.items) {
    const items = decoderOf({ array: schema.items });
    impl = (m) => items((m as Json).items);
  } else if (schema.union) impl = unionDecoder(schema);
  else impl = structDecoder(schema);
  return dec;
}

interface Plan {
  json: string;
  proto: string;
  /** How presence is seen on a decoded message. */
  shape: 'single' | 'list' | 'map';
  inline: boolean;
  encode: Encode;
  decode: Decode;
}

function shapeOf(t: FieldType): Plan['shape'] {
  return isScalar(t) || 'ref' in t ? 'single' : 'array' in t ? 'list' : 'map';
}

/** Field-level decoding: the empty value of an `omitempty` non-pointer field is left out. */
function fieldDecoder(f: FieldSchema): Decode {
  const dec = decoderOf(f.type);
  if (!omittedWhenEmpty(f)) return dec;
  return (v) => {
    const d = dec(v);
    return isEmptyValue(f.type, d) ? undefined : d;
  };
}

function plans(schema: TypeSchema): Plan[] {
  return schema.fields
    .filter((f) => f.proto > 0)
    .map((f) => ({
      json: f.name,
      proto: protoFieldName(f.name),
      shape: shapeOf(f.type),
      inline: !!f.inline,
      encode: encoderOf(f.type),
      decode: fieldDecoder(f),
    }));
}

function structEncoder(schema: TypeSchema): Encode {
  const fields = plans(schema);
  return (v) => {
    if (!isObject(v)) fail('expected an object');
    const out: Json = {};
    for (const p of fields) {
      // An inline (embedded) struct reads its fields from this same JSON object.
      if (p.inline) out[p.proto] = p.encode(v);
      else {
        const x = v[p.json];
        if (x === undefined || x === null) continue;
        try {
          out[p.proto] = p.encode(x);
        } catch (err) {
          throw within(err, p.json);
        }
      }
    }
    return out;
  };
}

function structDecoder(schema: TypeSchema): Decode {
  const fields = plans(schema);
  // A list kind's items are always present in JSON, as `[]` when empty.
  const listItems = schema.kind ? fields.find((p) => p.json === 'items' && p.shape === 'list') : undefined;
  return (m) => {
    const out: Json = {};
    for (const p of fields) {
      const x = (m as Json)[p.proto];
      if (p.shape === 'list' ? (x as unknown[]).length === 0 : p.shape === 'map' ? Object.keys(x as Json).length === 0 : !hasOwn(m, p.proto)) {
        if (p === listItems) out[p.json] = [];
        continue;
      }
      const d = p.decode(x);
      if (d === undefined) continue;
      if (p.inline) Object.assign(out, d);
      else out[p.json] = d;
    }
    return out;
  };
}

/** JSONSchemaPropsOr{Array,Bool,StringArray}: the JSON kind of the value picks the field. */
function unionEncoder(schema: TypeSchema): Encode {
  const alt = alternatives(schema);
  return (v) => {
    if (Array.isArray(v) && alt.list) return { [alt.list.proto]: alt.list.encode(v) };
    if (isObject(v) && alt.object) {
      // Upstream sets Allows alongside a schema (JSONSchemaPropsOrBool).
      return alt.bool ? { [alt.object.proto]: alt.object.encode(v), [alt.bool.proto]: true } : { [alt.object.proto]: alt.object.encode(v) };
    }
    if (typeof v === 'boolean' && alt.bool) return { [alt.bool.proto]: v };
    return fail(`expected ${[alt.object && 'an object', alt.list && 'a list', alt.bool && 'a boolean'].filter(Boolean).join(' or ')}`);
  };
}

function unionDecoder(schema: TypeSchema): Decode {
  const alt = alternatives(schema);
  return (m) => {
    const msg = m as Json;
    if (alt.object && hasOwn(msg, alt.object.proto)) return alt.object.decode(msg[alt.object.proto]);
    if (alt.list && (msg[alt.list.proto] as unknown[]).length > 0) return alt.list.decode(msg[alt.list.proto]);
    return alt.bool ? msg[alt.bool.proto] === true : undefined;
  };
}

function alternatives(schema: TypeSchema): { object?: Plan; list?: Plan; bool?: Plan } {
  const ps = plans(schema);
  const of = (pred: (t: FieldType) => boolean) => ps.find((p) => pred(schema.fields.find((f) => f.name === p.json)!.type));
  return {
    object: of((t) => !isScalar(t) && 'ref' in t),
    list: of((t) => !isScalar(t) && 'array' in t),
    bool: of((t) => t === 'boolean'),
  };
}

/** The plain object protobufjs encodes for `value`, the JSON form of the named type `name`. */
export function toProtoObject(name: string, value: unknown): Json {
  return namedEncoder(name)(value) as Json;
}

/** The JSON form of a decoded message of the named type `name`. */
export function fromProtoMessage(name: string, message: unknown): Json {
  return namedDecoder(name)(message) as Json;
}
