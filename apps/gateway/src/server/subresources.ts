import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDef } from '@orch/api';
import { FieldError, StatusError, type DeleteOptions, type KubeObject } from '@orch/apimachinery';
import type { GenericStore } from '../registry/generic-store';
import { unhandled } from '../registry/kinds/binding';
import { nowTime } from '../registry/object-meta';
import type { RequestContext, WriteAdmission } from '../registry/strategy';
import type { RequestInfo } from '../request/request-info';
import type { DecodedRequestBody } from '../pipeline/api-request';
import type { ServiceAccountTokenIssuer } from '@orch/auth';
import { admitEviction } from './eviction';
import type { NodeProxy, StreamRequest } from './node-proxy';
import { createToken } from './token-request';

/** What a handler answers: a body for the encode stage to write. */
export type InvokeResult = { status: number; body: unknown };

export interface SubresourceRequest {
  req: FastifyRequest;
  info: RequestInfo;
  def: ResourceDef;
  ctx: RequestContext;
  query: URLSearchParams;
  registries: Map<ResourceDef, GenericStore>;
  /** The request body as the decode stage read it. */
  body: DecodedRequestBody;
  /** For subresources that stream a node agent's answer (log, proxy). */
  reply?: FastifyReply;
}

/** The decoded object of a create/update body (the decode stage guarantees one for these verbs). */
export function bodyObject(body: DecodedRequestBody): KubeObject {
  if (body.type !== 'object') throw StatusError.badRequest('the request needs an object body');
  return body.object;
}

/**
 * Runs a request's admission on an object the registry does not store as such (a Scale,
 * Binding, Eviction, TokenRequest or review body): mutating, then validating. The registry
 * writes that follow run without admission (`withoutAdmission`), as upstream's do.
 */
export async function admitObject(admission: WriteAdmission | undefined, operation: 'CREATE' | 'UPDATE', object: KubeObject, old?: KubeObject): Promise<void> {
  await admission?.mutate(operation, object, old);
  await admission?.validate(operation, object, old);
}

/** The request context for a handler's own registry writes (no admission of the outer request). */
export function withoutAdmission(ctx: RequestContext): RequestContext {
  if (!ctx.admission) return ctx;
  const { admission: _a, ...rest } = ctx;
  return rest;
}

interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

interface Scalable extends KubeObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | Record<string, string> };
  status?: { replicas?: number };
}

const SUCCESS = (details: Record<string, unknown>) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201, details });

/**
 * Subresources: status and finalize (part-of-object writes through the generic store),
 * scale (autoscaling/v1 Scale view of replicas), binding (assigns a pod to a node) and
 * eviction (API-initiated pod deletion), log and proxy (streamed from node agents through
 * `nodeProxy`). Others answer 404 until their issue lands.
 */
export class SubresourceHandlers {
  constructor(
    private readonly nodeProxy?: NodeProxy,
    /** TokenRequest signing (`serviceaccounts/<name>/token`). */
    private readonly tokens?: { issuer: ServiceAccountTokenIssuer; apiAudiences: string[] },
  ) {}

  /**
   * Answers a subresource request (the resolve stage checked that it exists and serves the
   * verb): a body to encode, or the HTTP status of a response streamed from a node agent.
   */
  async handle(r: SubresourceRequest): Promise<InvokeResult | number> {
    const { info, def } = r;
    const registry = r.registries.get(def)!;
    const ns = def.scope === 'Namespaced' ? info.namespace : '';
    const sub = registry.kind.subresources[info.subresource];
    switch (sub?.serve) {
      case 'part':
        return this.partOfObject(r, registry, ns, info.subresource);
      case 'scale':
        return this.scale(r, registry, ns);
      case 'podBinding':
        return this.binding(r, registry, ns, info.name);
      case 'eviction':
        return this.eviction(r, registry, ns);
      case 'token':
        if (this.tokens) return this.token(r, ns);
        break;
      case 'log':
        if (this.nodeProxy) return this.nodeProxy.podLog(r);
        break;
      case 'nodeProxy':
      case 'podProxy':
      case 'serviceProxy':
        if (this.nodeProxy) return this.nodeProxy[sub.serve](r);
        break;
      case 'exec':
      case 'attach':
      case 'portforward':
        throw StatusError.badRequest(`Upgrade request required: ${def.resource}/${info.subresource} streams over a WebSocket or SPDY/3.1 upgrade`);
      case undefined:
        break;
      default:
        return unhandled(sub.serve);
    }
    throw new StatusError(404, 'NotFound', `the ${def.resource}/${info.subresource} subresource is not served yet`);
  }

