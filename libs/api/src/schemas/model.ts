/**
 * The schema model of built-in API types: the one source from which decoding checks,
 * defaulting, strategic-merge keys, server-side-apply list types, OpenAPI and protobuf
 * field numbers are derived.
 */

/** Leaf types. Each has a fixed JSON form (`raw` = any JSON value). */
export type ScalarType =
  | 'string'
  | 'boolean'
  | 'int32'
  | 'int64'
  | 'double'
  /** base64 string in JSON */
  | 'bytes'
  /** RFC 3339 date-time string */
  | 'time'
  /** RFC 3339 date-time string with microseconds */
  | 'microtime'
  /** Go duration string (`1h2m3s`) */
  | 'duration'
  | 'quantity'
  | 'int-or-string'
  /** any JSON value (RawExtension, apiextensions JSON, FieldsV1) */
  | 'raw';

export const SCALAR_TYPES: readonly ScalarType[] = [
  'string',
  'boolean',
  'int32',
  'int64',
  'double',
  'bytes',
  'time',
  'microtime',
  'duration',
  'quantity',
  'int-or-string',
  'raw',
];

/** A field's type: a scalar, a named type, a list or a map with string keys. */
export type FieldType = ScalarType | { readonly ref: string } | { readonly array: FieldType } | { readonly map: FieldType };

export type ListType = 'atomic' | 'set' | 'map';
export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';
export type MapType = 'granular' | 'atomic';
export type StructType = 'granular' | 'atomic';

export interface FieldSchema {
  /** JSON name; for an inline (embedded) field the lower-camel name of the embedded type. */
  readonly name: string;
  readonly type: FieldType;
  /** Upstream protobuf field number; 0 when the field is not part of the protobuf message (TypeMeta, Table). */
  readonly proto: number;
  readonly required?: boolean;
  /** The referenced struct's fields appear directly in this object's JSON (Go `json:",inline"`). */
  readonly inline?: boolean;
  readonly enum?: readonly string[];
  readonly listType?: ListType;
  readonly listMapKeys?: readonly string[];
  readonly patchStrategy?: PatchStrategy;
  readonly patchMergeKey?: string;
  readonly mapType?: MapType;
  readonly structType?: StructType;
  /** Default declared by the upstream type definition (`+default`). */
  readonly default?: unknown;
  /** The Go field is a pointer: its zero value (`replicas: 0`, `storageClassName: ""`) is a value. */
  readonly pointer?: boolean;
  /** The Go JSON tag has `omitempty`: see omittedWhenEmpty. */
  readonly omitEmpty?: boolean;
}

export interface TypeSchema {
  /** Fully qualified name, e.g. `io.orch.api.core.v1.PodSpec`. */
  readonly name: string;
  /** Package key, e.g. `core/v1`, `meta/v1`, `resource`. */
  readonly pkg: string;
  /** Go package name used in decode error messages (`v1`, `v2`, `resource`, ...). */
  readonly goPkg: string;
  readonly fields: readonly FieldSchema[];
  readonly structType?: StructType;
  /** Registered as a kind (the root of an API object); kinds other than WatchEvent carry `apiVersion` and `kind`. */
  readonly kind?: boolean;
  /** JSON form is this scalar (Time, Quantity, ...); `fields` describe only the protobuf message. */
  readonly scalar?: ScalarType;
  /** JSON form is the value of exactly one of `fields` (JSONSchemaPropsOrArray, ...). */
  readonly union?: boolean;
  /** JSON form is an array of this type (ExtraValue); protobuf wraps it as `message { repeated items = 1 }`. */
  readonly items?: FieldType;
}

export function isScalar(t: FieldType): t is ScalarType {
  return typeof t === 'string';
}

/** Last segment of a qualified type name: `io.orch.api.core.v1.PodSpec` → `PodSpec`. */
export function shortTypeName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}
