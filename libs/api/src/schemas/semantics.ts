import { isScalar, type FieldSchema, type FieldType } from './model';
import { jsonFields, schemaForKind, typeSchema } from './registry';

/** A position in a schema tree: the type found there and the field that led to it (none for the root, list items and map values). */
export interface SchemaNode {
  readonly type: FieldType;
  readonly field?: FieldSchema;
}

/**
 * Merge and apply metadata of one field, as strategic merge patch and server-side apply need it:
 * the field schema's, except `structType`: the field's `+structType`, else the struct type's own.
 */
export type FieldSemantics = Pick<FieldSchema, 'type' | 'listType' | 'listMapKeys' | 'patchStrategy' | 'patchMergeKey' | 'mapType' | 'structType'>;

/** Root node of a kind, or undefined when the kind has no schema. */
export function rootNode(group: string, version: string, kind: string): SchemaNode | undefined {
  const schema = schemaForKind(group, version, kind);
  return schema && { type: { ref: schema.name } };
}

/** The node of member `key` of an object node: a struct field (inline fields flattened) or a map value. */
export function childNode(node: SchemaNode, key: string): SchemaNode | undefined {
  const t = node.type;
  if (isScalar(t) || 'array' in t) return undefined;
  if ('map' in t) return { type: t.map };
  const schema = typeSchema(t.ref);
  if (!schema || schema.scalar || schema.items) return undefined;
  if (schema.union) {
    // The JSON value is one of the alternatives; members belong to the object alternative.
    const objectAlt = schema.fields.find((f) => !isScalar(f.type) && 'ref' in f.type);
    return objectAlt && childNode({ type: objectAlt.type }, key);
  }
  const field = jsonFields(schema).get(key);
  return field && { type: field.type, field };
}

/** The node of the items of a list node (also of a named list such as ExtraValue). */
export function itemNode(node: SchemaNode): SchemaNode | undefined {
  const t = node.type;
  if (isScalar(t) || 'map' in t) return undefined;
  if ('array' in t) return { type: t.array };
  const schema = typeSchema(t.ref);
  if (schema?.items) return { type: schema.items };
  if (schema?.union) {
    const listAlt = schema.fields.find((f) => !isScalar(f.type) && 'array' in f.type);
    return listAlt && itemNode({ type: listAlt.type });
  }
  return undefined;
}

/** Splits `spec.containers[0].ports` (or an array of segments) into segments; numbers select list items. */
function segments(path: string | readonly (string | number)[]): (string | number)[] {
  if (typeof path !== 'string') return [...path];
  const out: (string | number)[] = [];
  for (const part of path.split('.').filter(Boolean)) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2].match(/\d+/g) ?? []) out.push(Number(idx));
  }
  return out;
}

/** The node at `path` below `node`; numeric segments step into list items. */
export function nodeAt(node: SchemaNode, path: string | readonly (string | number)[]): SchemaNode | undefined {
  let cur: SchemaNode | undefined = node;
  for (const seg of segments(path)) {
    if (!cur) return undefined;
    cur = typeof seg === 'number' ? itemNode(cur) : childNode(cur, seg);
  }
  return cur;
}

/**
 * Strategic-merge and server-side-apply metadata of the field at `path` in a kind
 * (`spec.template.spec.containers`, `spec.containers[0].ports`), or undefined when the path
 * is not in the schema.
 */
export function listSemantics(group: string, version: string, kind: string, path: string | readonly (string | number)[]): FieldSemantics | undefined {
  const root = rootNode(group, version, kind);
  const node = root && nodeAt(root, path);
  return node && semanticsOf(node);
}

/** Metadata of a node reached by a walk. */
export function semanticsOf(node: SchemaNode): FieldSemantics {
  const f = node.field;
  const t = node.type;
  const structType = f?.structType ?? (!isScalar(t) && 'ref' in t ? typeSchema(t.ref)?.structType : undefined);
  const out: { -readonly [K in keyof FieldSemantics]: FieldSemantics[K] } = { type: t };
  if (f?.listType) out.listType = f.listType;
  if (f?.listMapKeys) out.listMapKeys = f.listMapKeys;
  if (f?.patchStrategy) out.patchStrategy = f.patchStrategy;
  if (f?.patchMergeKey) out.patchMergeKey = f.patchMergeKey;
  if (f?.mapType) out.mapType = f.mapType;
  if (structType) out.structType = structType;
  return out;
}