  /**
   * An upgrade request (pods/exec, pods/attach, pods/portforward), after authentication and
   * authorization: streamed to the pod's node agent. Throws a StatusError before anything
   * was sent; the caller answers it on the raw socket.
   */
  async stream(r: StreamRequest & { def: ResourceDef }): Promise<void> {
    const serve = r.registries.get(r.def)?.kind.subresources[r.info.subresource]?.serve;
    if (serve !== 'exec' && serve !== 'attach' && serve !== 'portforward') {
      throw StatusError.badRequest(`${r.info.resource}${r.info.subresource ? `/${r.info.subresource}` : ''} does not take upgrades (pods/exec, pods/attach and pods/portforward do)`);
    }
    if (!this.nodeProxy) throw new StatusError(404, 'NotFound', `the pods/${r.info.subresource} subresource is not served`);
    await this.nodeProxy.podStream(r);
  }

  private async partOfObject(r: SubresourceRequest, registry: GenericStore, ns: string, subresource: string): Promise<InvokeResult> {
    const { info, ctx } = r;
    switch (info.verb) {
      case 'get':
        return { status: 200, body: await registry.get(ns, info.name) };
      case 'update':
        return { status: 200, body: (await registry.update(ns, info.name, bodyObject(r.body), ctx, subresource)).object };
      case 'patch': {
        if (r.body.type !== 'patch') throw StatusError.unsupportedMediaType('application/apply-patch+yaml', ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
        return { status: 200, body: (await registry.patch(ns, info.name, r.body.apply, ctx, subresource)).object };
      }
    }
    throw StatusError.methodNotSupported({ group: r.def.group, resource: `${r.def.resource}/${subresource}` }, String(info.verb));
  }

  /**
   * autoscaling/v1 Scale for deployments, replicasets, statefulsets, replicationcontrollers.
   * Admission sees the Scale (UPDATE, with the current Scale as old object); the parent is then
   * written without admission.
   */
  private async scale(r: SubresourceRequest, registry: GenericStore, ns: string): Promise<InvokeResult> {
    const { info, ctx } = r;
    const toScale = scaleView(r.def);
    if (info.verb === 'get') return { status: 200, body: toScale(await registry.get(ns, info.name)) };
    let incoming: (current: Scale) => Scale;
    if (r.body.type === 'object') {
      const scale = r.body.object as Scale;
      if (scale?.metadata?.name && scale.metadata.name !== info.name) {
        throw StatusError.badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${info.name})`);
      }
      incoming = () => scale;
    } else if (r.body.type === 'patch') {
      const p = r.body.apply;
      incoming = (current) => p(current) as Scale;
    } else {
      throw StatusError.unsupportedMediaType('application/apply-patch+yaml', ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
    }
    if (ctx.admission) {
      const old = toScale(await registry.get(ns, info.name));
      await admitObject(ctx.admission, 'UPDATE', incoming(structuredClone(old)), old);
    }
    const res = await registry.patch(
      ns,
      info.name,
      (current) => {
        const scale = incoming(toScale(current));
        const replicas = scale?.spec?.replicas;
        if (!Number.isInteger(replicas) || (replicas as number) < 0) {
          throw StatusError.invalid('Scale', 'autoscaling', info.name, [FieldError.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
        }
        const rv = scale.metadata?.resourceVersion;
        if (rv && rv !== current.metadata.resourceVersion) {
          throw StatusError.conflict(registry.qr, info.name, 'the object has been modified; please apply your changes to the latest version and try again');
        }
        return withReplicas(r.def, current, replicas as number);
      },
      withoutAdmission(ctx),
    );
    return { status: 200, body: toScale(res.object) };
  }

  /** serviceaccounts/<name>/token: a bound service-account token (TokenRequest). */
  private async token(r: SubresourceRequest, ns: string): Promise<InvokeResult> {
    const request = bodyObject(r.body);
    await admitObject(r.ctx.admission, 'CREATE', request);
    const registry = (resource: string) => {
      for (const [def, reg] of r.registries) if (def.group === '' && def.resource === resource) return reg;
      throw StatusError.internal(`resource ${resource} is not served`);
    };
    return { status: 201, body: await createToken({ ...this.tokens!, registry }, ns, r.info.name, request, r.ctx) };
  }

  /** pods/binding: sets spec.nodeName once (409 when already bound) and PodScheduled. */
  private async binding(r: SubresourceRequest, registry: GenericStore, ns: string, podName: string): Promise<InvokeResult> {
    const binding = bodyObject(r.body);
    await admitObject(r.ctx.admission, 'CREATE', binding);
    await bindPod(registry, ns, podName, binding as Binding, withoutAdmission(r.ctx));
    return { status: 201, body: SUCCESS({ name: podName, kind: 'pods' }) };
  }

  /** pods/eviction: checks the pod's disruption budget (429 when it would break it), then deletes the pod with the eviction's DeleteOptions. */
  private async eviction(r: SubresourceRequest, registry: GenericStore, ns: string): Promise<InvokeResult> {
    const eviction = bodyObject(r.body) as KubeObject & { deleteOptions?: DeleteOptions & { dryRun?: string[] } };
    if (eviction.metadata?.name && eviction.metadata.name !== r.info.name) {
      throw StatusError.badRequest(`name in URL does not match name in Eviction object`);
    }
    await admitObject(r.ctx.admission, 'CREATE', eviction);
    const ctx = withoutAdmission(r.ctx);
    await admitEviction(r.registries, registry, ns, r.info.name, ctx, ctx.dryRun || !!eviction.deleteOptions?.dryRun?.length);
    await registry.delete(ns, r.info.name, eviction.deleteOptions ?? {}, ctx);
    return { status: 201, body: SUCCESS({ name: r.info.name, kind: 'pods' }) };
  }
}

export interface Binding {
  metadata?: { name?: string; namespace?: string };
  target?: { kind?: string; name?: string; apiVersion?: string };
}

/** Binds a pod to a node (pods/binding and the bindings resource share this). */
export async function bindPod(pods: GenericStore, ns: string, podName: string, binding: Binding, ctx: RequestContext): Promise<void> {
  if (binding?.metadata?.name && binding.metadata.name !== podName) {
    throw StatusError.badRequest(`name in URL does not match name in Binding object`);
  }
  const node = binding?.target?.name;
  if (!node) throw StatusError.invalid('Binding', '', podName, [FieldError.required('target.name', '')]);
  if (binding.target?.kind && binding.target.kind !== 'Node') {
    throw StatusError.invalid('Binding', '', podName, [FieldError.notSupported('target.kind', binding.target.kind, ['Node'])]);
  }
  await pods.patch(
    ns,
    podName,
    (pod) => {
      const p = pod as KubeObject & { spec?: { nodeName?: string }; status?: { conditions?: Record<string, unknown>[] } };
      if (p.metadata.deletionTimestamp) throw StatusError.conflict(pods.qr, podName, 'pod is being deleted, cannot be assigned to a host');
      if (p.spec?.nodeName) throw StatusError.conflict(pods.qr, podName, `pod ${podName} is already assigned to node "${p.spec.nodeName}"`);
      p.spec = { ...(p.spec ?? {}), nodeName: node };
      const conditions = (p.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
      conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTime() });
      p.status = { ...(p.status ?? {}), conditions };
      return p;
    },
    ctx,
    'binding',
  );
}

/** Where a custom resource keeps what its Scale shows (its CRD's scale subresource paths, `.spec.replicas` → ['spec', 'replicas']). */
function customScalePaths(def: ResourceDef): { spec: string[]; status: string[]; selector?: string[] } | undefined {
  const scale = def.custom?.scale;
  if (!scale) return undefined;
  const split = (p: string) => p.slice(1).split('.');
  return { spec: split(scale.specReplicasPath), status: split(scale.statusReplicasPath), selector: scale.labelSelectorPath ? split(scale.labelSelectorPath) : undefined };
}

function valueAt(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const p of path) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
  return cur;
}

/** The object with its replicas set (spec.replicas, or a custom resource's specReplicasPath). */
function withReplicas(def: ResourceDef, obj: KubeObject, replicas: number): KubeObject {
  const path = customScalePaths(def)?.spec ?? ['spec', 'replicas'];
  let cur = obj as unknown as Record<string, unknown>;
  for (const p of path.slice(0, -1)) {
    if (!cur[p] || typeof cur[p] !== 'object') cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[path[path.length - 1]] = replicas;
  return obj;
}

/** The autoscaling/v1 Scale view of a resource's objects. */
function scaleView(def: ResourceDef): (obj: KubeObject) => Scale {
  const paths = customScalePaths(def);
  if (!paths) return toScale;
  return (obj) => {
    const scale = toScale(obj);
    const spec = valueAt(obj, paths.spec);
    const status = valueAt(obj, paths.status);
    const selector = paths.selector ? valueAt(obj, paths.selector) : undefined;
    scale.spec = { replicas: typeof spec === 'number' ? spec : 0 };
    scale.status = { replicas: typeof status === 'number' ? status : 0, selector: typeof selector === 'string' ? selector : '' };
    return scale;
  };
}

function toScale(obj: KubeObject): Scale {
  const o = obj as Scalable;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
      creationTimestamp: o.metadata.creationTimestamp,
    },
    spec: { replicas: o.spec?.replicas ?? 0 },
    status: { replicas: o.status?.replicas ?? 0, selector: selectorString(o.spec?.selector) },
  };
}

/** The label selector of a scalable object as a string (Scale.status.selector). */
function selectorString(sel: { matchLabels?: Record<string, string> } | Record<string, string> | undefined): string {
  if (!sel) return '';
  const labels = 'matchLabels' in sel || 'matchExpressions' in sel ? ((sel.matchLabels as Record<string, string> | undefined) ?? {}) : (sel as Record<string, string>);
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
