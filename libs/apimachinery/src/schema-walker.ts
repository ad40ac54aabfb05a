// The view of an object schema that strategic merge patch and server-side apply need. The
// schema registry lives in @orch/api; it implements SchemaWalker (libs/api schemas/walker.ts)
// so that the algorithms here stay free of it.

/** What a schema position holds. */
export type ShapeKind = 'scalar' | 'struct' | 'map' | 'list';

/** How a list's items are told apart by server-side apply (upstream `+listType`). */
export type ApplyListType = 'atomic' | 'set' | 'map';

/** Merge metadata of one schema position. */
export interface NodeShape {
  readonly kind: ShapeKind;
  /** A struct or map replaced as a whole (`+structType=atomic`, `+mapType=atomic`, opaque JSON). */
  readonly atomic?: boolean;
  /** Lists only: atomic (default), set (scalar items by value) or map (items by listMapKeys). */
  readonly listType?: ApplyListType;
  readonly listMapKeys?: readonly string[];
  /** Strategic merge patch strategy of the field that leads here: merge, replace, retainKeys, merge,retainKeys. */
  readonly patchStrategy?: string;
  readonly patchMergeKey?: string;
  /** Default of the field that leads here (used for list-map keys an item leaves out). */
  readonly default?: unknown;
}

/**
 * Walks a schema tree. Nodes are opaque to the algorithms. `child` gives a struct field
 * (undefined for an unknown field) or a map value; `item` gives the items of a list.
 * Positions without a node are "deduced" as upstream treats schemaless data: objects are
 * granular maps, lists are atomic, anything else is a scalar.
 */
export interface SchemaWalker<N> {
  shape(node: N): NodeShape;
  child(node: N, key: string): N | undefined;
  item(node: N): N | undefined;
}

/** A kind's schema: the walker and the root node. */
export interface ObjectSchema<N = unknown> {
  readonly walker: SchemaWalker<N>;
  readonly root: N;
}

const DEDUCED_WALKER: SchemaWalker<null> = {
  shape: () => ({ kind: 'map' }),
  child: () => undefined,
  item: () => undefined,
};

/** The schema of kinds without one (custom resources): everything deduced from the values. */
export const DEDUCED_SCHEMA: ObjectSchema<null> = { walker: DEDUCED_WALKER, root: null };

/**
 * A cursor over one schema position; `undefined` nodes are deduced. Shapes are resolved
 * against the value actually found there, so a value that does not fit its schema (a list
 * where a struct is expected) is handled as an atomic leaf instead of failing.
 */
export class SchemaCursor {
  private constructor(
    private readonly walker: SchemaWalker<unknown>,
    private readonly node: unknown,
    private readonly known: boolean,
  ) {}

  static root(schema: ObjectSchema): SchemaCursor {
    return new SchemaCursor(schema.walker as SchemaWalker<unknown>, schema.root, schema !== (DEDUCED_SCHEMA as ObjectSchema));
  }

  private static readonly DEDUCED = new SchemaCursor(DEDUCED_WALKER as SchemaWalker<unknown>, null, false);

  /** The declared shape; deduced positions have none. */
  declared(): NodeShape | undefined {
    return this.known ? this.walker.shape(this.node) : undefined;
  }

  /** The shape that applies to `value` here. */
  shapeOf(value: unknown): NodeShape {
    const declared = this.declared();
    if (Array.isArray(value)) return declared?.kind === 'list' ? declared : { kind: 'list', listType: 'atomic' };
    if (value !== null && typeof value === 'object') {
      if (!declared) return { kind: 'map' };
      return declared.kind === 'struct' || declared.kind === 'map' ? declared : { kind: 'scalar' };
    }
    return { kind: 'scalar' };
  }

  /** Whether `key` is a declared field of this struct (upstream FindField). */
  isField(key: string): boolean {
    return this.known && this.walker.shape(this.node).kind === 'struct' && this.walker.child(this.node, key) !== undefined;
  }

  child(key: string): SchemaCursor {
    if (!this.known) return SchemaCursor.DEDUCED;
    const n = this.walker.child(this.node, key);
    return n === undefined ? SchemaCursor.DEDUCED : new SchemaCursor(this.walker, n, true);
  }

  item(): SchemaCursor {
    if (!this.known) return SchemaCursor.DEDUCED;
    const n = this.walker.item(this.node);
    return n === undefined ? SchemaCursor.DEDUCED : new SchemaCursor(this.walker, n, true);
  }
}

/**
 * A schema written out as a tree (for schemas that come as data, and for tests): a node's
 * shape, its struct fields, the node of every map value, the node of list items.
 */
export interface SchemaTree {
  readonly shape: NodeShape;
  readonly fields?: Readonly<Record<string, SchemaTree>>;
  readonly values?: SchemaTree;
  readonly items?: SchemaTree;
}

const TREE_WALKER: SchemaWalker<SchemaTree> = {
  shape: (n) => n.shape,
  child: (n, key) => (n.fields && Object.hasOwn(n.fields, key) ? n.fields[key] : n.values),
  item: (n) => n.items,
};

/** The ObjectSchema of a SchemaTree. */
export function treeSchema(root: SchemaTree): ObjectSchema<SchemaTree> {
  return { walker: TREE_WALKER, root };
}
