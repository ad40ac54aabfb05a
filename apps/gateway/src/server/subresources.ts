import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDef } from '@orch/api';
import { FieldError, StatusError, type KubeObject } from '@orch/apimachinery';
import type { GenericStore } from '../registry/generic-store';
import { nowTime } from '../registry/object-meta';
import type { RequestContext } from '../registry/strategy';
import type { RequestInfo } from '../request/request-info';
import { decodeBody } from './body';
import { admitEviction } from './eviction';
import type { NodeProxy } from './node-proxy';
import { patchFunction } from './patch';

export interface SubresourceRequest {
  req: FastifyRequest;
  info: RequestInfo;
  def: ResourceDef;
  ctx: RequestContext;
  query: URLSearchParams;
  respond: (status: number, body: unknown) => Promise<number>;
  registries: Map<ResourceDef, GenericStore>;
  /** For subresources that stream a node agent's answer (log, proxy). */
  reply?: FastifyReply;
}

interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

interface Scalable extends KubeObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | Record<string, string> };
  status?: { replicas?: number };
}

/** The autoscaling/v1 Scale kind, for validating scale patches against its schema. */
const SCALE_DEF: ResourceDef = {
  group: 'autoscaling',
  version: 'v1',
  resource: 'scale',
  kind: 'Scale',
  listKind: 'ScaleList',
  singular: 'scale',
  shortNames: [],
  scope: 'Namespaced',
  verbs: [],
  subresources: [],
  categories: [],
  enabledByDefault: true,
  virtual: true,
};

const SUCCESS = (details: Record<string, unknown>) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201, details });

/**
 * Subresources: status and finalize (part-of-object writes through the generic store),
 * scale (autoscaling/v1 Scale view of replicas), binding (assigns a pod to a node) and
 * eviction (API-initiated pod deletion), log and proxy (streamed from node agents through
 * `nodeProxy`). Others answer 404 until their issue lands.
 */
export class SubresourceHandlers {
  constructor(private readonly nodeProxy?: NodeProxy) {}

  async handle(r: SubresourceRequest): Promise<number> {
    const { info, def } = r;
    const sub = def.subresources.find((s) => s.name === info.subresource);
    if (!sub) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    if (!sub.verbs.includes(info.verb as never)) {
      throw StatusError.methodNotSupported({ group: def.group, resource: `${def.resource}/${sub.name}` }, String(info.verb));
    }
    const registry = r.registries.get(def)!;
    const ns = def.scope === 'Namespaced' ? info.namespace : '';
    switch (sub.name) {
      case 'status':
      case 'finalize':
      case 'approval':
      case 'ephemeralcontainers':
        return this.partOfObject(r, registry, ns, sub.name === 'ephemeralcontainers' ? 'status' : sub.name);
      case 'scale':
        return this.scale(r, registry, ns);
      case 'binding':
        return this.binding(r, registry, ns, info.name);
      case 'eviction':
        return this.eviction(r, registry, ns);
      case 'log':
        if (this.nodeProxy) return this.nodeProxy.podLog(r);
        break;
      case 'proxy':
        if (!this.nodeProxy) break;
        if (def.resource === 'nodes') return this.nodeProxy.nodeProxy(r);
        return def.resource === 'pods' ? this.nodeProxy.podProxy(r) : this.nodeProxy.serviceProxy(r);
    }
    throw new StatusError(404, 'NotFound', `the ${def.resource}/${sub.name} subresource is not served yet`);
  }

  private async partOfObject(r: SubresourceRequest, registry: GenericStore, ns: string, subresource: string): Promise<number> {
    const { info, ctx } = r;
    switch (info.verb) {
      case 'get':
        return r.respond(200, await registry.get(ns, info.name));
      case 'update': {
        const { value } = decodeBody(r.req.body as Buffer, r.req.headers['content-type']);
        const res = await registry.update(ns, info.name, value as KubeObject, ctx, subresource);
        return r.respond(200, res.object);
      }
      case 'patch': {
        const patch = patchFunction(r.req, r.def);
        const res = await registry.patch(ns, info.name, patch, ctx, subresource);
        return r.respond(200, res.object);
      }
    }
    throw StatusError.methodNotSupported({ group: r.def.group, resource: `${r.def.resource}/${subresource}` }, String(info.verb));
  }

  /** autoscaling/v1 Scale for deployments, replicasets, statefulsets, replicationcontrollers. */
  private async scale(r: SubresourceRequest, registry: GenericStore, ns: string): Promise<number> {
    const { info, ctx } = r;
    if (info.verb === 'get') return r.respond(200, toScale(await registry.get(ns, info.name)));
    let incoming: (current: Scale) => Scale;
    if (info.verb === 'update') {
      const { value } = decodeBody(r.req.body as Buffer, r.req.headers['content-type']);
      const scale = value as Scale;
      if (scale?.metadata?.name && scale.metadata.name !== info.name) {
        throw StatusError.badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${info.name})`);
      }
      incoming = () => scale;
    } else {
      const p = patchFunction(r.req, SCALE_DEF);
      incoming = (current) => p(current) as Scale;
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
        const next = current as Scalable;
        next.spec = { ...(next.spec ?? {}), replicas };
        return next;
      },
      ctx,
    );
    return r.respond(200, toScale(res.object));
  }

  /** pods/binding: sets spec.nodeName once (409 when already bound) and PodScheduled. */
  private async binding(r: SubresourceRequest, registry: GenericStore, ns: string, podName: string): Promise<number> {
    const { value } = decodeBody(r.req.body as Buffer, r.req.headers['content-type']);
    await bindPod(registry, ns, podName, value as Binding, r.ctx);
    return r.respond(201, SUCCESS({ name: podName, kind: 'pods' }));
  }

  /** pods/eviction: checks the pod's disruption budget (429 when it would break it), then deletes the pod with the eviction's DeleteOptions. */
  private async eviction(r: SubresourceRequest, registry: GenericStore, ns: string): Promise<number> {
    const { value } = decodeBody(r.req.body as Buffer, r.req.headers['content-type']);
    const eviction = (value ?? {}) as { metadata?: { name?: string }; deleteOptions?: { dryRun?: string[] } & Record<string, unknown> };
    if (eviction.metadata?.name && eviction.metadata.name !== r.info.name) {
      throw StatusError.badRequest(`name in URL does not match name in Eviction object`);
    }
    await admitEviction(r.registries, registry, ns, r.info.name, r.ctx, r.ctx.dryRun || !!eviction.deleteOptions?.dryRun?.length);
    await registry.delete(ns, r.info.name, eviction.deleteOptions ?? {}, r.ctx);
    return r.respond(201, SUCCESS({ name: r.info.name, kind: 'pods' }));
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
