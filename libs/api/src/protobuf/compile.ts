import { formatGoDuration, formatMicroTime, formatTime, parseGoDuration, parseMicroTime, parseTime } from '@orch/apimachinery';
import { isScalar, type FieldSchema, type FieldType, type ScalarType, type TypeSchema } from '../schemas/model';
import { omittedWhenEmpty } from '../schemas/omit-empty';
import { typeSchema } from '../schemas/registry';
import { Reader, type Writer } from './wire';

// Per-type protobuf codecs compiled from the schema source: for every named type one generated
// encoder, which writes the JSON form of a value straight to the wire (upstream field numbers,
// field-number order), and one generated decoder, which reads the wire straight to the JSON
// form. Nothing walks the schema per object; no intermediate message objects are built.
//
// Presence follows the wire: a field is written when the JSON has it (not null), and a
// decoded field is emitted when it was on the wire, so JSON → protobuf → JSON is the
// identity for objects without Go-omitted values. Upstream (gogo) encoders also write the
// zero values of non-pointer fields (`stdin: false`, `generation: 0`); on decode those of
// `omitempty` fields are dropped, as Go's JSON encoding of the decoded struct does
// (omittedWhenEmpty), and so are empty lists and maps and zero times. A pointer field's
// zero value (`replicas: 0`, `storageClassName: ""`) stays. Decoded objects have their keys
// in the schema's (Go struct) order, whatever the order on the wire.
//
// Scalars with a message form: Time and MicroTime {seconds=1 int64, nanos=2 int32}, Duration
// {duration=1 int64}, Quantity {string=1}, IntOrString {type=1 int64, intVal=2 int32,
// strVal=3}, RawExtension {raw=1 bytes: JSON text, or an embedded `k8s\0` protobuf object}.

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

/** Writes the fields of a value's message (not its tag or length). Throws ProtobufError for values that do not fit. */
export type MessageEncoder = (value: unknown, w: Writer) => void;
/** Reads a message ending at `end` to its JSON form (undefined: the JSON field is left out). */
export type MessageDecoder = (r: Reader, end: number) => unknown;

/** Whether the type has a protobuf message (Table and its parts have none upstream). */
export function hasProtobuf(schema: TypeSchema): boolean {
  return schema.fields.some((f) => f.proto > 0);
}

type Json = Record<string, unknown>;

// ---------------------------------------------------------------- runtime helpers of generated code

function fail(message: string): never {
  throw new ProtobufError(message);
}

