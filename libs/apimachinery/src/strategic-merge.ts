import { StatusError } from './errors';
import { DEDUCED_SCHEMA, SchemaCursor, type ObjectSchema } from './schema-walker';

// Strategic merge patch (upstream k8s.io/apimachinery/pkg/util/strategicpatch, applied with
// MergeParallelList and IgnoreUnmatchedNulls as the API server does). Merge keys and patch
// strategies come from the schema; positions without one merge maps and replace lists, like
// a JSON merge patch.

type JsonObject = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

const ERR_BAD_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const ERR_BAD_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_BAD_SET_ELEMENT_ORDER = 'invalid patch format of setElementOrder list';

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Go's dynamic type of a decoded JSON value, for upstream's type comparisons. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'slice';
  return typeof v === 'object' ? 'map' : typeof v;
}

function setOwn(obj: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A patch the server cannot merge (upstream returns these as plain errors): 400. */
function badPatch(message: string): StatusError {
  return StatusError.badRequest(message);
}

/** Upstream's generic 422 for patches that are well formed but cannot apply (lists of lists). */
function rejected(message: string): StatusError {
  return StatusError.requestRejected(message);
}

function noMergeKey(item: unknown, key: string): StatusError {
  return badPatch(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
}

/** Strategy and merge key of member `key` of the struct at `cur` (retainKeys is a directive, not a strategy). */
function fieldMeta(cur: SchemaCursor, key: string): { strategy: string; mergeKey: string } {
  const shape = cur.child(key).declared();
  const strategies = (shape?.patchStrategy ?? '').split(',').filter((s) => s && s !== 'retainKeys');
  return { strategy: strategies[0] ?? '', mergeKey: shape?.patchMergeKey ?? '' };
}

/**
 * Applies a strategic merge patch to `original` (neither is mutated) and returns the result.
 * Directives: `$patch: replace|delete` on maps and list items, `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`. Malformed patches are 400;
 * lists of lists are upstream's 422.
 */
export function strategicMergePatch(original: unknown, patch: unknown, schema: ObjectSchema = DEDUCED_SCHEMA): JsonObject {
  if (!isObject(patch)) throw badPatch('invalid JSON document');
  const base = isObject(original) ? (structuredClone(original) as JsonObject) : {};
  return mergeMap(base, structuredClone(patch) as JsonObject, SchemaCursor.root(schema));
}

/** Merges `patch` into `original`; both are private copies that may be changed. */
function mergeMap(original: JsonObject, patch: JsonObject, cur: SchemaCursor): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) return directiveInMap(patch, cur);
  applyRetainKeys(original, patch);
  mergeSetElementOrder(original, patch, cur);
  for (const [rawKey, patchV] of Object.entries(patch)) {
    let key = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(`${DELETE_FROM_PRIMITIVE_LIST}/`) || rawKey === DELETE_FROM_PRIMITIVE_LIST) {
      key = extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST, ERR_BAD_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[key];
      continue;
    }
    const present = Object.hasOwn(original, key);
    if (!present || jsonType(original[key]) !== jsonType(patchV)) {
      if (!isDeleteList) setOwn(original, key, fresh(patchV, cur, key));
      continue;
    }
    const origV = original[key];
    const { strategy, mergeKey } = fieldMeta(cur, key);
    if (isObject(origV)) {
      setOwn(original, key, strategy === 'replace' ? fresh(patchV, cur, key) : mergeMap(origV, patchV as JsonObject, cur.child(key)));
    } else if (Array.isArray(origV)) {
      setOwn(original, key, mergeList(origV, patchV as unknown[], cur.child(key), strategy, mergeKey, isDeleteList));
    } else {
      setOwn(original, key, patchV);
    }
  }
  return original;
}

/** A patch value that lands where nothing merges with it: directives applied, nulls dropped. */
function fresh(value: unknown, cur: SchemaCursor, key: string): unknown {
  if (isObject(value)) return mergeMap({}, value, cur.child(key));
  if (Array.isArray(value)) return freshList(value, cur.child(key));
  return value;
}

