import type { Verb } from '@orch/api';
import { parseGoBool } from '../pipeline/query';

/**
 * What a request is about, parsed once from method + URL at the edge of the chain and
 * only read afterwards (STYLE 3; SPEC "Request verb mapping for authorization").
 */
export interface RequestInfo {
  /** True for /api/v1/... and /apis/<group>/<version>/<resource>...; false for discovery, health, etc. */
  isResourceRequest: boolean;
  path: string;
  /** API verb for resource requests (get, list, watch, create, ...); lowercase HTTP method otherwise. */
  verb: Verb | string;
  /** 'api' or 'apis' for API paths, '' otherwise. */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Path segments after the resource name and subresource (e.g. proxy paths). */
  rest: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Parses method and URL path (no query string) into a RequestInfo. `query` decides watch. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    rest: [],
  };
  const parts = pathSegments(path);
  if (parts.length === 0 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  info.apiPrefix = parts[0];
  // i: the first segment after the group version.
  let i: number;
  if (info.apiPrefix === 'apis') {
    if (parts.length < 3) return info; // /apis, /apis/<group>: discovery
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    i = 3;
  } else {
    if (parts.length < 2) return info; // /api
    info.apiVersion = parts[1];
    i = 2;
  }
  if (parts.length === i) return info; // /api/v1, /apis/<g>/<v>: discovery
  info.isResourceRequest = true;

  // Legacy /watch/ prefix: /api/v1/watch/namespaces/x/pods
  const legacyWatch = parts[i] === 'watch';
  if (legacyWatch) i++;

  const left = parts.length - i;
  if (parts[i] === 'namespaces') {
    if (left >= 3) {
      // namespaces/<ns>/<resource>[/<name>[/<subresource>...]], except namespaces/<name>/status|finalize
      if (left === 3 && NAMESPACE_SUBRESOURCES.has(parts[i + 2])) {
        info.resource = 'namespaces';
        info.name = parts[i + 1];
        info.subresource = parts[i + 2];
      } else {
        info.namespace = parts[i + 1];
        assignResource(info, parts, i + 2);
      }
    } else {
      info.resource = 'namespaces';
      info.name = parts[i + 1] ?? '';
      // A namespace's own object is in no namespace for authorization, but upstream reports
      // the namespace name as the request's namespace.
      info.namespace = info.name;
    }
  } else {
    assignResource(info, parts, i);
  }

  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
      info.verb = legacyWatch || isWatch(query.get('watch')) ? 'watch' : info.name ? 'get' : 'list';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
  }
  return info;
}

/**
 * The non-empty segments of a path, each percent-decoded (kept as is when it does not decode),
 * in one pass: no split, filter and map arrays (parseRequestInfo was 3.6% of a get's CPU).
 */
function pathSegments(path: string): string[] {
  const parts: string[] = [];
  for (let from = 0; from < path.length; ) {
    let to = path.indexOf('/', from);
    if (to < 0) to = path.length;
    if (to > from) parts.push(safeDecode(path.slice(from, to)));
    from = to + 1;
  }
  return parts;
}

/** resource, name, subresource and the segments after them, from parts[at]. */
function assignResource(info: RequestInfo, parts: readonly string[], at: number): void {
  info.resource = parts[at] ?? '';
  info.name = parts[at + 1] ?? '';
  info.subresource = parts[at + 2] ?? '';
  info.rest = parts.slice(at + 3);
}

/**
 * `?watch=` as the verb needs it: true unless absent or a Go false (`0 f F FALSE false False`),
 * as upstream reads it for authorization; an unparsable value is then a 400 (watch stage).
 */
function isWatch(v: string | null): boolean {
  return v !== null && parseGoBool(v) !== false;
}

function safeDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
