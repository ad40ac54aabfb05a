// The SPEC type mapping from OpenAPI schemas to expression types ("Validation expressions",
// type mapping), the conversion of JSON values to expression values by schema, and the size
// bounds the cost estimator reads from a schema.

import { parseGoDuration } from '@orch/apimachinery';
import { CEL_RESERVED_WORDS, escapePropertyName } from './escaping';
import { project, type Projection } from './projection';
import { timestampText } from './timestamps';

/**
 * The subset of an OpenAPI v3 schema (CRD `openAPIV3Schema`, the gateway's published
 * components.schemas) that gives an expression its types. `$ref` is resolved through
 * {@link SchemaContext.resolveRef}; `allOf` members are merged.
 */
export interface CelSchema {
  readonly type?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, CelSchema>>;
  readonly additionalProperties?: CelSchema | boolean;
  readonly items?: CelSchema;
  readonly required?: readonly string[];
  readonly nullable?: boolean;
  readonly enum?: readonly unknown[];
  readonly maxItems?: number;
  readonly maxLength?: number;
  readonly maxProperties?: number;
  readonly $ref?: string;
  readonly allOf?: readonly CelSchema[];
  readonly oneOf?: readonly CelSchema[];
  readonly anyOf?: readonly CelSchema[];
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
}

export interface SchemaContext {
  /** Resolves a `$ref` (e.g. `#/components/schemas/io.orch.api.core.v1.PodSpec`). */
  readonly resolveRef?: (ref: string) => CelSchema | undefined;
}

/** The largest request body the gateway accepts: the bound of every unbounded size (upstream). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** Nesting beyond this depth (recursive schemas such as JSONSchemaProps) is typed `dyn`. */
const MAX_TYPE_DEPTH = 24;

/** What a schema node is, with `$ref` and `allOf` resolved. */
export type SchemaKind = 'object' | 'map' | 'list' | 'bool' | 'int' | 'double' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'int-or-string' | 'dyn';

/** Resolved nodes per context: schemas are immutable, so each node is resolved once per context. */
const resolvedNodes = new WeakMap<SchemaContext, WeakMap<CelSchema, CelSchema | undefined>>();

/**
 * Resolves `$ref` and merges `allOf` so the returned node describes the value itself
 * (memoized per schema node and context: the same node yields the same resolved node).
 */
export function resolveSchema(schema: CelSchema | undefined, ctx: SchemaContext = {}): CelSchema | undefined {
  if (!schema || (!schema.$ref && !schema.allOf?.length)) return schema;
  let memo = resolvedNodes.get(ctx);
  if (!memo) resolvedNodes.set(ctx, (memo = new WeakMap()));
  const hit = memo.get(schema);
  if (hit !== undefined || memo.has(schema)) return hit;
  const resolved = resolveUncached(schema, ctx);
  memo.set(schema, resolved);
  return resolved;
}

function resolveUncached(schema: CelSchema, ctx: SchemaContext): CelSchema | undefined {
  let s: CelSchema | undefined = schema;
  for (let hops = 0; s && hops < 16; hops++) {
    if (s.$ref) {
      const target: CelSchema | undefined = ctx.resolveRef?.(s.$ref);
      const { $ref: _ref, ...rest } = s;
      s = target ? { ...target, ...rest } : rest;
      continue;
    }
    if (s.allOf?.length) {
      const { allOf, ...rest } = s;
      let merged: CelSchema = {};
      for (const member of allOf) merged = { ...merged, ...(resolveSchema(member, ctx) ?? {}) };
      s = { ...merged, ...rest };
      continue;
    }
    return s;
  }
  return s;
}

/** The SPEC type mapping of one (resolved) schema node. */
export function schemaKind(schema: CelSchema | undefined): SchemaKind {
  if (!schema) return 'dyn';
  if (schema['x-kubernetes-int-or-string']) return 'int-or-string';
  switch (schema.type) {
    case 'object':
      if (schema.properties || schema['x-kubernetes-embedded-resource']) return 'object';
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') return 'map';
      return schema['x-kubernetes-preserve-unknown-fields'] ? 'dyn' : 'map';
    case 'array':
      return 'list';
    case 'boolean':
      return 'bool';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      if (schema.format === 'byte') return 'bytes';
      if (schema.format === 'date' || schema.format === 'date-time') return 'timestamp';
      if (schema.format === 'duration') return 'duration';
      return 'string';
    default:
      return 'dyn';
  }
}