/** A list taken from the patch as a whole: `$patch` marker items dropped, items made fresh. */
function freshList(list: unknown[], listCur: SchemaCursor): unknown[] {
  const itemCur = listCur.item();
  return list.filter((v) => !(isObject(v) && Object.hasOwn(v, DIRECTIVE))).map((v) => freshItem(v, itemCur));
}

/** A fresh list item (or an item of a replaced list). */
function freshItem(item: unknown, itemCur: SchemaCursor): unknown {
  return isObject(item) ? mergeMap({}, item, itemCur) : item;
}

function directiveInMap(patch: JsonObject, cur: SchemaCursor): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') {
    delete patch[DIRECTIVE];
    return mergeMap({}, patch, cur);
  }
  if (directive === 'delete') return {};
  throw badPatch(`unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`);
}

function extractKey(key: string, prefix: string, formatError: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw badPatch(formatError);
  return key.slice(slash + 1);
}

/** `$retainKeys`: keys of original missing from the list are cleared; every patched key must be listed. */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw badPatch(ERR_BAD_RETAIN_KEYS);
  const keep = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(`${DELETE_FROM_PRIMITIVE_LIST}/`) || k.startsWith(`${SET_ELEMENT_ORDER}/`)) continue;
    if (!keep.has(k)) throw badPatch(ERR_BAD_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/**
 * `$setElementOrder/<list>`: merges the list (when patched) and orders the result. The order
 * list wins, then the order in the patch, then the live order (upstream mergePatchIntoOriginal).
 * Handled keys are removed from the patch.
 */
function mergeSetElementOrder(original: JsonObject, patch: JsonObject, cur: SchemaCursor): void {
  for (const [key, orderV] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    delete patch[key];
    if (!Array.isArray(orderV)) throw badPatch(ERR_BAD_SET_ELEMENT_ORDER);
    const listKey = extractKey(key, SET_ELEMENT_ORDER, ERR_BAD_SET_ELEMENT_ORDER);
    const foundOriginal = Object.hasOwn(original, listKey) && original[listKey] !== null;
    const foundPatch = Object.hasOwn(patch, listKey) && patch[listKey] !== null;
    const origList = foundOriginal ? original[listKey] : undefined;
    const patchList = foundPatch ? patch[listKey] : undefined;
    if (foundOriginal && !Array.isArray(origList)) throw badPatch(ERR_BAD_SET_ELEMENT_ORDER);
    if (foundPatch && !Array.isArray(patchList)) throw badPatch(ERR_BAD_SET_ELEMENT_ORDER);
    if (!foundOriginal && !foundPatch) continue;
    const { strategy, mergeKey } = fieldMeta(cur, listKey);
    const listCur = cur.child(listKey);
    validatePatchWithSetOrderList((patchList as unknown[] | undefined) ?? [], orderV, mergeKey);
    let merged: unknown[];
    if (!foundPatch) merged = origList as unknown[];
    else if (!foundOriginal) merged = freshList(patchList as unknown[], listCur);
    else merged = mergeList(origList as unknown[], patchList as unknown[], listCur, strategy, mergeKey, false);
    const [patchItems, serverOnly] = partition(merged, orderV, mergeKey);
    const kind = elementKind([(origList as unknown[] | undefined) ?? [], (patchList as unknown[] | undefined) ?? []]);
    setOwn(original, listKey, normalizeElementOrder(patchItems, serverOnly, orderV, (origList as unknown[] | undefined) ?? [], mergeKey, kind === 'map'));
    delete patch[listKey];
  }
}

/** The patch list must follow the relative order of the `$setElementOrder` list (deletions aside). */
function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? patchList.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete')) : patchList;
  let p = 0;
  let o = 0;
  while (p < nonDelete.length && o < order.length) {
    const item = nonDelete[p];
    if (isObject(item) && Object.hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (sameKey(item, order[o], mergeKey)) p++;
    o++;
  }
  if (p < nonDelete.length) {
    throw badPatch(`The order in patch list:\n${JSON.stringify(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${JSON.stringify(order)}\n`);
  }
}

function sameKey(a: unknown, b: unknown, mergeKey: string): boolean {
  if (!mergeKey) return a === b;
  if (!isObject(a) || !Object.hasOwn(a, mergeKey)) throw noMergeKey(a, mergeKey);
  if (!isObject(b) || !Object.hasOwn(b, mergeKey)) throw noMergeKey(b, mergeKey);
  return a[mergeKey] === b[mergeKey];
}

/** Merges a list field by its strategy: `merge` (and deletion lists) merge, anything else replaces. */
function mergeList(original: unknown[], patch: unknown[], listCur: SchemaCursor, strategy: string, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (!Array.isArray(patch)) throw badPatch(`expected a list, got ${JSON.stringify(patch)}`);
  if (strategy === 'merge' || isDeleteList) return mergeSlice(original, patch, listCur.item(), mergeKey, isDeleteList);
  return freshList(patch, listCur);
}

type ElementKind = 'map' | 'scalar' | 'none';

/** The common element type of the lists; mixed types and lists of lists are errors. */
function elementKind(lists: unknown[][]): ElementKind {
  let seen: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const t = jsonType(v);
      if (seen === undefined) {
        if (t === 'slice') throw rejected('lists of lists are not supported');
        seen = t;
      } else if (seen !== t) {
        throw badPatch(`list element types are not identical: ${JSON.stringify(lists)}`);
      }
    }
  }
  if (seen === undefined) return 'none';
  return seen === 'map' ? 'map' : 'scalar';
}

