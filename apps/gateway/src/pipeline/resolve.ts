import { hasProtobufSchema, type Catalog, type GroupVersionKind, type ResourceDef } from '@orch/api';
import { BoundedMap, StatusError, managerFromUserAgent } from '@orch/apimachinery';
import type { RequestContext } from '../registry/strategy';
import { checkIncludeObject, chooseRepresentation } from '../server/representation';
import type { ApiRequest } from './api-request';
import { requestUser } from './api-request';
import { parseFieldValidation } from './decode';
import { parseDryRun, parseIfMatch } from './query';

/** Verbs whose body is checked with the `fieldValidation` directive, and whose request context names a field manager. */
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

const NOT_FOUND = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource');

/**
 * The resolve stage: finds what a resource request is about in the catalog (after
 * `--runtime-config`; `*.k8s.io` group aliases when the compatibility option is on), the
 * subresource and the kind a body must have, and builds the registry's request context.
 * Unknown resources, cluster-scoped resources under a namespace and unknown subresources are
 * 404; a verb the resource does not serve is 405. Non-resource requests pass through.
 */
export function resolveStage(catalog: Catalog, opts: { k8sAliases: boolean }): (r: ApiRequest) => void {
  return (r) => {
    const { info, query, req } = r;
    if (!info.isResourceRequest) return;
    const def = catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!def || (!opts.k8sAliases && info.apiGroup.endsWith('.k8s.io'))) throw NOT_FOUND();
    if (info.namespace && def.scope === 'Cluster' && def.resource !== 'namespaces') throw NOT_FOUND();
    let bodyKind: GroupVersionKind = { group: def.group, version: def.version, kind: def.kind };
    const sub = info.subresource ? def.subresources.find((s) => s.name === info.subresource) : undefined;
    if (info.subresource) {
      if (!sub) throw NOT_FOUND();
      if (!sub.verbs.includes(info.verb as never)) {
        throw StatusError.methodNotSupported({ group: def.group, resource: `${def.resource}/${sub.name}` }, String(info.verb));
      }
      bodyKind = { group: sub.group ?? def.group, version: sub.version ?? def.version, kind: sub.kind };
    } else if (!def.virtual && (!def.verbs.includes(info.verb as never) || (info.verb === 'create' && info.name))) {
      // POST names a collection: one to a single object's path is not a create (upstream 405).
      throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, String(info.verb));
    }
    const write = WRITES.has(String(info.verb));
    const ctx: RequestContext = {
      user: requestUser(r),
      namespace: info.namespace,
      dryRun: parseDryRun(query),
      // Writes without fieldManager are recorded for the User-Agent's product (upstream); reads record nothing.
      fieldManager: write ? query.get('fieldManager') || fieldManagerOf(req.headers['user-agent']) : undefined,
      warnings: [],
      ifMatchResourceVersion: parseIfMatch(req.headers['if-match']),
    };
    // A stream (logs, exec, proxies) writes its own content type: Accept only picks an error's encoding.
    const accept = sub?.stream ? streamAccept(req.headers.accept) : req.headers.accept;
    const repr = chooseRepresentation(accept, info.verb === 'watch', servesProtobuf(def));
    // Everything about the answer is checked before the request runs: a write is never refused after it happened.
    if (repr.kind === 'table') checkIncludeObject(query.get('includeObject'));
    if (repr.kind === 'partial' && info.verb !== 'watch') {
      const list = info.verb === 'list' || info.verb === 'deletecollection';
      if (list && repr.as === 'PartialObjectMetadata') throw new StatusError(406, 'NotAcceptable', 'you requested PartialObjectMetadata, but the requested object is a list');
      if (!list && repr.as === 'PartialObjectMetadataList') throw new StatusError(406, 'NotAcceptable', 'you requested PartialObjectMetadataList, but the requested object is not a list');
    }
    r.target = {
      def,
      sub,
      bodyKind,
      namespace: def.scope === 'Namespaced' ? info.namespace : '',
      ctx,
      repr,
      fieldValidation: write ? parseFieldValidation(query) : 'Ignore',
    };
  };
}

/** Whether a resource has a protobuf form (a built-in kind with a schema), decided once per catalog entry. */
function servesProtobuf(def: ResourceDef): boolean {
  let yes = PROTOBUF.get(def);
  if (yes === undefined) PROTOBUF.set(def, (yes = !def.custom && hasProtobufSchema(def.group, def.version, def.kind)));
  return yes;
}

const PROTOBUF = new WeakMap<ResourceDef, boolean>();

/**
 * The field manager of a write without `fieldManager`, from its User-Agent (managerFromUserAgent),
 * remembered per User-Agent: clients send few distinct ones. Bounded as the representation cache
 * is: emptied when MAX_MANAGERS were seen, headers over MAX_CACHED_USER_AGENT characters not kept.
 */
export function fieldManagerOf(userAgent: string | undefined): string {
  // No User-Agent is the same as an empty one.
  const ua = userAgent ?? '';
  return ua.length > MAX_CACHED_USER_AGENT ? managerFromUserAgent(ua) : MANAGERS.get(ua, managerFromUserAgent);
}

export const MAX_MANAGERS = 512;
const MANAGERS = new BoundedMap<string, string>(MAX_MANAGERS);
const MAX_CACHED_USER_AGENT = 256;
/** Entries of the field manager cache (for its spec). */
export const cachedFieldManagers = (): number => MANAGERS.size;

/** The Accept a stream's errors are negotiated with: the client's when it names an API encoding, else JSON. */
function streamAccept(accept: string | undefined): string | undefined {
  try {
    chooseRepresentation(accept, false, true);
    return accept;
  } catch {
    return 'application/json';
  }
}