/** The declared properties of an object node, embedded-resource fields included. */
export function objectProperties(schema: CelSchema): Readonly<Record<string, CelSchema>> {
  if (!schema['x-kubernetes-embedded-resource']) return schema.properties ?? {};
  return {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    ...schema.properties,
  };
}

/** The item/value schema of a list or map node. */
function elementSchema(schema: CelSchema): CelSchema | undefined {
  if (schema.type === 'array') return schema.items;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

// ---------------------------------------------------------------------------------------------
// Declared types (for type checking)

/** A message type the checker learns from an object schema: escaped field name → type name. */
export interface DeclaredObjectType {
  readonly name: string;
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * Computes the declared type of a schema as a type string of the expression engine
 * (`int`, `list<string>`, `map<string, T>`, a generated object type name, `dyn`), collecting
 * the object types it needs in dependency order (a type is listed after the types it uses).
 */
export class DeclaredTypes {
  readonly objectTypes: DeclaredObjectType[] = [];
  private readonly names = new Set<string>();
  /** One declared type per schema node (and per `$ref`), so `self == oldSelf` type-checks. */
  private readonly known = new Map<CelSchema | string, string>();

  constructor(private readonly ctx: SchemaContext = {}) {}

  typeOf(schema: CelSchema | undefined, name: string, depth = 0): string {
    if (!schema || depth > MAX_TYPE_DEPTH) return 'dyn';
    const key = schema.$ref ?? schema;
    const seen = this.known.get(key);
    if (seen !== undefined) return seen;
    const type = this.declare(resolveSchema(schema, this.ctx), name, depth);
    this.known.set(key, type);
    return type;
  }

  private declare(s: CelSchema | undefined, name: string, depth: number): string {
    switch (schemaKind(s)) {
      case 'object': {
        const fields: Record<string, string> = {};
        for (const [prop, propSchema] of Object.entries(objectProperties(s!))) {
          for (const ident of reachableNames(prop)) fields[ident] = this.typeOf(propSchema, `${name}.${ident}`, depth + 1);
        }
        const typeName = this.uniqueName(name);
        this.objectTypes.push({ name: typeName, fields });
        return typeName;
      }
      case 'map':
        return `map<string, ${this.typeOf(elementSchema(s!), `${name}.@value`, depth + 1)}>`;
      case 'list':
        return `list<${this.typeOf(s!.items, `${name}.@items`, depth + 1)}>`;
      case 'timestamp':
        return 'google.protobuf.Timestamp';
      case 'duration':
        return 'google.protobuf.Duration';
      case 'int-or-string':
        return 'dyn';
      default:
        return schemaKind(s);
    }
  }

  private uniqueName(path: string): string {
    const base = path.replace(/[^A-Za-z0-9_.]/g, '_').replace(/^[^A-Za-z_]/, 'T');
    let name = base;
    for (let i = 2; this.names.has(name); i++) name = `${base}_${i}`;
    this.names.add(name);
    return name;
  }
}

// ---------------------------------------------------------------------------------------------
// Values

/**
 * The engine's value types a converter builds. They are injected by the environment module so
 * this file stays free of the engine import (Duration, Timestamp construction).
 */
export interface ValueFactory {
  duration(nanos: bigint): unknown;
  timestamp(text: string): unknown;
}

/**
 * Converts JSON values to expression values by schema (SPEC type mapping): integers become
 * 64-bit ints, `format: byte` strings bytes, `date`/`date-time` timestamps, `duration`
 * durations; declared properties are reachable under their escaped names (undeclared ones
 * only where unknown fields are preserved); `x-kubernetes-list-type` set and map lists
 * compare without regard to order. Without a schema, whole numbers are ints (as upstream
 * decodes unstructured JSON) and nothing is escaped.
 *
 * One converter per request: values it builds from the same input compare equal across
 * calls (`self == oldSelf` on set and map lists interns their elements).
 */
export class CelValueConverter {
  /** Made on first use (most requests convert no set or map list). */
  private interned?: Map<string, unknown>;
  /**
   * The largest size among the values this converter has built (strings, bytes, lists, maps
   * and map keys, as cost.ts runtimeSize counts them; strings counted as given, before a
   * conversion to bytes, timestamps or durations): a bound of their sizes, see cost.ts
   * largestSize.
   */
  largestSize = 0;

  constructor(
    private readonly factory: ValueFactory,
    private readonly ctx: SchemaContext = {},
  ) {}

  convert(json: unknown, schema?: CelSchema): unknown {
    return this.value(json, schema ? resolveSchema(schema, this.ctx) : undefined, schema !== undefined);
  }

  /**
   * `convert(project(json, projection), schema)` (see projection.ts), without the projected
   * copy and the schema lookups on the way: the walk of the schema's object and map nodes along
   * the projection is planned once per (context, projection, schema) and reused, so a request
   * touches its value and the plan only (a request's conversions run in cold CPU caches).
   * Pass the same projection and schema objects for the same expressions.
   */
  convertProjected(json: unknown, projection: Projection, schema?: CelSchema): unknown {
    if (projection === true || !schema) return this.convert(project(json, projection), schema);
    const last = lastPlan;
    if (last?.ctx === this.ctx && last.projection === projection && last.schema === schema) return last.plan(this, json);
    let byProjection = plans.get(this.ctx);
    if (!byProjection) plans.set(this.ctx, (byProjection = new WeakMap()));
    let bySchema = byProjection.get(projection);
    if (!bySchema) byProjection.set(projection, (bySchema = new WeakMap()));
    let plan = bySchema.get(schema);
    if (!plan) bySchema.set(schema, (plan = this.plan(resolveSchema(schema, this.ctx), projection, true)));
    lastPlan = { ctx: this.ctx, projection, schema, plan };
    return plan(this, json);
  }

  /**
   * What `value(project(json, p), s, typed)` does, as a function of `json`: object and map nodes
   * read only the projected fields, with their schemas, escaped names and sub-plans resolved
   * here; anything else falls back to the projected copy and `value`.
   */
  private plan(s: CelSchema | undefined, p: Projection, typed: boolean): ConversionPlan {
    const generic: ConversionPlan = (c, json) => c.value(project(json, p), s, typed);
    if (p === true || !typed || !s) return generic;
    const kind = schemaKind(s);
    if (kind !== 'object' && kind !== 'map') return generic;
    // Per projected field (in the projection's order, as project() copies them): the names it is
    // reachable under and its plan; none for a field the conversion leaves out.
    const fields: { key: string; idents: readonly string[]; plan: ConversionPlan }[] = [];
    if (kind === 'map') {
      const values = resolveSchema(elementSchema(s), this.ctx);
      for (const [k, sub] of p) fields.push({ key: k, idents: [k], plan: this.plan(values, sub, values !== undefined) });
    } else {
      const props = objectProperties(s);
      const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
      for (const [k, sub] of p) {
        const prop = props[k];
        if (prop) {
          const idents = reachableNames(k);
          if (idents.length) fields.push({ key: k, idents, plan: this.plan(resolveSchema(prop, this.ctx), sub, true) });
        } else if (preserve) fields.push({ key: k, idents: [k], plan: (c, json) => c.untyped(project(json, sub)) });
      }
    }
    return (c, json) => {
      if (json === null || json === undefined) return null;
      if (typeof json !== 'object' || Array.isArray(json)) return c.value(json, s, true);
      if (!isPlainObject(json)) return generic(c, json);
      const out: Record<string, unknown> = Object.create(null);
      let entries = 0;
      for (const f of fields) {
        if (!Object.hasOwn(json, f.key)) continue;
        const value = f.plan(c, (json as Record<string, unknown>)[f.key]);
        for (const ident of f.idents) {
          out[ident] = value;
          c.sized(ident.length);
          entries++;
        }
      }
      c.sized(entries);
      return out;
    };
  }

  /** Notes a size for {@link largestSize}. */
  private sized(n: number): void {
    if (n > this.largestSize) this.largestSize = n;
  }

  private value(json: unknown, s: CelSchema | undefined, typed: boolean): unknown {
    if (json === null || json === undefined) return null;
    if (typeof json === 'string') this.sized(json.length);
    if (!typed || !s) return this.untyped(json);
    switch (schemaKind(s)) {
      case 'int':
      case 'int-or-string':
        return typeof json === 'number' && Number.isInteger(json) ? BigInt(json) : json;
      case 'double':
        return json;
      case 'bytes':
        return typeof json === 'string' ? new Uint8Array(Buffer.from(json, 'base64')) : json;
      case 'timestamp':
        return typeof json === 'string' && !Number.isNaN(Date.parse(json)) ? this.factory.timestamp(json) : json;
      case 'duration': {
        const nanos = typeof json === 'string' ? durationNanosOf(json) : undefined;
        return nanos === undefined ? json : this.factory.duration(nanos);
      }
      case 'list': {
        if (!Array.isArray(json)) return this.untyped(json);
        const items = resolveSchema(s.items, this.ctx);
        const out = json.map((item) => this.value(item, items, items !== undefined));
        this.sized(out.length);
        const listType = s['x-kubernetes-list-type'];
        if (listType === 'set' || listType === 'map') return new Set(out.map((v) => this.intern(v)));
        return out;
      }
      case 'map': {
        if (!isPlainObject(json)) return this.untyped(json);
        const values = resolveSchema(elementSchema(s), this.ctx);
        const out: Record<string, unknown> = Object.create(null);
        const keys = Object.keys(json);
        for (const k of keys) {
          out[k] = this.value(json[k], values, values !== undefined);
          this.sized(k.length);
        }
        this.sized(keys.length);
        return out;
      }
      case 'object': {
        if (!isPlainObject(json)) return this.untyped(json);
        const props = objectProperties(s);
        const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
        const out: Record<string, unknown> = Object.create(null);
        let entries = 0;
        // Keys, not entries: no array per field (conversion runs in a request's cold CPU caches).
        for (const k of Object.keys(json)) {
          const v = json[k];
          const prop = props[k];
          if (prop) {
            const idents = reachableNames(k);
            if (idents.length) {
              const value = this.value(v, resolveSchema(prop, this.ctx), true);
              for (const ident of idents) {
                out[ident] = value;
                this.sized(ident.length);
                entries++;
              }
            }
          } else if (preserve) {
            out[k] = this.untyped(v);
            this.sized(k.length);
            entries++;
          }
        }
        this.sized(entries);
        return out;
      }
      default:
        return this.untyped(json);
    }
  }

  private untyped(json: unknown): unknown {
    if (json === null || json === undefined) return null;
    if (typeof json === 'string') this.sized(json.length);
    if (typeof json === 'number') return Number.isInteger(json) && Number.isSafeInteger(json) ? BigInt(json) : json;
    if (Array.isArray(json)) {
      this.sized(json.length);
      return json.map((v) => this.untyped(v));
    }
    if (isPlainObject(json)) {
      const out: Record<string, unknown> = Object.create(null);
      const keys = Object.keys(json);
      for (const k of keys) {
        out[k] = this.untyped(json[k]);
        this.sized(k.length);
      }
      this.sized(keys.length);
      return out;
    }
    return json;
  }

  /** Set and map lists hold one instance per distinct element so that set equality holds across values. */
  private intern(v: unknown): unknown {
    if (v === null || typeof v !== 'object') return v;
    const key = canonicalKey(v);
    const interned = (this.interned ??= new Map());
    const seen = interned.get(key);
    if (seen !== undefined) return seen;
    interned.set(key, v);
    return v;
  }
}

/** A planned conversion of one value (see CelValueConverter.convertProjected). */
type ConversionPlan = (c: CelValueConverter, json: unknown) => unknown;

/** Conversion plans per schema context, projection and schema object (all weak: a schema replaced, as a CRD's on an update, drops its plans). */
const plans = new WeakMap<SchemaContext, WeakMap<ReadonlyMap<string, Projection>, WeakMap<CelSchema, ConversionPlan>>>();
/** The plan of the last conversion and what it is of (requests in a row convert one kind for the same expressions: three comparisons, not three weak map lookups; holds one schema at most). */
let lastPlan: { ctx: SchemaContext; projection: Projection; schema: CelSchema; plan: ConversionPlan } | undefined;

/** Nanoseconds of a Go duration string, or undefined when it is not one. */
export function durationNanosOf(text: string): bigint | undefined {
  try {
    return parseGoDuration(text);
  } catch {
    return undefined;
  }
}

/**
 * The names a declared property is reachable under: its escaped name, and for a reserved word
 * (`namespace`, `in`, ...) also the word itself, which the engine accepts after a dot
 * (`object.metadata.namespace` as well as `object.metadata.__namespace__`).
 */
export function reachableNames(prop: string): readonly string[] {
  let names = reachable.get(prop);
  if (!names) {
    const ident = escapePropertyName(prop);
    names = ident === undefined ? [] : ident === prop ? [ident] : CEL_RESERVED_WORDS.has(prop) ? [ident, prop] : [ident];
    if (reachable.size >= REACHABLE_LIMIT) reachable.clear();
    reachable.set(prop, names);
  }
  return names;
}

/** reachableNames per property name (schemas name a bounded set of properties; the bound keeps odd ones from growing it). */
const reachable = new Map<string, readonly string[]>();
const REACHABLE_LIMIT = 10_000;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** A canonical text of a converted value (object keys sorted) for interning. */
function canonicalKey(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  if (v instanceof Set || Array.isArray(v)) return `[${[...v].map(canonicalKey).join(',')}]`;
  if (v instanceof Uint8Array) return `b${Buffer.from(v).toString('base64')}`;
  if (v instanceof Date) return `t${timestampText(v)}`;
  if (isPlainObject(v) && Object.getPrototypeOf(v) !== null && Object.getPrototypeOf(v) !== Object.prototype) return `o${String(v)}`;
  const obj = v as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalKey(obj[k])}`)
    .join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Size bounds (for the cost estimator)

/** Smallest JSON text of one value of a schema (upstream estimateMinSizeJSON). */
export function minSerializedSize(schema: CelSchema | undefined, ctx: SchemaContext = {}): number {
  const s = resolveSchema(schema, ctx);
  switch (schemaKind(s)) {
    case 'string':
    case 'bytes':
    case 'timestamp':
    case 'duration':
    case 'list':
    case 'map':
    case 'object':
      return 2; // "" [] {}
    case 'bool':
      return s?.nullable ? 4 : 4; // true / null
    case 'int':
    case 'double':
    case 'int-or-string':
      return 1;
    default:
      return 1;
  }
}

/** Most items of a list, entries of a map, or characters of a string the schema admits. */
export function maxSize(schema: CelSchema | undefined, ctx: SchemaContext = {}): number {
  const s = resolveSchema(schema, ctx);
  const kind = schemaKind(s);
  const budget = MAX_REQUEST_SIZE_BYTES;
  switch (kind) {
    case 'list':
      return s!.maxItems ?? Math.floor((budget - 2) / (minSerializedSize(s!.items, ctx) + 1));
    case 'map':
    case 'object':
      // each entry needs at least `"":` plus a value and a comma
      return s!.maxProperties ?? Math.floor((budget - 2) / (minSerializedSize(elementSchema(s!), ctx) + 4));
    case 'string':
      return s!.maxLength ?? budget - 2;
    case 'bytes':
      return s!.maxLength ?? Math.floor(((budget - 2) * 3) / 4);
    default:
      return budget;
  }
}

/** The schema of a field, map value or list item below `schema`, for size estimates. */
export function childSchema(schema: CelSchema | undefined, step: { field?: string; index?: true }, ctx: SchemaContext = {}): CelSchema | undefined {
  const s = resolveSchema(schema, ctx);
  if (!s) return undefined;
  const kind = schemaKind(s);
  if (step.index) return kind === 'list' ? s.items : kind === 'map' ? elementSchema(s) : undefined;
  if (step.field === undefined) return undefined;
  if (kind === 'map') return elementSchema(s);
  if (kind !== 'object') return undefined;
  for (const [prop, propSchema] of Object.entries(objectProperties(s))) if (reachableNames(prop).includes(step.field)) return propSchema;
  return undefined;
}
