import { FieldError } from '@orch/apimachinery';
import { isJsonObject, type JSONSchemaProps } from './json-schema';
import { pruneUnknownFields } from './prune';
import { validateCustomResource } from './validate';

// The rules a CRD version's openAPIV3Schema must meet in apiextensions.orch.io/v1 (SPEC "API
// versions no longer served": the schema is required and structural): upstream
// apiextensions validation with the v1 options plus apiserver/schema ValidateStructural.
// Paths are written as upstream writes them: `properties[spec].properties[replicas].type`.

const LIST_TYPES = ['atomic', 'map', 'set'];
const MAP_TYPES = ['atomic', 'granular'];
const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const VALIDATION_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

type Level = 'root' | 'field' | 'item' | 'values';

/** Errors of a version's schema at `path` (`spec.versions[0].schema.openAPIV3Schema`). */
export function structuralSchemaErrors(schema: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isJsonObject(schema)) {
    errs.push(FieldError.required(path, 'schemas are required'));
    return errs;
  }
  const s = schema as JSONSchemaProps;
  checkNode(s, path, 'root', errs);
  if (s.type !== undefined && s.type !== 'object') errs.push(FieldError.invalid(`${path}.type`, s.type, 'must be object at the root'));
  else if (s.type === undefined) errs.push(FieldError.required(`${path}.type`, 'must not be empty at the root'));
  if (s['x-kubernetes-embedded-resource']) errs.push(FieldError.forbidden(`${path}.x-kubernetes-embedded-resource`, 'must not be used at the root'));
  if (s['x-kubernetes-int-or-string']) errs.push(FieldError.forbidden(`${path}.x-kubernetes-int-or-string`, 'must not be used at the root'));
  if (s.nullable) errs.push(FieldError.forbidden(`${path}.nullable`, 'must be false at the root'));
  checkRootMetadata(s, path, errs);
  return errs;
}

