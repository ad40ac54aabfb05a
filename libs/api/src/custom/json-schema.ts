// The OpenAPI v3 schema of a CustomResourceDefinition version (`openAPIV3Schema`, upstream
// JSONSchemaProps) and the few helpers every walk over it shares.

/** One `x-kubernetes-validations` rule (SPEC "Validation expressions"). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired, FieldValueDuplicate. */
  reason?: string;
  /** A JSON path below the node the rule is on (`.spec.x`, `['a.b']`, `.list[0]`...). */
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/**
 * The JSON form of an OpenAPI v3 schema as CRDs carry it. Once a CRD is accepted its schemas
 * are *structural* (see structural.ts): every node has a type, value validations in
 * allOf/anyOf/oneOf/not never introduce new fields, and no `$ref`.
 */
export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, unknown>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: { description?: string; url?: string };
  example?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The schema of the items of an array node (structural schemas have one items schema). */
export function itemsOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return s.items && !Array.isArray(s.items) ? s.items : undefined;
}

/** The schema of the values of a map node (`additionalProperties` as a schema). */
export function valuesOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

/**
 * The schema of member `key` of an object node: a declared property, else the map's value
 * schema; undefined for a field the schema does not know.
 */
export function memberOf(s: JSONSchemaProps, key: string): JSONSchemaProps | undefined {
  if (s.properties && Object.hasOwn(s.properties, key)) return s.properties[key];
  return valuesOf(s);
}

/** A path below `base`: `spec` + `x` → `spec.x`; list items `[i]`; map keys with dots in brackets. */
export function childPath(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}

export function itemPath(base: string, index: number): string {
  return `${base}[${index}]`;
}

/** The JSON type name of a value as OpenAPI validation names it. */
export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Deep equality of JSON values (key order ignored), as `enum` and `uniqueItems` compare. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
