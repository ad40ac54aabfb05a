import { FieldError } from '@orch/apimachinery';
import { childPath, isJsonObject, itemPath, itemsOf, jsonEqual, jsonTypeOf, type JSONSchemaProps } from './json-schema';
import { checkFormat } from './formats';

// Validation of a custom resource against its structural schema (upstream apiextensions
// ValidateCustomResource with kube-openapi's validator, errors converted as ConvertErrors
// does): types, formats, enum, bounds, lengths, patterns, required, nullable, list types
// (set and map keys unique), embedded resources, allOf/anyOf/oneOf/not. Every error names
// the field path (`spec.replicas`), as the 422 causes do.

interface Ctx {
  errs: FieldError[];
}

/** Errors of `obj` (a whole custom resource) against `schema`; metadata is validated elsewhere. */
export function validateCustomResource(obj: Record<string, unknown>, schema: JSONSchemaProps | undefined): FieldError[] {
  if (!schema) return [];
  const ctx: Ctx = { errs: [] };
  // The root's apiVersion, kind and metadata are the generic object's, checked elsewhere.
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = obj;
  const rootSchema: JSONSchemaProps = { ...schema, properties: withoutTypeAndMeta(schema.properties) };
  const required = (schema.required ?? []).filter((r) => r !== 'apiVersion' && r !== 'kind' && r !== 'metadata');
  validateNode(rest, { ...rootSchema, required }, '', ctx, true);
  return ctx.errs;
}

function withoutTypeAndMeta(props: Record<string, JSONSchemaProps> | undefined): Record<string, JSONSchemaProps> | undefined {
  if (!props) return props;
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = props;
  return rest;
}

/** `spec.x in body` as kube-openapi names a value in its messages. */
function inBody(path: string): string {
  return `${path || '<root>'} in body`;
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isJsonObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return true;
  }
}

function typeError(ctx: Ctx, path: string, value: unknown, type: string): void {
  const shown = value === null ? 'null' : typeof value === 'string' ? value : jsonTypeOf(value);
  ctx.errs.push(FieldError.typeInvalid(path, value === null ? 'null' : value, `${inBody(path)} must be of type ${type}: ${JSON.stringify(shown)}`));
}

/**
 * Validates one value. `structural`: the node is a structural schema node (its type applies
 * and unknown properties were pruned); inside allOf/anyOf/oneOf/not only value validations apply.
 */
function validateNode(value: unknown, s: JSONSchemaProps, path: string, ctx: Ctx, structural: boolean): void {
  if (value === null) {
    if (s.nullable || (!s.type && !s['x-kubernetes-int-or-string'])) return;
    if (s['x-kubernetes-int-or-string']) return typeError(ctx, path, value, 'integer or string');
    return typeError(ctx, path, value, s.type!);
  }
  if (s['x-kubernetes-int-or-string']) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) return typeError(ctx, path, value, 'integer or string');
  } else if (s.type && !typeMatches(s.type, value)) {
    return typeError(ctx, path, value, s.type);
  }
  const before = ctx.errs.length;
  if (s.enum && s.enum.length > 0 && !s.enum.some((e) => jsonEqual(e, value))) {
    ctx.errs.push(FieldError.notSupported(path, value, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (typeof value === 'string') validateString(value, s, path, ctx);
  else if (typeof value === 'number') validateNumber(value, s, path, ctx);
  else if (Array.isArray(value)) validateArray(value, s, path, ctx, structural);
  else if (isJsonObject(value)) validateObject(value, s, path, ctx, structural);
  if (ctx.errs.length === before) validateJunctors(value, s, path, ctx);
}

function validateString(value: string, s: JSONSchemaProps, path: string, ctx: Ctx): void {
  const length = [...value].length;
  if (s.maxLength !== undefined && length > s.maxLength) ctx.errs.push(FieldError.tooLong(path, value, s.maxLength));
  if (s.minLength !== undefined && length < s.minLength) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should be at least ${s.minLength} chars long`));
  if (s.pattern !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = undefined; // refused when the CRD was written; nothing to check against
    }
    if (re && !re.test(value)) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should match '${s.pattern}'`));
  }
  if (s.format) {
    const bad = checkFormat(s.format, value);
    if (bad) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} must be of type ${bad}: ${JSON.stringify(value)}`));
  }
}

function validateNumber(value: number, s: JSONSchemaProps, path: string, ctx: Ctx): void {
  if (s.maximum !== undefined) {
    if (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum) {
      ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
    }
  }
  if (s.minimum !== undefined) {
    if (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum) {
      ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    }
  }
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const q = value / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should be a multiple of ${s.multipleOf}`));
  }
}