/** `err` (thrown while converting the value under `key`, a field name or `[i]`) with `key` prefixed to its path. */
function within(err: unknown, key: string): ProtobufError {
  if (!(err instanceof ProtobufError)) return new ProtobufError(err instanceof Error ? err.message : String(err), key);
  const path = err.path === '' ? key : err.path.startsWith('[') ? `${key}${err.path}` : `${key}.${err.path}`;
  return new ProtobufError(err.detail, path);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Decodes an embedded protobuf object (a RawExtension holding `k8s\0` + Unknown); set by the envelope. */
let decodeEmbedded: (raw: Buffer) => unknown = () => {
  throw new ProtobufError('embedded protobuf objects are not supported');
};

export function setEmbeddedDecoder(fn: (raw: Buffer) => unknown): void {
  decodeEmbedded = fn;
}

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

/** Recently formatted times by epoch second (objects of one list share many timestamps). */
const timeTexts = new Map<number, string>();

function timeText(seconds: number): string {
  let s = timeTexts.get(seconds);
  if (s === undefined) {
    if (timeTexts.size >= 4096) timeTexts.clear();
    s = formatTime(seconds * 1000);
    timeTexts.set(seconds, s);
  }
  return s;
}

function expect(kind: string, ok: boolean): void {
  if (!ok) fail(`expected ${kind}`);
}

/** Writers of the message bodies of the scalars with a message form. */
const SCALAR_WRITERS = {
  time(w: Writer, v: unknown): void {
    expect('an RFC 3339 time', typeof v === 'string');
    w.uint32(8);
    w.int64(Math.floor(epochMs(v as string) / 1000));
    w.uint32(16);
    w.uint32(0);
  },
  microtime(w: Writer, v: unknown): void {
    expect('an RFC 3339 time', typeof v === 'string');
    const micros = /\.\d{6}(Z|[+-])/.test(v as string) ? parseMicroTime(v as string) : epochMs(v as string) * 1000;
    const seconds = Math.floor(micros / 1e6);
    w.uint32(8);
    w.int64(seconds);
    w.uint32(16);
    w.int32((micros - seconds * 1e6) * 1000);
  },
  duration(w: Writer, v: unknown): void {
    expect('a duration', typeof v === 'string');
    w.uint32(8);
    w.bigint64(parseGoDuration(v as string));
  },
  quantity(w: Writer, v: unknown): void {
    expect('a quantity', typeof v === 'string' || typeof v === 'number');
    w.uint32(10);
    w.string(String(v));
  },
  'int-or-string'(w: Writer, v: unknown): void {
    const isString = typeof v === 'string';
    if (!isString) expect('an integer or a string', Number.isInteger(v));
    w.uint32(8);
    w.uint32(isString ? 1 : 0);
    w.uint32(16);
    w.int32(isString ? 0 : (v as number));
    w.uint32(26);
    w.string(isString ? v : '');
  },
  raw(w: Writer, v: unknown): void {
    w.uint32(10);
    w.string(JSON.stringify(v));
  },
};

/** Readers of the scalars with a message form: the JSON value, or undefined to leave the field out. */
const SCALAR_READERS = {
  time(r: Reader, end: number): string | undefined {
    let seconds: number | undefined;
    let present = false;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 8) seconds = r.int64();
      else if (tag === 16) r.int32();
      else r.skip(tag & 7);
      present = true;
    }
    r.expectEnd(end);
    // Upstream writes a zero Time as an empty message: leave it out.
    return present ? timeText(seconds ?? 0) : undefined;
  },
  microtime(r: Reader, end: number): string | undefined {
    let seconds = 0;
    let nanos = 0;
    let present = false;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 8) seconds = r.int64();
      else if (tag === 16) nanos = r.int32();
      else r.skip(tag & 7);
      present = true;
    }
    r.expectEnd(end);
    return present ? formatMicroTime(seconds * 1e6 + Math.floor(nanos / 1000)) : undefined;
  },
  duration(r: Reader, end: number): string {
    let nanos = 0n;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 8) nanos = r.bigint64();
      else r.skip(tag & 7);
    }
    r.expectEnd(end);
    return formatGoDuration(nanos);
  },
  quantity(r: Reader, end: number): string {
    let s = '';
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 10) s = r.string();
      else r.skip(tag & 7);
    }
    r.expectEnd(end);
    return s || '0';
  },
  'int-or-string'(r: Reader, end: number): string | number {
    let type = 0;
    let intVal = 0;
    let strVal = '';
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 8) type = r.int64();
      else if (tag === 16) intVal = r.int32();
      else if (tag === 26) strVal = r.string();
      else r.skip(tag & 7);
    }
    r.expectEnd(end);
    return type === 1 ? strVal : intVal;
  },
  raw(r: Reader, end: number): unknown {
    let raw: Buffer | undefined;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 10) raw = r.bytes();
      else r.skip(tag & 7);
    }
    r.expectEnd(end);
    if (!raw || raw.length === 0) return undefined;
    if (raw.length >= 4 && raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0x00) return decodeEmbedded(raw);
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      return fail('RawExtension holds neither JSON nor a protobuf object');
    }
  },
};

type MessageScalar = keyof typeof SCALAR_WRITERS;

/**
 * Primitive scalars: wire type, Writer and Reader methods, the JSON type check (of `x`), the
 * zero value written for a null list element, and the JSON value of a map entry without one.
 */
