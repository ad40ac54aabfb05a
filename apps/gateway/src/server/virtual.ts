import type { FastifyRequest } from 'fastify';
import type { ResourceDef } from '@orch/api';
import { groupVersionString } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { Authenticator } from '@orch/auth';
import type { GenericStore } from '../registry/generic-store';
import type { RequestContext } from '../registry/strategy';
import type { RequestInfo } from '../request/request-info';
import { decodeBody } from './body';
import { bindPod, type Binding } from './subresources';

export interface VirtualRequest {
  req: FastifyRequest;
  info: RequestInfo;
  def: ResourceDef;
  ctx: RequestContext;
  query: URLSearchParams;
  respond: (status: number, body: unknown) => Promise<number>;
}

/** Decides whether a user may do something: the authorizer seam (default allow for authenticated users until RBAC lands). */
export type AccessDecider = (user: RequestContext['user'], attributes: Record<string, unknown>) => { allowed: boolean; reason: string };

/** Reports component health for componentstatuses. */
export type ComponentHealth = () => Promise<{ name: string; healthy: boolean; message: string }[]>;

/**
 * Virtual types (SPEC terminology): POSTing a review or a binding runs an operation and
 * returns its result; nothing is stored under the virtual resource itself.
 */
export class VirtualResources {
  constructor(
    private readonly deps: {
      pods: () => GenericStore;
      authenticator: Authenticator;
      decide: AccessDecider;
      componentHealth: ComponentHealth;
    },
  ) {}

  async handle(r: VirtualRequest): Promise<number> {
    const { def, info } = r;
    if (def.resource === 'componentstatuses') return this.componentStatuses(r);
    if (info.verb !== 'create') throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, String(info.verb));
    const { value } = decodeBody(r.req.body as Buffer, r.req.headers['content-type']);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw StatusError.badRequest(`the body of the request must be a ${def.kind} object`);
    const body = value as KubeObject & { spec?: Record<string, unknown> };
    const out = { ...body, kind: def.kind, apiVersion: groupVersionString(def), metadata: { ...(body.metadata ?? {}), creationTimestamp: null } } as Record<string, unknown>;
    switch (def.resource) {
      case 'bindings':
        await bindPod(this.deps.pods(), info.namespace, body.metadata?.name ?? '', body as Binding, r.ctx);
        return r.respond(201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
      case 'selfsubjectaccessreviews': {
        const attrs = (body.spec?.resourceAttributes ?? body.spec?.nonResourceAttributes ?? {}) as Record<string, unknown>;
        const d = this.deps.decide(r.ctx.user, attrs);
        out.status = { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
        return r.respond(201, out);
      }
      case 'subjectaccessreviews':
      case 'localsubjectaccessreviews': {
        const spec = body.spec ?? {};
        if (!spec.user && !(Array.isArray(spec.groups) && spec.groups.length)) {
          throw StatusError.invalid(def.kind, def.group, '', []);
        }
        if (def.resource === 'localsubjectaccessreviews') {
          const ns = ((spec.resourceAttributes as Record<string, unknown>)?.namespace as string) ?? '';
          if (ns !== info.namespace) throw StatusError.badRequest(`spec.resourceAttributes.namespace must match namespace: ${info.namespace}`);
        }
        const user = { username: String(spec.user ?? ''), groups: (spec.groups as string[]) ?? [], uid: spec.uid as string | undefined };
        const d = this.deps.decide(user, (spec.resourceAttributes ?? spec.nonResourceAttributes ?? {}) as Record<string, unknown>);
        out.status = { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
        return r.respond(201, out);
      }
      case 'selfsubjectrulesreviews':
        out.status = {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          incomplete: false,
        };
        return r.respond(201, out);
      case 'selfsubjectreviews':
        out.status = { userInfo: { username: r.ctx.user.username, uid: r.ctx.user.uid, groups: r.ctx.user.groups, extra: r.ctx.user.extra } };
        return r.respond(201, out);
      case 'tokenreviews': {
        const token = String(body.spec?.token ?? '');
        const user = token ? await this.deps.authenticator.authenticate({ headers: { authorization: `Bearer ${token}` } }).catch(() => null) : null;
        out.status = user ? { authenticated: true, user, audiences: body.spec?.audiences ?? [] } : { authenticated: false, user: {}, error: 'invalid bearer token' };
        return r.respond(201, out);
      }
    }
    throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, 'create');
  }

  private async componentStatuses(r: VirtualRequest): Promise<number> {
    const statuses = await this.deps.componentHealth();
    const item = (s: { name: string; healthy: boolean; message: string }) => ({
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name: s.name },
      conditions: [{ type: 'Healthy', status: s.healthy ? 'True' : 'False', message: s.message }],
    });
    if (r.info.verb === 'get') {
      const s = statuses.find((x) => x.name === r.info.name);
      if (!s) throw StatusError.notFound({ group: '', resource: 'componentstatuses' }, r.info.name);
      return r.respond(200, item(s));
    }
    if (r.info.verb === 'list') return r.respond(200, { kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items: statuses.map(item) });
    throw StatusError.methodNotSupported({ group: '', resource: 'componentstatuses' }, String(r.info.verb));
  }
}