function validateArray(value: unknown[], s: JSONSchemaProps, path: string, ctx: Ctx, structural: boolean): void {
  if (s.maxItems !== undefined && value.length > s.maxItems) ctx.errs.push(FieldError.tooMany(path, value.length, s.maxItems));
  if (s.minItems !== undefined && value.length < s.minItems) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should have at least ${s.minItems} items`));
  if (s.uniqueItems && value.some((v, i) => value.findIndex((w) => jsonEqual(v, w)) !== i)) {
    ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} shouldn't contain duplicates`));
  }
  const items = itemsOf(s);
  if (items) value.forEach((v, i) => validateNode(v, items, itemPath(path, i), ctx, structural));
  if (!structural) return;
  // x-kubernetes-list-type: set items are unique values, map items unique by their keys.
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    const seen: unknown[] = [];
    value.forEach((v, i) => {
      if (seen.some((w) => jsonEqual(v, w))) ctx.errs.push(FieldError.duplicate(itemPath(path, i), v));
      else seen.push(v);
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((v, i) => {
      if (!isJsonObject(v)) return;
      const key: Record<string, unknown> = {};
      for (const k of keys) key[k] = v[k] ?? items?.properties?.[k]?.default;
      const id = JSON.stringify(keys.map((k) => key[k]));
      if (seen.has(id)) ctx.errs.push(FieldError.duplicate(itemPath(path, i), key));
      else seen.add(id);
    });
  }
}

function validateObject(value: Record<string, unknown>, s: JSONSchemaProps, path: string, ctx: Ctx, structural: boolean): void {
  const count = Object.keys(value).length;
  if (s.maxProperties !== undefined && count > s.maxProperties) ctx.errs.push(FieldError.tooMany(path, count, s.maxProperties));
  if (s.minProperties !== undefined && count < s.minProperties) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} should have at least ${s.minProperties} properties`));
  for (const r of s.required ?? []) {
    if (!Object.hasOwn(value, r)) ctx.errs.push(FieldError.required(childPath(path, r), ''));
  }
  if (s['x-kubernetes-embedded-resource'] && structural) {
    for (const f of ['apiVersion', 'kind']) {
      const v = value[f];
      if (typeof v !== 'string' || v === '') ctx.errs.push(FieldError.required(childPath(path, f), 'must not be empty'));
    }
    if (value.metadata !== undefined && !isJsonObject(value.metadata)) typeError(ctx, childPath(path, 'metadata'), value.metadata, 'object');
  }
  for (const [k, v] of Object.entries(value)) {
    if (s['x-kubernetes-embedded-resource'] && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    if (prop) validateNode(v, prop, childPath(path, k), ctx, structural);
  }
}

function validateJunctors(value: unknown, s: JSONSchemaProps, path: string, ctx: Ctx): void {
  const errsOf = (sub: JSONSchemaProps): FieldError[] => {
    const inner: Ctx = { errs: [] };
    validateNode(value, sub, path, inner, false);
    return inner.errs;
  };
  for (const sub of s.allOf ?? []) ctx.errs.push(...errsOf(sub));
  if (s.anyOf?.length && !s.anyOf.some((sub) => errsOf(sub).length === 0)) {
    ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} must validate at least one schema (anyOf)`));
  }
  if (s.oneOf?.length && s.oneOf.filter((sub) => errsOf(sub).length === 0).length !== 1) {
    ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} must validate one and only one schema (oneOf)`));
  }
  if (s.not && errsOf(s.not).length === 0) ctx.errs.push(FieldError.invalid(path, value, `${inBody(path)} must not validate the schema (not)`));
}