const PRIMITIVES: Readonly<Partial<Record<ScalarType, { wire: number; write: string; read: string; check: string; zero: string; jsonZero: string }>>> = {
  string: { wire: 2, write: 'string', read: 'string', check: `typeof x !== 'string' && h.fail('expected a string')`, zero: `''`, jsonZero: `''` },
  boolean: { wire: 0, write: 'bool', read: 'bool', check: `typeof x !== 'boolean' && h.fail('expected a boolean')`, zero: 'false', jsonZero: 'false' },
  int32: { wire: 0, write: 'int32', read: 'int32', check: `Number.isInteger(x) || h.fail('expected an integer')`, zero: '0', jsonZero: '0' },
  int64: { wire: 0, write: 'int64', read: 'int64', check: `Number.isInteger(x) || h.fail('expected an integer')`, zero: '0', jsonZero: '0' },
  double: { wire: 1, write: 'double', read: 'double', check: `typeof x !== 'number' && h.fail('expected a number')`, zero: '0', jsonZero: '0' },
  bytes: { wire: 2, write: 'bytes', read: 'base64', check: `typeof x !== 'string' && h.fail('expected a base64 string')`, zero: 'h.EMPTY', jsonZero: `''` },
};

const helpers = {
  fail,
  within,
  isObject,
  fromBase64: (s: string) => Buffer.from(s, 'base64'),
  EMPTY: Buffer.alloc(0),
  sw: SCALAR_WRITERS,
  sr: SCALAR_READERS,
  /** Compiled encoders and decoders by type index (filled as types are compiled; generated code reads them at call time). */
  E: [] as MessageEncoder[],
  D: [] as MessageDecoder[],
};

// ---------------------------------------------------------------- code generation

const indexes = new Map<string, number>();

/** The index of a named type's compiled codec, compiling it (and what it references) first. */
function compiled(name: string): number {
  let i = indexes.get(name);
  if (i !== undefined) return i;
  i = helpers.E.length;
  indexes.set(name, i);
  // Placeholders let recursive types (JSONSchemaProps) refer to themselves while compiling.
  helpers.E.push(() => fail(`${name} is being compiled`));
  helpers.D.push(() => fail(`${name} is being compiled`));
  const schema = typeSchema(name);
  if (!schema) throw new Error(`protobuf: no schema for ${name}`);
  const g = new Generator(schema);
  helpers.E[i] = g.encoder();
  helpers.D[i] = g.decoder();
  return i;
}

/** The compiled encoder of a named type's message. */
export function messageEncoder(name: string): MessageEncoder {
  return helpers.E[compiled(name)];
}

/** The compiled decoder of a named type's message. */
export function messageDecoder(name: string): MessageDecoder {
  return helpers.D[compiled(name)];
}

