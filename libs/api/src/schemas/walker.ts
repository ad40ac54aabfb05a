import type { ApplyListType, NodeShape, ObjectSchema, SchemaWalker } from '@orch/apimachinery';
import { isScalar, type FieldSchema } from './model';
import { schemaForKind, typeSchema } from './registry';
import { childNode, itemNode, rootNode, semanticsOf, type SchemaNode } from './semantics';

// The schema registry seen through @orch/apimachinery's SchemaWalker, for strategic merge
// patch and server-side apply.

const OBJECT_META = 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** Root of kinds without a built-in schema: typed metadata, everything else deduced. */
const CUSTOM_ROOT: SchemaNode = { type: { ref: '<custom>' } };
const CUSTOM_FIELDS: ReadonlyMap<string, SchemaNode> = new Map(
  (
    [
      { name: 'apiVersion', type: 'string', proto: 0 },
      { name: 'kind', type: 'string', proto: 0 },
      { name: 'metadata', type: { ref: OBJECT_META }, proto: 1 },
    ] satisfies FieldSchema[]
  ).map((f) => [f.name, { type: f.type, field: f }]),
);

/**
 * List semantics as upstream derives them from OpenAPI (kube-openapi schemaconv): the
 * declared `+listType`, else an associative list when the patch strategy merges (keyed by
 * the merge key, or a set of scalars without one), else atomic.
 */
function listShape(node: SchemaNode): { listType: ApplyListType; listMapKeys?: readonly string[] } {
  const f = node.field;
  if (f?.listType) return f.listType === 'map' ? { listType: 'map', listMapKeys: f.listMapKeys ?? (f.patchMergeKey ? [f.patchMergeKey] : []) } : { listType: f.listType };
  if (f?.patchStrategy?.split(',').includes('merge')) return f.patchMergeKey ? { listType: 'map', listMapKeys: [f.patchMergeKey] } : { listType: 'set' };
  return { listType: 'atomic' };
}

const shapes = new WeakMap<SchemaNode, NodeShape>();

function shape(node: SchemaNode): NodeShape {
  if (node === CUSTOM_ROOT) return { kind: 'struct' };
  let s = shapes.get(node);
  if (s) return s;
  const sem = semanticsOf(node);
  const t = node.type;
  const extra: { -readonly [K in keyof NodeShape]?: NodeShape[K] } = {};
  if (sem.patchStrategy) extra.patchStrategy = sem.patchStrategy;
  if (sem.patchMergeKey) extra.patchMergeKey = sem.patchMergeKey;
  if (node.field?.default !== undefined) extra.default = node.field.default;
  if (isScalar(t)) s = { kind: 'scalar', ...extra };
  else if ('array' in t) s = { kind: 'list', ...listShape(node), ...extra };
  else if ('map' in t) s = { kind: 'map', atomic: sem.mapType === 'atomic', ...extra };
  else {
    const named = typeSchema(t.ref);
    if (named?.scalar) s = { kind: 'scalar', ...extra };
    else if (named?.items) s = { kind: 'list', listType: 'atomic', ...extra };
    else s = { kind: 'struct', atomic: sem.structType === 'atomic', ...extra };
  }
  shapes.set(node, s);
  return s;
}

const fields = new WeakMap<SchemaNode, Map<string, SchemaNode>>();
const mapValues = new WeakMap<SchemaNode, SchemaNode | undefined>();
const items = new WeakMap<SchemaNode, SchemaNode | undefined>();

/**
 * Child nodes are memoized per parent (one value node per map, one node per known struct
 * field), so repeated walks reuse nodes and their shapes; arbitrary map keys and unknown
 * fields are never remembered.
 */
function child(node: SchemaNode, key: string): SchemaNode | undefined {
  if (node === CUSTOM_ROOT) return CUSTOM_FIELDS.get(key);
  if (!isScalar(node.type) && 'map' in node.type) {
    if (!mapValues.has(node)) mapValues.set(node, childNode(node, key));
    return mapValues.get(node);
  }
  let known = fields.get(node);
  if (!known) {
    known = new Map();
    fields.set(node, known);
  }
  let c = known.get(key);
  if (!c) {
    c = childNode(node, key);
    if (c) known.set(key, c);
  }
  return c;
}

function item(node: SchemaNode): SchemaNode | undefined {
  if (items.has(node)) return items.get(node);
  const i = itemNode(node);
  items.set(node, i);
  return i;
}

/** The registry's SchemaWalker. */
export const schemaWalker: SchemaWalker<SchemaNode> = { shape, child, item };

const roots = new Map<string, ObjectSchema<SchemaNode>>();

/**
 * The schema of a kind for strategic merge patch and server-side apply. Kinds without a
 * built-in schema (custom resources) get typed metadata and deduced content: maps granular,
 * lists atomic, as upstream treats schemaless data.
 */
export function objectSchema(group: string, version: string, kind: string): ObjectSchema<SchemaNode> {
  const key = `${group}/${version}/${kind}`;
  let s = roots.get(key);
  if (!s) {
    s = { walker: schemaWalker, root: rootNode(group, version, kind) ?? CUSTOM_ROOT };
    roots.set(key, s);
  }
  return s;
}

/** Whether strategic merge patch applies to a kind: built-in kinds only (never custom resources). */
export function supportsStrategicMerge(group: string, version: string, kind: string): boolean {
  return schemaForKind(group, version, kind) !== undefined;
}
