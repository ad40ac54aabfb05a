import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { ResourceDef } from '@orch/api';
import { groupVersionString } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { nonResourceAttributes, resourceAttributes, type AuthorizationAttributes, type Authenticator, type Authorizer, type UserInfo } from '@orch/auth';
import type { DecodedRequestBody } from '../pipeline/api-request';
import type { GenericStore } from '../registry/generic-store';
import { virtualOperation } from '../registry/kinds';
import { unhandled } from '../registry/kinds/binding';
import type { RequestContext } from '../registry/strategy';
import type { RequestInfo } from '../request/request-info';
import { admitObject, bindPod, bodyObject, withoutAdmission, type Binding, type InvokeResult } from './subresources';

export interface VirtualRequest {
  req: FastifyRequest;
  info: RequestInfo;
  def: ResourceDef;
  ctx: RequestContext;
  query: URLSearchParams;
  body: DecodedRequestBody;
}

/** Reports component health for componentstatuses. */
export type ComponentHealth = () => Promise<{ name: string; healthy: boolean; message: string }[]>;

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

/** The authorization attributes an access review asks about (upstream ResourceAttributesFrom / NonResourceAttributesFrom). */
export function reviewAttributes(user: UserInfo, spec: { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: NonResourceAttributes }): AuthorizationAttributes {
  const ra = spec.resourceAttributes;
  if (ra) {
    return resourceAttributes(user, {
      verb: ra.verb ?? '',
      apiGroup: ra.group ?? '',
      apiVersion: ra.version ?? '',
      resource: ra.resource ?? '',
      subresource: ra.subresource ?? '',
      namespace: ra.namespace ?? '',
      name: ra.name ?? '',
    });
  }
  const nra = spec.nonResourceAttributes ?? {};
  return nonResourceAttributes(user, nra.verb ?? '', nra.path ?? '');
}

/** The audiences of `wanted` a token is for (its `aud` claim); all of `wanted` for tokens without one. */
function tokenAudiences(token: string, wanted: string[]): string[] {
  try {
    const aud = decodeJwt(token).aud;
    const has = typeof aud === 'string' ? [aud] : (aud ?? []);
    return has.length ? wanted.filter((a) => has.includes(a)) : wanted;
  } catch {
    return wanted;
  }
}

/**
 * Virtual types (SPEC terminology): POSTing a review or a binding runs an operation and
 * returns its result; nothing is stored under the virtual resource itself. Access reviews
 * are answered by the gateway's authorizer chain (the one that authorizes requests), token
 * reviews by its authenticators.
 */
export class VirtualResources {
  constructor(
    private readonly deps: {
      pods: () => GenericStore;
      authenticator: Authenticator;
      authorizer: Authorizer;
      componentHealth: ComponentHealth;
      /** `--api-audiences`: what a TokenReview without audiences checks against. */
      apiAudiences: string[];
    },
  ) {}

  async handle(r: VirtualRequest): Promise<InvokeResult> {
    const { def, info } = r;
    const operation = virtualOperation(def);
    if (operation === 'componentStatuses') return this.componentStatuses(r);
    if (info.verb !== 'create') throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, String(info.verb));
    const body = bodyObject(r.body) as KubeObject & { spec?: Record<string, unknown> };
    await admitObject(r.ctx.admission, 'CREATE', body);
    const out = { ...body, kind: def.kind, apiVersion: groupVersionString(def), metadata: { ...(body.metadata ?? {}), creationTimestamp: null } } as Record<string, unknown>;
    const created = (status: Record<string, unknown>): InvokeResult => ({ status: 201, body: { ...out, status } });
    switch (operation) {
      case 'podBinding':
        await bindPod(this.deps.pods(), info.namespace, body.metadata?.name ?? '', body as Binding, withoutAdmission(r.ctx));
        return { status: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
      case 'selfAccessReview':
        return created(await this.decide(reviewAttributes(r.ctx.user, body.spec ?? {})));
      case 'accessReview':
      case 'localAccessReview': {
        const spec = body.spec ?? {};
        if (!spec.user && !(Array.isArray(spec.groups) && spec.groups.length)) {
          throw StatusError.invalid(def.kind, def.group, '', []);
        }
        if (operation === 'localAccessReview') {
          const ns = ((spec.resourceAttributes as Record<string, unknown>)?.namespace as string) ?? '';
          if (ns !== info.namespace) throw StatusError.badRequest(`spec.resourceAttributes.namespace must match namespace: ${info.namespace}`);
        }
        const user: UserInfo = { username: String(spec.user ?? ''), groups: (spec.groups as string[]) ?? [] };
        if (spec.uid) user.uid = String(spec.uid);
        if (spec.extra) user.extra = spec.extra as Record<string, string[]>;
        return created(await this.decide(reviewAttributes(user, spec)));
      }
      case 'rulesReview': {
        const ns = String((body.spec as { namespace?: unknown } | undefined)?.namespace ?? '');
        const rules = this.deps.authorizer.rulesFor?.(r.ctx.user, ns) ?? { resourceRules: [], nonResourceRules: [], incomplete: true };
        return created({ ...rules });
      }
      case 'selfSubjectReview':
        return created({ userInfo: { username: r.ctx.user.username, uid: r.ctx.user.uid, groups: r.ctx.user.groups, extra: r.ctx.user.extra } });
      case 'tokenReview': {
        const token = String(body.spec?.token ?? '');
        const wanted = Array.isArray(body.spec?.audiences) ? (body.spec.audiences as string[]) : [];
        const user = token ? await this.deps.authenticator.authenticate({ headers: { authorization: `Bearer ${token}` }, ...(wanted.length ? { audiences: wanted } : {}) }).catch(() => null) : null;
        if (!user) return created({ authenticated: false, user: {}, error: 'invalid bearer token' });
        return created({ authenticated: true, user, audiences: tokenAudiences(token, wanted.length ? wanted : this.deps.apiAudiences) });
      }
      default:
        return unhandled(operation);
    }
  }

  /** An access review's status from the authorizer chain (allowed / denied / reason). */
  private async decide(attributes: AuthorizationAttributes): Promise<Record<string, unknown>> {
    const d = await this.deps.authorizer.authorize(attributes);
    return { allowed: d.decision === 'allow', ...(d.decision === 'deny' ? { denied: true } : {}), ...(d.reason ? { reason: d.reason } : {}) };
  }

  private async componentStatuses(r: VirtualRequest): Promise<InvokeResult> {
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
      return { status: 200, body: item(s) };
    }
    if (r.info.verb === 'list') return { status: 200, body: { kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items: statuses.map(item) } };
    throw StatusError.methodNotSupported({ group: '', resource: 'componentstatuses' }, String(r.info.verb));
  }
}