/** A JavaScript property access for a JSON name. */
function prop(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function scalarMessage(t: FieldType): MessageScalar | undefined {
  if (isScalar(t)) return PRIMITIVES[t] ? undefined : (t as MessageScalar);
  if ('ref' in t) return typeSchema(t.ref)?.scalar as MessageScalar | undefined;
  return undefined;
}

/** Generates the encoder and decoder source of one named type. */
class Generator {
  private vars = 0;
  private readonly fields: readonly FieldSchema[];

  constructor(private readonly schema: TypeSchema) {
    this.fields = schema.fields.filter((f) => f.proto > 0);
  }

  private tmp(prefix: string): string {
    return `${prefix}${this.vars++}`;
  }

  private build<T>(body: string): T {
    return new Function('h', `"use strict"; const E = h.E, D = h.D; return ${body};`)(helpers) as T;
  }

  // -------------------------------------------------------------- encode

  encoder(): MessageEncoder {
    const s = this.schema;
    if (s.scalar) return SCALAR_WRITERS[s.scalar as MessageScalar] as MessageEncoder;
    if (s.items) {
      const items = this.fieldOf('items');
      return this.build(`function (v, w) { const x = v; ${this.writeArray(s.items, 'x', items.proto)} }`);
    }
    if (s.union) return this.build(`function (v, w) { ${this.writeUnion()} }`);
    const byNumber = [...this.fields].sort((a, b) => a.proto - b.proto);
    const parts = byNumber.map((f) => {
      if (f.inline) {
        // An inline (embedded) struct reads its fields from this same JSON object.
        return `w.uint32(${(f.proto << 3) | 2}); w.fork(); E[${compiled(refName(f.type))}](v, w); w.ldelim();`;
      }
      return `x = v${prop(f.name)}; if (x !== undefined && x !== null) { try { ${this.writeValue(f.type, 'x', f.proto)} } catch (e) { throw h.within(e, ${JSON.stringify(f.name)}); } }`;
    });
    return this.build(`function (v, w) { if (!h.isObject(v)) h.fail('expected an object'); let x; ${parts.join('\n')} }`);
  }

  private fieldOf(name: string): FieldSchema {
    const f = this.fields.find((x) => x.name === name);
    if (!f) throw new Error(`protobuf: ${this.schema.name} has no field ${name}`);
    return f;
  }

  /** Code writing the non-null value `x` of type `t` as field `n` (tag included). */
  private writeValue(t: FieldType, x: string, n: number): string {
    if (!isScalar(t) && 'array' in t) return this.writeArray(t.array, x, n);
    if (!isScalar(t) && 'map' in t) return this.writeMap(t.map, x, n);
    return this.writeSingle(t, x, n);
  }

  /** Code writing one non-null element (a scalar or named type) as field `n`. */
  private writeSingle(t: FieldType, x: string, n: number): string {
    if (isScalar(t)) {
      const p = PRIMITIVES[t];
      if (p) {
        const value = t === 'bytes' ? `h.fromBase64(${x})` : x;
        return `${p.check.replace(/\bx\b/g, x)}; w.uint32(${(n << 3) | p.wire}); w.${p.write}(${value});`;
      }
    }
    const scalar = scalarMessage(t);
    if (scalar) return `w.uint32(${(n << 3) | 2}); w.fork(); h.sw[${JSON.stringify(scalar)}](w, ${x}); w.ldelim();`;
    if (!isScalar(t) && 'ref' in t) {
      return `w.uint32(${(n << 3) | 2}); w.fork(); E[${compiled(t.ref)}](${x}, w); w.ldelim();`;
    }
    throw new Error(`protobuf: nested list or map element ${JSON.stringify(t)} has no upstream encoding`);
  }

  /** Code writing the zero value of an element type as field `n` (a null list element: Go decodes it as the zero value). */
  private writeZero(t: FieldType, n: number): string {
    const p = isScalar(t) ? PRIMITIVES[t] : undefined;
    if (p) return `w.uint32(${(n << 3) | p.wire}); w.${p.write}(${p.zero});`;
    return `w.uint32(${(n << 3) | 2}); w.uint32(0);`;
  }

  private writeArray(item: FieldType, x: string, n: number): string {
    const i = this.tmp('i');
    const y = this.tmp('y');
    return `if (!Array.isArray(${x})) h.fail('expected a list');
      for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {
        const ${y} = ${x}[${i}];
        try { if (${y} === null) { ${this.writeZero(item, n)} } else { ${this.writeSingle(item, y, n)} } }
        catch (e) { throw h.within(e, '[' + ${i} + ']'); }
      }`;
  }

  private writeMap(value: FieldType, x: string, n: number): string {
    const k = this.tmp('k');
    const y = this.tmp('y');
    return `if (!h.isObject(${x})) h.fail('expected an object');
      for (const ${k} in ${x}) {
        const ${y} = ${x}[${k}];
        if (${y} === null || ${y} === undefined) continue;
        try { w.uint32(${(n << 3) | 2}); w.fork(); w.uint32(10); w.string(${k}); ${this.writeSingle(value, y, 2)} w.ldelim(); }
        catch (e) { throw h.within(e, ${k}); }
      }`;
  }

  /** JSONSchemaPropsOr{Array,Bool,StringArray}: the JSON kind of the value picks the field. */
  private writeUnion(): string {
    const alt = this.alternatives();
    const expected = [alt.object && 'an object', alt.list && 'a list', alt.bool && 'a boolean'].filter(Boolean).join(' or ');
    const code: string[] = [];
    if (alt.list) code.push(`if (Array.isArray(v)) { const x = v; ${this.writeArray((alt.list.type as { array: FieldType }).array, 'x', alt.list.proto)} return; }`);
    if (alt.object) {
      // Upstream sets Allows alongside a schema (JSONSchemaPropsOrBool); fields in number order.
      const obj = this.writeSingle(alt.object.type, 'v', alt.object.proto);
      const allows = alt.bool ? `w.uint32(${(alt.bool.proto << 3) | 0}); w.bool(true);` : '';
      code.push(`if (h.isObject(v)) { ${alt.bool && alt.bool.proto < alt.object.proto ? allows + obj : obj + allows} return; }`);
    }
    if (alt.bool) code.push(`if (typeof v === 'boolean') { w.uint32(${(alt.bool.proto << 3) | 0}); w.bool(v); return; }`);
    code.push(`h.fail(${JSON.stringify(`expected ${expected}`)});`);
    return code.join('\n');
  }

  private alternatives(): { object?: FieldSchema; list?: FieldSchema; bool?: FieldSchema } {
    return {
      object: this.fields.find((f) => !isScalar(f.type) && 'ref' in f.type),
      list: this.fields.find((f) => !isScalar(f.type) && 'array' in f.type),
      bool: this.fields.find((f) => f.type === 'boolean'),
    };
  }

  // -------------------------------------------------------------- decode

  decoder(): MessageDecoder {
    const s = this.schema;
    if (s.scalar) return SCALAR_READERS[s.scalar as MessageScalar] as MessageDecoder;
    const locals = this.fields.map((_, i) => `f${i}`);
    const cases = this.fields.map((f, i) => this.readCases(f, `f${i}`)).join('\n');
    const loop = `${locals.length ? `let ${locals.join(', ')};` : ''}
      while (r.pos < end) {
        const t = r.uint32();
        switch (t) {
          ${cases}
          default: r.skip(t & 7);
        }
      }
      r.expectEnd(end);`;
    if (s.items) return this.build(`function (r, end) { ${loop} return f${this.fields.indexOf(this.fieldOf('items'))} ?? []; }`);
    if (s.union) return this.build(`function (r, end) { ${loop} ${this.unionResult()} }`);
    // A list kind's items are always present in JSON, as `[]` when empty.
    const listItems = s.kind ? this.fields.find((f) => f.name === 'items' && !isScalar(f.type) && 'array' in f.type) : undefined;
    const build = this.fields.map((f, i) => this.emitField(f, `f${i}`, f === listItems)).join('\n');
    return this.build(`function (r, end) { ${loop} const o = {}; ${build} return o; }`);
  }

  /** Switch cases reading field `f` into local `v`. */
  private readCases(f: FieldSchema, v: string): string {
    const t = f.type;
    const tag = (wire: number) => (f.proto << 3) | wire;
    if (!isScalar(t) && 'array' in t) {
      const p = isScalar(t.array) ? PRIMITIVES[t.array] : undefined;
      const one = `case ${tag(p ? p.wire : 2)}: { const y = ${this.readSingle(t.array)}; (${v} || (${v} = [])).push(y === undefined ? null : y); break; }`;
      // Packed encoding of numbers and booleans is accepted as any protobuf reader does.
      const packed = p && p.wire !== 2 ? `case ${tag(2)}: { const e = r.sub(); ${v} = ${v} || []; while (r.pos < e) ${v}.push(r.${p.read}()); r.expectEnd(e); break; }` : '';
      return one + packed;
    }
    if (!isScalar(t) && 'map' in t) {
      const p = isScalar(t.map) ? PRIMITIVES[t.map] : undefined;
      const valueTag = (2 << 3) | (p ? p.wire : 2);
      const missing = p ? p.jsonZero : `${this.decoderRef(t.map)}(r, r.pos)`;
      return `case ${tag(2)}: {
          const e = r.sub(); let k = ''; let y; let got = false;
          while (r.pos < e) { const t2 = r.uint32(); if (t2 === 10) k = r.string(); else if (t2 === ${valueTag}) { y = ${this.readSingle(t.map)}; got = true; } else r.skip(t2 & 7); }
          r.expectEnd(e);
          if (!got) y = ${missing};
          (${v} || (${v} = {}))[k] = y === undefined ? null : y;
          break;
        }`;
    }
    const p = isScalar(t) ? PRIMITIVES[t] : undefined;
    return `case ${tag(p ? p.wire : 2)}: ${v} = ${this.readSingle(t)}; break;`;
  }

  /** An expression reading one value (tag already read) to its JSON form (may be undefined). */
  private readSingle(t: FieldType): string {
    if (isScalar(t)) {
      const p = PRIMITIVES[t];
      if (p) return `r.${p.read}()`;
    }
    return `${this.decoderRef(t)}(r, r.sub())`;
  }

  private decoderRef(t: FieldType): string {
    const scalar = scalarMessage(t);
    if (scalar) return `h.sr[${JSON.stringify(scalar)}]`;
    if (!isScalar(t) && 'ref' in t) return `D[${compiled(t.ref)}]`;
    throw new Error(`protobuf: nested list or map element ${JSON.stringify(t)} has no upstream encoding`);
  }

  /** Code setting the JSON field of `f` on `o` from local `v`, in schema order. */
  private emitField(f: FieldSchema, v: string, listItems: boolean): string {
    const key = prop(f.name);
    const t = f.type;
    if (listItems) return `o${key} = ${v} === undefined ? [] : ${v};`;
    if (f.inline) return `if (${v} !== undefined) Object.assign(o, ${v});`;
    if (!isScalar(t) && 'array' in t) return `if (${v} !== undefined && ${v}.length > 0) o${key} = ${v};`;
    if (!isScalar(t) && 'map' in t) return `if (${v} !== undefined) o${key} = ${v};`;
    if (!omittedWhenEmpty(f)) return `if (${v} !== undefined) o${key} = ${v};`;
    // omitempty on a non-pointer field: Go's JSON encoding leaves its empty value out.
    const empty = emptyCheck(t, v);
    return empty ? `if (${v} !== undefined && !(${empty})) o${key} = ${v};` : `if (${v} !== undefined) o${key} = ${v};`;
  }

  private unionResult(): string {
    const alt = this.alternatives();
    const at = (f: FieldSchema) => `f${this.fields.indexOf(f)}`;
    const code: string[] = [];
    if (alt.object) code.push(`if (${at(alt.object)} !== undefined) return ${at(alt.object)};`);
    if (alt.list) code.push(`if (${at(alt.list)} !== undefined && ${at(alt.list)}.length > 0) return ${at(alt.list)};`);
    code.push(alt.bool ? `return ${at(alt.bool)} === true;` : 'return undefined;');
    return code.join('\n');
  }
}

/** An expression true when local `v` holds the empty value of type `t` (isEmptyValue), or '' when no value of it is empty. */
function emptyCheck(t: FieldType, v: string): string {
  if (isScalar(t)) {
    switch (t) {
      case 'string':
      case 'bytes':
        return `${v} === ''`;
      case 'boolean':
        return `${v} === false`;
      case 'int32':
      case 'int64':
      case 'double':
        return `${v} === 0`;
      default:
        return '';
    }
  }
  // A named list type (ExtraValue); structs and maps-as-structs are never empty.
  return 'ref' in t && typeSchema(t.ref)?.items !== undefined ? `${v}.length === 0` : '';
}

function refName(t: FieldType): string {
  if (isScalar(t) || !('ref' in t)) throw new Error(`protobuf: an inline field must name a struct type, not ${JSON.stringify(t)}`);
  return t.ref;
}
