import { SchemaCursor, type NodeShape, type ObjectSchema } from '../schema-walker';
import { FieldSet, fieldElement, keyElement, pathString, valueElement, type PathElement } from './field-set';

// Schema-aware walks over JSON values (upstream structured-merge-diff typed): the field set of
// a value, the difference of two values, the merge of an applied configuration into a live
// object and the removal of field paths. Absent values are `undefined`.

type JsonObject = Record<string, unknown>;

/** A value that does not fit its schema (a list-map item without its key, duplicate items). */
export class TypedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TypedValueError';
  }
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Replaced as a whole: scalars, atomic lists, atomic structs and maps. */
function isLeaf(shape: NodeShape): boolean {
  if (shape.kind === 'scalar') return true;
  if (shape.kind === 'list') return (shape.listType ?? 'atomic') === 'atomic';
  return !!shape.atomic;
}

function isEmptyContainer(v: unknown): boolean {
  if (v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** The path element of a list item: `k:{...}` for list maps, `v:...` for sets. */
function itemElement(shape: NodeShape, itemCur: SchemaCursor, item: unknown, index: number, path: readonly PathElement[]): PathElement {
  const where = () => `${pathString(path) || '.'}: element ${index}`;
  if (shape.listType === 'set') {
    if (item !== null && typeof item === 'object') {
      throw new TypedValueError(`${where()}: associative list without keys has an element that's a ${Array.isArray(item) ? 'list' : 'map'} type`);
    }
    return valueElement(item);
  }
  if (!isObject(item)) throw new TypedValueError(`${where()}: associative list with keys has an element that's not a map type`);
  const keys: JsonObject = {};
  for (const k of shape.listMapKeys ?? []) {
    const v = item[k] ?? itemCur.child(k).declared()?.default;
    if (v === undefined || v === null) {
      throw new TypedValueError(`${where()}: associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
    }
    keys[k] = v;
  }
  return keyElement(keys);
}

/** Item path elements of a non-atomic list, in order, rejecting duplicates. */
function itemElements(list: unknown[], shape: NodeShape, itemCur: SchemaCursor, path: readonly PathElement[]): PathElement[] {
  const seen = new Set<PathElement>();
  return list.map((item, i) => {
    const pe = itemElement(shape, itemCur, item, i, path);
    if (seen.has(pe)) throw new TypedValueError(`${pathString(path) || '.'}: duplicate entries for key ${pathString([pe])}`);
    seen.add(pe);
    return pe;
  });
}

/**
 * The paths a value sets (upstream ToFieldSet): scalars and atomic values, list items, and map
 * entries; struct fields only through what is below them. Throws TypedValueError for list
 * items without keys and duplicate items.
 */
export function toFieldSet(value: unknown, schema: ObjectSchema): FieldSet {
  const set = new FieldSet();
  const path: PathElement[] = [];
  const walk = (v: unknown, cur: SchemaCursor): void => {
    const shape = cur.shapeOf(v);
    if (isLeaf(shape)) {
      set.insert(path);
      return;
    }
    if (shape.kind === 'list') {
      const list = v as unknown[];
      const itemCur = cur.item();
      const pes = itemElements(list, shape, itemCur, path);
      list.forEach((item, i) => {
        path.push(pes[i]);
        walk(item, itemCur);
        set.insert(path);
        path.pop();
      });
      return;
    }
    for (const [k, child] of Object.entries(v as JsonObject)) {
      if (child === undefined) continue;
      path.push(fieldElement(k));
      walk(child, cur.child(k));
      if (!cur.isField(k)) set.insert(path);
      path.pop();
    }
  };
  walk(value, SchemaCursor.root(schema));
  return set;
}

/** What changed from lhs to rhs; no path is in more than one set. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Compares two values (upstream Compare). A node that appears or disappears is itself
 * added or removed, except that a struct field appearing is not (upstream compares with the
 * typed zero object, in which struct fields already exist).
 */
export function compareTyped(lhs: unknown, rhs: unknown, schema: ObjectSchema): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const path: PathElement[] = [];
  const leaf = (l: unknown, r: unknown) => {
    if (l === undefined) out.added.insert(path);
    else if (r === undefined) out.removed.insert(path);
    else if (!jsonEqual(l, r)) out.modified.insert(path);
  };
  const cmp = (l: unknown, r: unknown, cur: SchemaCursor, namedField: boolean): void => {
    const shape = cur.shapeOf(r !== undefined ? r : l);
    if (isLeaf(shape) || (l !== undefined && r !== undefined && cur.shapeOf(l).kind !== shape.kind) || (isEmptyContainer(l) && isEmptyContainer(r))) {
      leaf(l, r);
      return;
    }
    if (shape.kind === 'list') compareItems((l as unknown[] | undefined) ?? [], (r as unknown[] | undefined) ?? [], shape, cur.item());
    else {
      const lo = (l as JsonObject | undefined) ?? {};
      const ro = (r as JsonObject | undefined) ?? {};
      for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
        path.push(fieldElement(k));
        cmp(lo[k], ro[k], cur.child(k), cur.isField(k));
        path.pop();
      }
    }
    if (l === undefined) {
      if (!(namedField && shape.kind === 'struct')) out.added.insert(path);
    } else if (r === undefined) out.removed.insert(path);
  };
  const compareItems = (l: unknown[], r: unknown[], shape: NodeShape, itemCur: SchemaCursor) => {
    const lValues = groupItems(l, shape, itemCur, path);
    const rValues = groupItems(r, shape, itemCur, path);
    for (const pe of new Set([...lValues.keys(), ...rValues.keys()])) {
      const ls = lValues.get(pe) ?? [];
      const rs = rValues.get(pe) ?? [];
      path.push(pe);
      if (ls.length <= 1 && rs.length <= 1) cmp(ls[0], rs[0], itemCur, false);
      else if (ls.length >= 2 && rs.length >= 2) {
        // Duplicates on both sides compare as one atomic value.
        if (!jsonEqual(ls, rs)) out.modified.insert(path);
      } else if (ls.length >= 2) {
        if (rs.length) cmp(undefined, rs[0], itemCur, false);
        out.removed.insert(path);
      } else {
        if (ls.length) cmp(ls[0], undefined, itemCur, false);
        out.added.insert(path);
      }
      path.pop();
    }
  };
  cmp(lhs, rhs, SchemaCursor.root(schema), false);
  return out;
}

/**
 * The paths of a value compared with nothing: `compareTyped({}, value, schema).added` (its
 * modified and removed sets are empty), found in one walk without comparisons. A create's
 * field set.
 */
export function addedFields(value: unknown, schema: ObjectSchema): FieldSet {
  const set = new FieldSet();
  const path: PathElement[] = [];
  const add = (v: unknown, cur: SchemaCursor, namedField: boolean): void => {
    const shape = cur.shapeOf(v);
    if (isLeaf(shape) || isEmptyContainer(v)) {
      set.insert(path);
      return;
    }
    addChildren(v, shape, cur);
    if (!(namedField && shape.kind === 'struct')) set.insert(path);
  };
  const addChildren = (v: unknown, shape: NodeShape, cur: SchemaCursor): void => {
    if (shape.kind === 'list') {
      const itemCur = cur.item();
      for (const [pe, items] of groupItems(v as unknown[], shape, itemCur, path)) {
        path.push(pe);
        // Duplicates are one added item (as compareTyped has them).
        if (items.length === 1) add(items[0], itemCur, false);
        else set.insert(path);
        path.pop();
      }
      return;
    }
    const o = v as JsonObject;
    for (const k of Object.keys(o)) {
      path.push(fieldElement(k));
      add(o[k], cur.child(k), cur.isField(k));
      path.pop();
    }
  };
  const root = SchemaCursor.root(schema);
  const shape = root.shapeOf(value);
  if (isObject(value) && !isLeaf(shape) && !isEmptyContainer(value)) addChildren(value, shape, root);
  return set;
}

/** Items of a list grouped by path element (duplicates kept together). */
function groupItems(list: unknown[], shape: NodeShape, itemCur: SchemaCursor, path: readonly PathElement[]): Map<PathElement, unknown[]> {
  const out = new Map<PathElement, unknown[]>();
  list.forEach((item, i) => {
    const pe = itemElement(shape, itemCur, item, i, path);
    const group = out.get(pe);
    if (group) group.push(item);
    else out.set(pe, [item]);
  });
  return out;
}

/**
 * Merges an applied configuration into a live value (upstream Merge with "keep RHS"): leaves
 * and atomic values come from rhs, maps merge by key and list items by their path element.
 * Applied items keep the applied order; live-only items stay where they were. The result
 * may share subtrees with both inputs.
 */
export function mergeTyped(lhs: unknown, rhs: unknown, schema: ObjectSchema): unknown {
  const path: PathElement[] = [];
  const mergeValue = (l: unknown, r: unknown, cur: SchemaCursor): unknown => {
    if (r === undefined) return l;
    if (l === undefined) return r;
    const shape = cur.shapeOf(r);
    if (isLeaf(shape) || cur.shapeOf(l).kind !== shape.kind || (isEmptyContainer(l) && isEmptyContainer(r))) return r;
    if (shape.kind === 'list') return mergeItems(l as unknown[], r as unknown[], shape, cur.item());
    const lo = l as JsonObject;
    const ro = r as JsonObject;
    const out: JsonObject = {};
    for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
      path.push(fieldElement(k));
      const v = Object.hasOwn(ro, k) ? (Object.hasOwn(lo, k) ? mergeValue(lo[k], ro[k], cur.child(k)) : ro[k]) : lo[k];
      path.pop();
      Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
    }
    return out;
  };
  const mergeItems = (l: unknown[], r: unknown[], shape: NodeShape, itemCur: SchemaCursor): unknown[] => {
    const rPEs = itemElements(r, shape, itemCur, path);
    const lPEs = l.map((item, i) => itemElement(shape, itemCur, item, i, path));
    const rItems = new Map(rPEs.map((pe, i) => [pe, r[i]]));
    const lItems = new Map<PathElement, unknown>();
    lPEs.forEach((pe, i) => lItems.has(pe) || lItems.set(pe, l[i]));
    const shared = rPEs.filter((pe) => lItems.has(pe));
    let nextShared = 0;
    const merged = new Set<PathElement>();
    const out: unknown[] = [];
    const emit = (pe: PathElement, lv: unknown, rv: unknown) => {
      path.push(pe);
      out.push(mergeValue(lv, rv, itemCur));
      path.pop();
    };
    let li = 0;
    let ri = 0;
    while (li < l.length || ri < r.length) {
      if (li < l.length && ri < r.length) {
        const pe = lPEs[li];
        if (pe === rPEs[ri]) {
          merged.add(pe);
          emit(pe, lItems.get(pe), rItems.get(pe));
          li++;
          ri++;
          if (shared[nextShared] === pe) nextShared++;
          continue;
        }
        // A shared item out of the applied order waits for its turn in the applied list.
        if (rItems.has(pe) && nextShared < shared.length && shared[nextShared] !== pe) {
          li++;
          continue;
        }
      }
      if (li < l.length) {
        const pe = lPEs[li];
        if (!rItems.has(pe)) {
          emit(pe, l[li], undefined);
          li++;
          continue;
        }
        if (merged.has(pe)) {
          li++;
          continue;
        }
      }
      if (ri < r.length) {
        const pe = rPEs[ri];
        merged.add(pe);
        emit(pe, lItems.get(pe), rItems.get(pe));
        ri++;
        if (shared[nextShared] === pe) nextShared++;
      }
    }
    return out;
  };
  return mergeValue(lhs, rhs, SchemaCursor.root(schema));
}

/**
 * The value without the paths of `set` (upstream RemoveItems): a member path removes the
 * whole value there; containers left empty by the removal disappear.
 */
export function removeItems(value: unknown, set: FieldSet, schema: ObjectSchema): unknown {
  const path: PathElement[] = [];
  const rm = (v: unknown, s: FieldSet, cur: SchemaCursor): unknown => {
    const shape = cur.shapeOf(v);
    if (shape.kind === 'scalar') return v;
    if (isEmptyContainer(v)) return v;
    if (isLeaf(shape)) return undefined;
    if (shape.kind === 'list') {
      const list = v as unknown[];
      const itemCur = cur.item();
      const out: unknown[] = [];
      list.forEach((item, i) => {
        const pe = itemElement(shape, itemCur, item, i, path);
        if (s.hasMember(pe)) return;
        const sub = s.withPrefix(pe);
        path.push(pe);
        const kept = sub.empty() ? item : rm(item, sub, itemCur);
        path.pop();
        if (kept !== undefined) out.push(kept);
      });
      return out.length ? out : undefined;
    }
    const out: JsonObject = {};
    for (const [k, child] of Object.entries(v as JsonObject)) {
      const pe = fieldElement(k);
      if (s.hasMember(pe)) continue;
      const sub = s.withPrefix(pe);
      path.push(pe);
      const kept = sub.empty() ? child : rm(child, sub, cur.child(k));
      path.pop();
      if (kept !== undefined) Object.defineProperty(out, k, { value: kept, writable: true, enumerable: true, configurable: true });
    }
    return Object.keys(out).length ? out : undefined;
  };
  return rm(value, set, SchemaCursor.root(schema)) ?? {};
}

/**
 * The set plus every struct field that has paths below it (upstream
 * EnsureNamedFieldsAreMembers): "a.b.c" also owns "a" when a is a struct field, not when it is
 * a map key.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, schema: ObjectSchema): FieldSet {
  const ensure = (s: FieldSet, cur: SchemaCursor): FieldSet =>
    s.withMembersAdded(
      (pe) => pe.startsWith('f:') && cur.isField(pe.slice(2)),
      (pe, c) => ensure(c, pe.startsWith('f:') ? cur.child(pe.slice(2)) : cur.item()),
    );
  return ensure(set, SchemaCursor.root(schema));
}
