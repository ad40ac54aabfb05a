import { FieldError, StatusError, validateFieldManager } from '@orch/apimachinery';
import type { ListOptions } from '../registry/generic-store';

/**
 * `If-Match` (SPEC Media types): a resourceVersion, quoted like an ETag or bare; `*` only
 * requires the object to exist. Several values are not supported (400).
 */
export function parseIfMatch(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const raw = (Array.isArray(header) ? header.join(',') : header).trim();
  if (raw === '*') return '*';
  if (raw.includes(',')) throw StatusError.badRequest('If-Match with several entity tags is not supported: give one resourceVersion');
  const m = /^(?:W\/)?"?([^"]*)"?$/.exec(raw);
  if (!m || !/^\d+$/.test(m[1])) throw StatusError.badRequest(`If-Match must carry a resourceVersion, got ${JSON.stringify(raw)}`);
  return m[1];
}

/** dryRun: `All`, or present with no value (SPEC query parameters); anything else is 400. */
export function parseDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  for (const v of values) {
    if (v !== 'All' && v !== '') throw StatusError.badRequest(`Invalid dryRun value: ${JSON.stringify(v)}: supported values: "All"`);
  }
  return true;
}

/**
 * The most items one list page carries: a larger `limit` is clamped to it, and the client
 * follows the continue token as for any page (the API allows fewer items than asked for).
 */
export const MAX_LIST_LIMIT = 10_000;
/** `limit` is an int64 in the API. */
const INT64_MAX = 2n ** 63n - 1n;

/** Parses list/watch query parameters; a limit that is not an int64 is 400, a large one clamped. */
export function listOptions(query: URLSearchParams): ListOptions {
  const limitParam = query.get('limit');
  let limit: number | undefined;
  if (limitParam !== null && limitParam !== '') {
    if (!/^\d+$/.test(limitParam) || BigInt(limitParam) > INT64_MAX) throw StatusError.badRequest(`invalid limit: ${JSON.stringify(limitParam)}: must be a non-negative 64-bit integer`);
    limit = Math.min(Number(limitParam), MAX_LIST_LIMIT);
  }
  return {
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
    limit,
    continue: query.get('continue') || undefined,
    resourceVersion: query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: query.get('resourceVersionMatch') || undefined,
  };
}

/**
 * upstream Validate{Create,Update,Patch}Options for the field manager: printable and at most
 * 128 bytes; for patches, `force` only with apply, which also needs an explicit fieldManager.
 * Problems are a 422 about the options object.
 */
export function checkWriteOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', query: URLSearchParams, apply = false): void {
  const manager = query.get('fieldManager') ?? '';
  const errs: FieldError[] = [];
  if (kind === 'PatchOptions' && !apply && query.has('force')) errs.push(FieldError.forbidden('force', 'may not be specified for non-apply patch'));
  if (apply && !manager) errs.push(FieldError.required('fieldManager', 'is required for apply patch'));
  errs.push(...validateFieldManager(manager));
  if (errs.length) throw StatusError.invalid(kind, 'meta.orch.io', '', errs);
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's strconv.ParseBool: `1 t T TRUE true True` and `0 f F FALSE false False`; undefined for anything else. */
export function parseGoBool(v: string): boolean | undefined {
  return GO_TRUE.has(v) ? true : GO_FALSE.has(v) ? false : undefined;
}

/**
 * A boolean query parameter (`watch`, `allowWatchBookmarks`, `sendInitialEvents`, `pretty`,
 * `force`, `orphanDependents`, `follow`, ...), the one parser for all of them: absent →
 * undefined (the caller's default); present without a value → true (the flag form,
 * `?pretty`); a value Go's strconv.ParseBool accepts → that value (clients send `true`,
 * `1` or, like the Python client, `True`); anything else → 400 naming the parameter.
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  if (v === '') return true;
  const b = parseGoBool(v);
  if (b === undefined) throw StatusError.badRequest(`invalid value for the boolean query parameter ${name}: ${JSON.stringify(v)}: want one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False`);
  return b;
}
