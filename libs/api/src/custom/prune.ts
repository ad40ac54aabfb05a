import { jsonFields, typeSchema } from '../schemas/registry';
import { childPath, isJsonObject, itemPath, type JSONSchemaProps } from './json-schema';

// Pruning of unknown fields (upstream apiextensions structural/pruning): a custom resource
// keeps only what its structural schema specifies, unless a node says
// `x-kubernetes-preserve-unknown-fields`. The resource root and every
// `x-kubernetes-embedded-resource` keep apiVersion, kind and metadata (metadata is pruned to
// the fields of ObjectMeta).

const OBJECT_META = 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const TYPE_AND_META = new Set(['apiVersion', 'kind', 'metadata']);

let objectMetaFields: ReadonlySet<string> | undefined;

function metaFieldNames(): ReadonlySet<string> {
  objectMetaFields ??= new Set(jsonFields(typeSchema(OBJECT_META)!).keys());
  return objectMetaFields;
}

/**
 * Removes the fields `schema` does not specify from `obj` (in place) and returns their
 * paths (`spec.foo`, `spec.list[0].bar`, `metadata.bogus`), for field validation.
 * `obj` is the whole custom resource (the root is an embedded resource).
 */
export function pruneUnknownFields(obj: Record<string, unknown>, schema: JSONSchemaProps | undefined): string[] {
  const unknown: string[] = [];
  pruneNode(obj, { ...(schema ?? {}), 'x-kubernetes-embedded-resource': true }, '', unknown);
  return unknown;
}

function pruneMetadata(meta: Record<string, unknown>, path: string, unknown: string[]): void {
  const known = metaFieldNames();
  for (const k of Object.keys(meta)) {
    if (known.has(k)) continue;
    unknown.push(childPath(path, k));
    delete meta[k];
  }
}

/** Keeps apiVersion/kind (strings) and metadata (an object, pruned to ObjectMeta) of an embedded resource. */
function keepsTypeOrMeta(obj: Record<string, unknown>, key: string, path: string, unknown: string[]): boolean {
  const v = obj[key];
  if (key === 'metadata' && isJsonObject(v)) {
    pruneMetadata(v, childPath(path, key), unknown);
    return true;
  }
  return (key === 'apiVersion' || key === 'kind') && typeof v === 'string';
}

function pruneNode(value: unknown, s: JSONSchemaProps | undefined, path: string, unknown: string[]): void {
  if (s?.['x-kubernetes-preserve-unknown-fields']) return pruneKnownOnly(value, s, path, unknown);
  if (isJsonObject(value)) {
    for (const k of Object.keys(value)) {
      if (s?.['x-kubernetes-embedded-resource'] && TYPE_AND_META.has(k) && keepsTypeOrMeta(value, k, path, unknown)) continue;
      const prop = s?.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) pruneNode(value[k], prop, childPath(path, k), unknown);
      else if (s && s.additionalProperties !== undefined && s.additionalProperties !== false) {
        pruneNode(value[k], typeof s.additionalProperties === 'object' ? s.additionalProperties : { 'x-kubernetes-preserve-unknown-fields': true }, childPath(path, k), unknown);
      } else {
        unknown.push(childPath(path, k));
        delete value[k];
      }
    }
    return;
  }
  if (Array.isArray(value)) {
    const items = s && s.items && !Array.isArray(s.items) ? s.items : undefined;
    value.forEach((v, i) => pruneNode(v, items, itemPath(path, i), unknown));
  }
}

/** Under x-kubernetes-preserve-unknown-fields: unknown fields stay, specified ones are still pruned inside. */
function pruneKnownOnly(value: unknown, s: JSONSchemaProps, path: string, unknown: string[]): void {
  if (isJsonObject(value)) {
    for (const k of Object.keys(value)) {
      if (s['x-kubernetes-embedded-resource'] && TYPE_AND_META.has(k) && keepsTypeOrMeta(value, k, path, unknown)) continue;
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) pruneNode(value[k], prop, childPath(path, k), unknown);
      else if (typeof s.additionalProperties === 'object') pruneNode(value[k], s.additionalProperties, childPath(path, k), unknown);
    }
    return;
  }
  if (Array.isArray(value) && s.items && !Array.isArray(s.items)) {
    const items = s.items;
    value.forEach((v, i) => pruneKnownOnly(v, items, itemPath(path, i), unknown));
  }
}
