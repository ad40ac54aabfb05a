import type { NodeShape, ObjectSchema, SchemaWalker } from '@orch/apimachinery';
import type { SchemaNode } from '../schemas/semantics';
import { objectSchema, schemaWalker } from '../schemas/walker';
import type { ResourceDef } from '../catalog-types';
import { itemsOf, valuesOf, type JSONSchemaProps } from './json-schema';

// A custom resource's structural schema seen through @orch/apimachinery's SchemaWalker, for
// server-side apply: list types and keys from x-kubernetes-list-type/-list-map-keys, atomic
// maps and structs from x-kubernetes-map-type, metadata typed as ObjectMeta (as upstream).

type CustomNode = { readonly kind: 'custom'; readonly s: JSONSchemaProps; readonly embedded: boolean } | { readonly kind: 'meta'; readonly meta: SchemaNode };

const OBJECT_META: SchemaNode = { type: { ref: 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta' } };
const STRING: JSONSchemaProps = { type: 'string' };

function shape(n: CustomNode): NodeShape {
  if (n.kind === 'meta') return schemaWalker.shape(n.meta);
  const s = n.s;
  const extra: { default?: unknown } = s.default !== undefined ? { default: s.default } : {};
  if (s['x-kubernetes-int-or-string']) return { kind: 'scalar', ...extra };
  switch (s.type) {
    case 'array': {
      const listType = (s['x-kubernetes-list-type'] ?? 'atomic') as 'atomic' | 'set' | 'map';
      return listType === 'map' ? { kind: 'list', listType, listMapKeys: s['x-kubernetes-list-map-keys'] ?? [], ...extra } : { kind: 'list', listType, ...extra };
    }
    case 'object': {
      const atomic = s['x-kubernetes-map-type'] === 'atomic';
      if (s.properties || n.embedded) return { kind: 'struct', atomic, ...extra };
      return { kind: 'map', atomic, ...extra };
    }
    case undefined:
      return s['x-kubernetes-preserve-unknown-fields'] ? { kind: 'map', ...extra } : { kind: 'scalar', ...extra };
    default:
      return { kind: 'scalar', ...extra };
  }
}

function child(n: CustomNode, key: string): CustomNode | undefined {
  if (n.kind === 'meta') {
    const c = schemaWalker.child(n.meta, key);
    return c && { kind: 'meta', meta: c };
  }
  const s = n.s;
  if (n.embedded) {
    if (key === 'metadata') return { kind: 'meta', meta: OBJECT_META };
    if (key === 'apiVersion' || key === 'kind') return { kind: 'custom', s: STRING, embedded: false };
  }
  const prop = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : valuesOf(s);
  return prop && { kind: 'custom', s: prop, embedded: !!prop['x-kubernetes-embedded-resource'] };
}

function item(n: CustomNode): CustomNode | undefined {
  if (n.kind === 'meta') {
    const i = schemaWalker.item(n.meta);
    return i && { kind: 'meta', meta: i };
  }
  const items = itemsOf(n.s);
  return items && { kind: 'custom', s: items, embedded: !!items['x-kubernetes-embedded-resource'] };
}

const customWalker: SchemaWalker<CustomNode> = { shape, child, item };

const schemas = new WeakMap<JSONSchemaProps, ObjectSchema<CustomNode>>();

/** The ObjectSchema (server-side apply, managed fields) of a custom resource with `schema`. */
export function customObjectSchema(schema: JSONSchemaProps): ObjectSchema<CustomNode> {
  let out = schemas.get(schema);
  if (!out) {
    out = { walker: customWalker, root: { kind: 'custom', s: { ...schema, type: 'object' }, embedded: true } };
    schemas.set(schema, out);
  }
  return out;
}

/** The ObjectSchema of a catalog resource: its CRD schema for a custom resource, else the built-in type's. */
export function objectSchemaOf(def: ResourceDef): ObjectSchema {
  return (def.custom ? customObjectSchema(def.custom.schema) : objectSchema(def.group, def.version, def.kind)) as ObjectSchema;
}