function mergeSlice(original: unknown[], patch: unknown[], itemCur: SchemaCursor, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind([original, patch]);
  let merged: unknown[];
  let orig = original;
  let patchItems = patch;
  if (kind !== 'map') {
    if (isDeleteList) {
      const drop = new Set(patch);
      return original.filter((v) => !drop.has(v));
    }
    merged = dedupe([...original, ...patch]);
  } else {
    if (!mergeKey) throw badPatch('cannot merge lists without merge key');
    [orig, patchItems] = withoutSpecialElements(original, patch, mergeKey, itemCur);
    merged = mergeByKey(orig, patchItems, mergeKey, itemCur);
  }
  const [inPatch, serverOnly] = partition(merged, patchItems, kind === 'map' ? mergeKey : '');
  return normalizeElementOrder(inPatch, serverOnly, patchItems, orig, kind === 'map' ? mergeKey : '', kind === 'map');
}

function dedupe(items: unknown[]): unknown[] {
  const seen = new Set<unknown>();
  return items.filter((v) => (seen.has(v) ? false : (seen.add(v), true)));
}

/**
 * Handles `$patch` items of a list of maps: `delete` removes the matching items from the
 * original, `replace` makes the remaining patch items the whole list. Returns the original
 * and the patch without those items.
 */
function withoutSpecialElements(original: unknown[], patch: unknown[], mergeKey: string, itemCur: SchemaCursor): [unknown[], unknown[]] {
  const rest: unknown[] = [];
  let replace = false;
  let orig = original;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    switch (item[DIRECTIVE]) {
      case 'delete':
        if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        orig = orig.filter((o) => !(isObject(o) && Object.hasOwn(o, mergeKey) && o[mergeKey] === item[mergeKey]));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw badPatch('merging lists cannot yet be specified in the patch');
      default:
        throw badPatch(`unknown patch type: ${String(item[DIRECTIVE])} in map: ${JSON.stringify(item)}`);
    }
  }
  if (replace) return [rest.map((v) => freshItem(v, itemCur)), []];
  return [orig, rest];
}

