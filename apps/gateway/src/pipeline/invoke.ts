import type { ResourceDef } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { KeyValue } from '@orch/storage';
import type { CreateResult, GenericStore } from '../registry/generic-store';
import type { SubresourceHandlers } from '../server/subresources';
import { bodyObject } from '../server/subresources';
import type { VirtualResources } from '../server/virtual';
import type { ApiRequest } from './api-request';
import { requestTarget } from './api-request';
import { checkWriteOptions, listOptions, queryBool } from './query';
import type { NonResourceEndpoints } from './non-resource';
import type { WatchStreams } from './watch';

export interface InvokeDeps {
  registries: Map<ResourceDef, GenericStore>;
  subresources: SubresourceHandlers;
  virtual: VirtualResources;
  watches: WatchStreams;
  nonResource: NonResourceEndpoints;
}

/**
 * The invoke stage: runs the request against its registry (the generic store of the
 * resource), a subresource or virtual handler, a watch stream, or a non-resource endpoint.
 * Sets `r.result` for the encode stage, or answers itself (`r.done`) for streams and
 * non-resource endpoints. A GET of an object the registry answers at once (readOne) is run
 * without a promise.
 */
export function invokeStage(deps: InvokeDeps): (r: ApiRequest) => void | Promise<void> {
  const invoke = invokeLater(deps);
  return (r) => {
    const registry = r.info.isResourceRequest && r.info.verb === 'get' && !r.info.subresource ? registryOf(deps, r) : undefined;
    if (!registry) return invoke(r);
    const one = readOne(r, registry);
    if (one instanceof Promise) return one.then((result) => void (r.result = result));
    r.result = one;
  };
}

/** The generic store a request without subresource runs against: undefined for a virtual resource; 404 for a custom resource whose definition went away between resolve and here. */
function registryOf(deps: InvokeDeps, r: ApiRequest): GenericStore | undefined {
  const def = requestTarget(r).def;
  if (def.virtual) return undefined;
  const registry = deps.registries.get(def);
  if (!registry) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  return registry;
}

/** The invoke stage's work for every request (GETs answered at once are run by the stage itself). */
function invokeLater(deps: InvokeDeps): (r: ApiRequest) => Promise<void> {
  return async (r) => {
    if (!r.info.isResourceRequest) {
      r.status = await deps.nonResource.serve(r);
      r.done = true;
      return;
    }
    const t = requestTarget(r);
    const { def, ctx, namespace: ns } = t;
    const { info, query, req } = r;
    const body = r.body ?? { type: 'none' };
    if (info.subresource) {
      const result = await deps.subresources.handle({ req, reply: r.reply, info, def, ctx, query, registries: deps.registries, body });
      if (typeof result === 'number') {
        r.status = result;
        r.done = true;
      } else {
        r.result = result;
      }
      return;
    }
    if (def.virtual) {
      r.result = await deps.virtual.handle({ req, info, def, ctx, query, body });
      return;
    }
    const registry = registryOf(deps, r)!;
    // A GET of the registry is run by the stage itself (readOne).
    switch (info.verb) {
      case 'list':
        r.result = await readList(r, registry);
        return;
      case 'watch':
        r.status = await deps.watches.serve(r, registry);
        r.done = true;
        return;
      case 'create': {
        checkWriteOptions('CreateOptions', query);
        r.result = writeResult(r, 201, await registry.create(ns, bodyObject(body), ctx));
        return;
      }
      case 'update': {
        checkWriteOptions('UpdateOptions', query);
        const res = await registry.update(ns, info.name, bodyObject(body), ctx);
        r.result = writeResult(r, res.created ? 201 : 200, res);
        return;
      }
      case 'patch': {
        checkWriteOptions('PatchOptions', query, body.type === 'apply');
        if (body.type === 'apply') {
          const res = await registry.apply(ns, info.name, body.config, queryBool(query, 'force') ?? false, ctx);
          r.result = writeResult(r, res.created ? 201 : 200, res);
          return;
        }
        if (body.type !== 'patch') throw StatusError.badRequest('the request needs a patch body');
        r.result = writeResult(r, 200, await registry.patch(ns, info.name, body.apply, ctx));
        return;
      }
      case 'delete': {
        const options = body.type === 'deleteOptions' ? body.options : {};
        const res = await registry.delete(ns, info.name, options, ctx);
        if (!res.deleted || def.resource === 'pods') {
          r.result = { status: options.orphanDependents === false && !res.deleted ? 202 : 200, body: res.object };
          return;
        }
        r.result = {
          status: 200,
          body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: info.name, group: def.group, kind: def.resource, uid: res.object.metadata.uid } },
        };
        return;
      }
      case 'deletecollection': {
        const options = body.type === 'deleteOptions' ? body.options : {};
        r.result = { status: 200, body: await registry.deleteCollection(ns, listOptions(query), options, ctx) };
        return;
      }
      default:
        throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, String(info.verb));
    }
  };
}

type Result = NonNullable<ApiRequest['result']>;

/**
 * A GET: the stored JSON text or stored value where the representation allows (JSON text, protobuf
 * from messages encoded once), else the object. Without a promise where the registry answers at
 * once (from the watch cache: GenericStore.getJson, getVerbatim).
 */
function readOne(r: ApiRequest, registry: GenericStore): Result | Promise<Result> {
  const { namespace: ns } = requestTarget(r);
  const rv = r.query.get('resourceVersion') ?? undefined;
  if (servesStoredJson(r)) {
    const got = registry.getJson(ns, r.info.name, rv);
    return got instanceof Promise ? got.then(jsonResult) : jsonResult(got);
  }
  if (r.target!.repr.kind === 'protobuf') {
    const got = registry.getVerbatim(ns, r.info.name, rv);
    return got instanceof Promise ? got.then(verbatimResult) : verbatimResult(got);
  }
  return registry.get(ns, r.info.name, rv).then((body) => ({ status: 200, body }));
}

function jsonResult(got: { json: string } | { object: KubeObject }): Result {
  return 'json' in got ? { status: 200, body: undefined, rawJson: got.json } : { status: 200, body: got.object };
}

function verbatimResult(got: { stored: KeyValue } | { object: KubeObject }): Result {
  return 'stored' in got ? { status: 200, body: undefined, stored: { object: got.stored } } : { status: 200, body: got.object };
}

/** A list: the page's stored values where the representation allows (JSON written from the stored texts, protobuf from messages encoded once), else the objects. */
async function readList(r: ApiRequest, registry: GenericStore): Promise<Result> {
  const { namespace: ns } = requestTarget(r);
  const opts = listOptions(r.query);
  if (servesStoredJson(r) || r.target!.repr.kind === 'protobuf') {
    const page = await registry.listVerbatim(ns, opts);
    if (page) return { status: 200, body: undefined, stored: { list: page } };
  }
  return { status: 200, body: await registry.list(ns, opts) };
}

/** Whether the response may be stored JSON as it is (the get and list fast paths): plain JSON, not pretty, the served group (not an alias). */
function servesStoredJson(r: ApiRequest): boolean {
  const t = r.target!;
  return t.repr.kind === 'json' && !queryBool(r.query, 'pretty') && r.info.apiGroup === t.def.group;
}

/** The response of a write: the stored JSON text where the registry has it and it may be sent as it is, else the object. */
function writeResult(r: ApiRequest, status: number, written: CreateResult): NonNullable<ApiRequest['result']> {
  return written.json !== undefined && servesStoredJson(r) ? { status, body: undefined, rawJson: written.json } : { status, body: written.object };
}
