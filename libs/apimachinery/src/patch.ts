import { applyPatch, type Operation } from 'fast-json-patch';
import { StatusError } from './errors';

// PATCH bodies: JSON merge patch (RFC 7386) and JSON patch (RFC 6902), with upstream's
// status codes. Neither function mutates its inputs.

/** Most operations one JSON patch may carry (upstream maxJSONPatchOperations). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * RFC 7386 merge patch, as upstream (evanphx/json-patch MergePatch) applies it: `null`
 * deletes a key; an object merges recursively; anything else replaces. Values taken from
 * the patch are copied with their nested `null`s removed (also inside arrays, as upstream).
 * The patch must be an object: anything else is upstream's 400 "Invalid JSON Patch".
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) throw StatusError.badRequest('Invalid JSON Patch');
  const out = isObject(target) ? (structuredClone(target) as JsonObject) : {};
  mergeInto(out, patch);
  return out;
}

/** Merges `patch` into `target` (a private copy). */
function mergeInto(target: JsonObject, patch: JsonObject): void {
  for (const [k, v] of Object.entries(patch)) {
    const cur = Object.hasOwn(target, k) ? target[k] : undefined;
    if (v === null) delete target[k];
    else if (isObject(v) && isObject(cur)) mergeInto(cur, v);
    else setOwn(target, k, pruneNulls(v));
  }
}

/** A deep copy of a patch value without `null` object members. */
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) setOwn(out, k, pruneNulls(x));
  return out;
}

/** Defines an own data property, so keys like `__proto__` stay plain data as in JSON.parse. */
function setOwn(obj: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Go's name for a JSON value's type in `json: cannot unmarshal X into ...` errors. */
function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/**
 * RFC 6902 JSON patch (including `test`) on a copy of `target`. Status codes as upstream:
 * a document that is not an array of objects is 400; more than 10000 operations is 413;
 * an operation that cannot be applied (failed `test`, bad path, unknown op) is 422 with
 * upstream's generic message, the concrete problem in details.causes.
 */
export function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (ops === null) return structuredClone(target);
  if (!Array.isArray(ops)) throw StatusError.badRequest(`json: cannot unmarshal ${goJsonType(ops)} into Go value of type jsonpatch.Patch`);
  const bad = ops.find((op) => !isObject(op));
  if (bad !== undefined) throw StatusError.badRequest(`json: cannot unmarshal ${goJsonType(bad)} into Go value of type jsonpatch.Operation`);
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw StatusError.entityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
  }
  try {
    // Clone the operations too: applied values would otherwise be shared with the patch.
    return applyPatch(target, structuredClone(ops) as Operation[], true, false).newDocument;
  } catch (e) {
    const index = (e as { index?: number }).index;
    const problem = (e as Error).message.split('\n')[0];
    throw StatusError.requestRejected(index === undefined ? problem : `operation ${index}: ${problem}`);
  }
}