/** Patch items merge into the original item with the same merge key value, or are appended. */
function mergeByKey(original: unknown[], patch: unknown[], mergeKey: string, itemCur: SchemaCursor): unknown[] {
  const out = [...original];
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const i = out.findIndex((o) => {
      if (!isObject(o)) throw badPatch(`value for key ${mergeKey} is not a map.`);
      return Object.hasOwn(o, mergeKey) && o[mergeKey] === item[mergeKey];
    });
    if (i >= 0) out[i] = mergeMap(out[i] as JsonObject, item, itemCur);
    else out.push(freshItem(item, itemCur));
  }
  return out;
}

/** Identity of an item for ordering: the merge key value of a map, else the value; Go nil for a missing key. */
function identity(item: unknown, mergeKey: string): unknown {
  if (!mergeKey) return item;
  return isObject(item) ? (item[mergeKey] ?? null) : null;
}

/** Splits items into those present in `by` and the others (upstream partition*ByPresentInList). */
function partition(items: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const present = new Set<unknown>();
  for (const b of by) {
    if (mergeKey && !isObject(b)) throw badPatch(`value for key ${mergeKey} is not a map.`);
    present.add(identity(b, mergeKey));
  }
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of items) {
    if (mergeKey && !(isObject(v) && Object.hasOwn(v, mergeKey))) throw noMergeKey(v, mergeKey);
    (present.has(identity(v, mergeKey)) ? inBy : rest).push(v);
  }
  return [inBy, rest];
}

function indexer(list: unknown[], mergeKey: string): (item: unknown) => number {
  const at = new Map<unknown, number>();
  list.forEach((v, i) => {
    const id = identity(v, mergeKey);
    if (!at.has(id)) at.set(id, i);
  });
  return (item) => at.get(identity(item, mergeKey)) ?? -1;
}

/**
 * Orders patch items by `patchOrder` and server-only items by `serverOrder`, then interleaves
 * them keeping both relative orders, server-only items placed by their live position.
 */
function normalizeElementOrder(patch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, maps: boolean): unknown[] {
  const sortedPatch = normalizeSliceOrder(patch, patchOrder, mergeKey, maps);
  const sortedServer = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, maps);
  const serverIndex = indexer(serverOrder, mergeKey);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < sortedServer.length || j < sortedPatch.length) {
    if (i >= sortedServer.length) out.push(sortedPatch[j++]);
    else if (j >= sortedPatch.length) out.push(sortedServer[i++]);
    else {
      const li = serverIndex(sortedServer[i]);
      const ri = serverIndex(sortedPatch[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(sortedServer[i++]);
      else out.push(sortedPatch[j++]);
    }
  }
  return out;
}

/** Sorts `items` by their position in `order`; `$patch: delete` items go last. */
function normalizeSliceOrder(items: unknown[], order: unknown[], mergeKey: string, maps: boolean): unknown[] {
  let toSort = items;
  let toDelete: unknown[] = [];
  if (maps) {
    for (const v of [...items, ...order]) if (!(isObject(v) && Object.hasOwn(v, mergeKey))) throw noMergeKey(v, mergeKey);
    toSort = items.filter((v) => (v as JsonObject)[DIRECTIVE] !== 'delete');
    toDelete = items.filter((v) => (v as JsonObject)[DIRECTIVE] === 'delete');
  }
  const at = indexer(order, mergeKey);
  const idx = toSort.map(at);
  let sorted: unknown[];
  if (idx.every((i) => i >= 0)) {
    sorted = toSort.map((v, k) => ({ v, i: idx[k] })).sort((a, b) => a.i - b.i).map((e) => e.v);
  } else {
    // Upstream's comparator treats unknown items as smaller; insertion sort reproduces Go's stable sort.
    const entries = toSort.map((v, k) => ({ v, i: idx[k] }));
    const less = (a: { i: number }, b: { i: number }) => !(a.i >= 0 && b.i >= 0) || a.i < b.i;
    for (let k = 1; k < entries.length; k++) {
      for (let m = k; m > 0 && less(entries[m], entries[m - 1]); m--) [entries[m], entries[m - 1]] = [entries[m - 1], entries[m]];
    }
    sorted = entries.map((e) => e.v);
  }
  return [...sorted, ...toDelete];
}