function checkRootMetadata(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const meta = s.properties?.metadata;
  if (!meta) return;
  const at = `${path}.properties[metadata]`;
  const { type, properties, ...rest } = meta;
  const onlyNames = Object.keys(properties ?? {}).every((k) => k === 'name' || k === 'generateName');
  const nameRulesOnly = Object.values(properties ?? {}).every((p) => p.type === 'string' && p.default === undefined && !p['x-kubernetes-validations']);
  if ((type !== undefined && type !== 'object') || !onlyNames || !nameRulesOnly || Object.keys(rest).some((k) => k !== 'description')) {
    errs.push(FieldError.forbidden(at, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
}

function forbiddenEverywhere(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (s.$ref !== undefined) errs.push(FieldError.forbidden(`${path}.$ref`, '$ref is not supported'));
  if (s.definitions !== undefined) errs.push(FieldError.forbidden(`${path}.definitions`, 'definitions are not supported'));
  if (s.dependencies !== undefined) errs.push(FieldError.forbidden(`${path}.dependencies`, 'dependencies are not supported'));
  if (s.patternProperties !== undefined) errs.push(FieldError.forbidden(`${path}.patternProperties`, 'patternProperties is not supported'));
  if (s.additionalItems !== undefined) errs.push(FieldError.forbidden(`${path}.additionalItems`, 'additionalItems is not supported'));
  if (s.uniqueItems === true) errs.push(FieldError.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (Array.isArray(s.items)) errs.push(FieldError.forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  if (s.additionalProperties === false) errs.push(FieldError.forbidden(`${path}.additionalProperties`, 'additionalProperties cannot be set to false'));
  if (s.additionalProperties !== undefined && s.properties !== undefined) {
    errs.push(FieldError.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) errs.push(FieldError.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  if (s.type !== undefined && !TYPES.includes(s.type)) errs.push(FieldError.notSupported(`${path}.type`, s.type, TYPES));
  if (s.pattern !== undefined) {
    try {
      new RegExp(s.pattern, 'u');
    } catch (e) {
      errs.push(FieldError.invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(e as Error).message}`));
    }
  }
  for (const [k, v] of [['maxLength', s.maxLength], ['minLength', s.minLength], ['maxItems', s.maxItems], ['minItems', s.minItems], ['maxProperties', s.maxProperties], ['minProperties', s.minProperties]] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) errs.push(FieldError.invalid(`${path}.${k}`, v, 'must be a non-negative integer'));
  }
}

/** A structural node: properties, items, additionalProperties are walked; junctors hold value validations only. */
function checkNode(s: JSONSchemaProps, path: string, level: Level, errs: FieldError[]): void {
  forbiddenEverywhere(s, path, errs);
  const intOrString = !!s['x-kubernetes-int-or-string'];
  const embedded = !!s['x-kubernetes-embedded-resource'];
  const preserve = !!s['x-kubernetes-preserve-unknown-fields'];
  if (level !== 'root' && s.type === undefined && !intOrString && !preserve) {
    errs.push(FieldError.required(`${path}.type`, level === 'item' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields'));
  }
  if (intOrString && s.type !== undefined) errs.push(FieldError.forbidden(`${path}.type`, 'must be empty if x-kubernetes-int-or-string is true'));
  if (embedded) {
    if (s.type !== 'object') errs.push(FieldError.invalid(`${path}.type`, s.type ?? '', 'must be object if x-kubernetes-embedded-resource is true'));
    if (!preserve && (!s.properties || Object.keys(s.properties).length === 0)) {
      errs.push(FieldError.required(`${path}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
    }
  }
  checkListAndMapTypes(s, path, errs);
  checkValidationRules(s, path, errs);
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    if (!isSchemaObject(prop)) {
      errs.push(FieldError.invalid(`${path}.properties[${name}]`, prop, 'must be a schema object'));
      continue;
    }
    checkNode(prop, `${path}.properties[${name}]`, 'field', errs);
    if (prop.default !== undefined) checkDefault(prop, `${path}.properties[${name}]`, errs);
  }
  if (isSchemaObject(s.items)) {
    checkNode(s.items, `${path}.items`, 'item', errs);
    if (s.items.default !== undefined) checkDefault(s.items, `${path}.items`, errs);
  }
  if (isSchemaObject(s.additionalProperties)) {
    checkNode(s.additionalProperties, `${path}.additionalProperties`, 'values', errs);
    if (s.additionalProperties.default !== undefined) checkDefault(s.additionalProperties, `${path}.additionalProperties`, errs);
  }
  if (s.items !== undefined && s.type !== undefined && s.type !== 'array') errs.push(FieldError.forbidden(`${path}.items`, 'must only be used if type is array'));
  if (s.type === 'array' && s.items === undefined) errs.push(FieldError.required(`${path}.items`, 'must be specified'));
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) {
    (s[junctor] ?? []).forEach((sub, i) => checkNested(sub, s, `${path}.${junctor}[${i}]`, intOrString, errs));
  }
  if (s.not) checkNested(s.not, s, `${path}.not`, intOrString, errs);
}

/** Inside allOf/anyOf/oneOf/not: value validations only, on fields the structural part specifies. */
function checkNested(sub: JSONSchemaProps, parent: JSONSchemaProps, path: string, intOrString: boolean, errs: FieldError[]): void {
  if (!isSchemaObject(sub)) return void errs.push(FieldError.invalid(path, sub, 'must be a schema object'));
  forbiddenEverywhere(sub, path, errs);
  const intOrStringForm = intOrString && (sub.type === 'integer' || sub.type === 'string');
  if (sub.type !== undefined && !intOrStringForm) errs.push(FieldError.forbidden(`${path}.type`, 'must be empty to be structural'));
  for (const k of ['nullable', 'default', 'description', 'title', 'additionalProperties', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-validations'] as const) {
    if (sub[k] !== undefined) errs.push(FieldError.forbidden(`${path}.${k}`, 'must be empty to be structural'));
  }
  for (const [name, prop] of Object.entries(sub.properties ?? {})) {
    const structural = parent.properties?.[name];
    if (!structural) errs.push(FieldError.required(`${path.slice(0, path.lastIndexOf('.'))}.properties[${name}]`, `because it is defined in ${path.slice(path.lastIndexOf('.') + 1)}.properties[${name}]`));
    else checkNested(prop, structural, `${path}.properties[${name}]`, !!structural['x-kubernetes-int-or-string'], errs);
  }
  if (isSchemaObject(sub.items)) {
    const structural = isSchemaObject(parent.items) ? parent.items : undefined;
    if (!structural) errs.push(FieldError.required(`${path.slice(0, path.lastIndexOf('.'))}.items`, `because it is defined in ${path.slice(path.lastIndexOf('.') + 1)}.items`));
    else checkNested(sub.items, structural, `${path}.items`, !!structural['x-kubernetes-int-or-string'], errs);
  }
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) (sub[junctor] ?? []).forEach((s2, i) => checkNested(s2, parent, `${path}.${junctor}[${i}]`, intOrString, errs));
  if (sub.not) checkNested(sub.not, parent, `${path}.not`, intOrString, errs);
}

function isSchemaObject(v: unknown): v is JSONSchemaProps {
  return isJsonObject(v);
}

function isScalarSchema(s: JSONSchemaProps | undefined): boolean {
  return !!s && (s['x-kubernetes-int-or-string'] === true || ['string', 'integer', 'number', 'boolean'].includes(s.type ?? ''));
}

function checkListAndMapTypes(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const listType = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (listType !== undefined) {
    if (!LIST_TYPES.includes(listType)) errs.push(FieldError.notSupported(`${path}.x-kubernetes-list-type`, listType, LIST_TYPES));
    if (s.type !== 'array') errs.push(FieldError.invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
  }
  const items = isSchemaObject(s.items) ? s.items : undefined;
  if (listType === 'map') {
    if (!keys || keys.length === 0) errs.push(FieldError.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') errs.push(FieldError.invalid(`${path}.items.type`, items.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
    for (const [i, k] of (keys ?? []).entries()) {
      const prop = items?.properties?.[k];
      if (!prop) errs.push(FieldError.invalid(`${path}.x-kubernetes-list-map-keys[${i}]`, k, 'entries must all be names of item properties'));
      else if (!isScalarSchema(prop)) errs.push(FieldError.invalid(`${path}.items.properties[${k}].type`, prop.type ?? '', 'must be a scalar type if parent array\'s x-kubernetes-list-type is map'));
      else if (!(items?.required ?? []).includes(k) && prop.default === undefined) {
        errs.push(FieldError.required(`${path}.items.properties[${k}]`, 'all map keys must be required or have a default value'));
      }
    }
    if (keys && new Set(keys).size !== keys.length) errs.push(FieldError.invalid(`${path}.x-kubernetes-list-map-keys`, keys, 'must not contain duplicate entries'));
  } else if (keys !== undefined) {
    errs.push(FieldError.forbidden(`${path}.x-kubernetes-list-map-keys`, 'can only be set if x-kubernetes-list-type is map'));
  }
  if (listType === 'set' && items && !isScalarSchema(items) && items['x-kubernetes-map-type'] !== 'atomic' && items.type !== 'array') {
    errs.push(FieldError.invalid(`${path}.items.x-kubernetes-map-type`, items['x-kubernetes-map-type'] ?? '', 'must be atomic as item of a list with x-kubernetes-list-type=set'));
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (!MAP_TYPES.includes(mapType)) errs.push(FieldError.notSupported(`${path}.x-kubernetes-map-type`, mapType, MAP_TYPES));
    if (s.type !== 'object') errs.push(FieldError.invalid(`${path}.type`, s.type ?? '', 'must be object if x-kubernetes-map-type is specified'));
  }
}

/** Shape of `x-kubernetes-validations` entries (the expressions are compiled by the gateway's CEL check). */
function checkValidationRules(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const rules = s['x-kubernetes-validations'];
  if (rules === undefined) return;
  if (!Array.isArray(rules)) return void errs.push(FieldError.invalid(`${path}.x-kubernetes-validations`, rules, 'must be a list of rules'));
  rules.forEach((r, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (!isJsonObject(r) || typeof r.rule !== 'string' || r.rule.trim() === '') return void errs.push(FieldError.required(`${at}.rule`, ''));
    if (r.message !== undefined && (typeof r.message !== 'string' || r.message.trim() === '')) errs.push(FieldError.invalid(`${at}.message`, r.message, 'message must be non-empty if specified'));
    if (typeof r.message === 'string' && /[\r\n]/.test(r.message)) errs.push(FieldError.invalid(`${at}.message`, r.message, 'message must not contain line breaks'));
    if (r.messageExpression !== undefined && (typeof r.messageExpression !== 'string' || r.messageExpression.trim() === '')) {
      errs.push(FieldError.required(`${at}.messageExpression`, 'messageExpression must be non-empty if specified'));
    }
    if (r.reason !== undefined && !VALIDATION_REASONS.includes(r.reason)) errs.push(FieldError.notSupported(`${at}.reason`, r.reason, VALIDATION_REASONS));
  });
}

/** A default must survive pruning unchanged and validate against its own node (upstream v1 rule). */
function checkDefault(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (s['x-kubernetes-preserve-unknown-fields'] && s.type === undefined) return;
  const wrapper = { value: structuredClone(s.default) };
  const schema: JSONSchemaProps = { type: 'object', properties: { value: s } };
  const unknown = pruneUnknownFields(wrapper as Record<string, unknown>, schema);
  if (unknown.length > 0) errs.push(FieldError.invalid(`${path}.default`, s.default, `must not have unknown fields, got: ${unknown.map((u) => u.replace(/^value\.?/, '')).join(', ')}`));
  for (const e of validateCustomResource(wrapper, schema)) {
    errs.push(FieldError.invalid(`${path}.default${e.field.replace(/^value/, '')}`, s.default, e.detail || e.detailMessage()));
  }
}
