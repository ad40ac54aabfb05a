import type { GroupVersionKind } from '@orch/api';
import { BoundedMap, StatusError, type KubeObject } from '@orch/apimachinery';
import type { UserInfo } from '@orch/auth';
import { DiscoveryService } from '@nestjs/core';
import type { AdmissionOperation, WriteAdmission } from '../registry/strategy';
import { UPSTREAM_PLUGIN_ORDER } from '../admission/plugins';
import type { ApiRequest } from './api-request';
import { requestTarget, requestUser } from './api-request';
import { validateFields } from './decode';

export type { AdmissionOperation };

export interface AdmissionResource {
  group: string;
  version: string;
  resource: string;
}

/**
 * What an admission plugin sees (upstream admission.Attributes). `object` is the incoming
 * object (CREATE, UPDATE; absent for DELETE and CONNECT), `oldObject` the stored one (UPDATE,
 * DELETE). Only mutating hooks may change `object`.
 */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  object?: KubeObject;
  oldObject?: KubeObject;
  /** The kind of `object` (the subresource's kind for subresource writes). */
  kind: GroupVersionKind;
  resource: AdmissionResource;
  subresource: string;
  namespace: string;
  name: string;
  userInfo: UserInfo;
  dryRun: boolean;
  /** CreateOptions / UpdateOptions / PatchOptions / DeleteOptions / the connect options. */
  options?: Record<string, unknown>;
  /** The mutating chain's reinvocation state (absent outside the chain, e.g. in plugin unit tests). */
  reinvocation?: ReinvocationContext;
}

/**
 * Reinvocation of the mutating plugins within one admission (upstream ReinvocationContext):
 * when a plugin asks for it (a webhook changed the object), every mutating plugin runs once
 * more — built-in plugins whole, webhooks as their reinvocationPolicy says. Plugins keep what
 * they need across the two passes under their name.
 */
export class ReinvocationContext {
  /** True during the second pass. */
  isReinvoke = false;
  /** Set by a plugin during the first pass to have the chain run again. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();

  /** The plugin's state for this admission, made by `init` on first use. */
  value<T>(plugin: string, init: () => T): T {
    if (!this.values.has(plugin)) this.values.set(plugin, init());
    return this.values.get(plugin) as T;
  }
}

/**
 * What a hook may return: warnings for the client (`Warning` headers) and audit annotations
 * (key → value, recorded with the request). Deny by throwing a StatusError (see `admissionDenied`).
 */
export interface AdmissionResponse {
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** Receives the audit annotations admission plugins record for a request. */
export type AuditSink = (annotations: Record<string, string>, request: { user: string; operation: AdmissionOperation; resource: AdmissionResource; subresource: string; namespace: string; name: string }) => void;

/**
 * An admission plugin (upstream admission.Interface + MutationInterface + ValidationInterface).
 * Registered as a NestJS provider decorated with `@AdmissionPluginProvider()`; the gateway
 * orders plugins by ADMISSION_PLUGIN_ORDER. Hooks run only when `handles` says so.
 * - `mutate` runs first (all mutating plugins in order) and may change `attributes.object`.
 * - Then the object is checked against its kind's schema again and the registry's strategy
 *   validates it; only then does `validate` run (all validating plugins in order). It must
 *   not mutate.
 * - For UPDATE (update, patch, apply, status/scale writes) both run inside the registry's
 *   read-modify-write with the stored object as `oldObject`, once per attempt.
 */
export interface AdmissionPlugin {
  readonly name: string;
  /**
   * Runs whatever --enable/--disable-admission-plugins say: built-in checks that are not
   * upstream admission plugins (RBAC escalation prevention). They follow the selectable ones.
   */
  readonly alwaysOn?: boolean;
  /** Whether the hooks run for a request (declare it with {@link handling}); absent: for every request. */
  handles?(operation: AdmissionOperation, resource: AdmissionResource, subresource: string): boolean;
  /**
   * True when `handles` depends on its arguments only (and on start-up configuration): the
   * chain then asks it once per (operation, resource, subresource) and keeps the answer.
   * A `handles` made by {@link handling} is fixed without saying so. Absent: asked per request
   * (a `handles` that follows configuration objects, such as the webhooks').
   */
  readonly handlesFixed?: boolean;
  /** True when `mutate` never changes the object (it only refuses): no schema check of the object follows it. */
  readonly keepsObject?: boolean;
  mutate?(attributes: AdmissionAttributes): AdmissionResponse | void | Promise<AdmissionResponse | void>;
  validate?(attributes: AdmissionAttributes): AdmissionResponse | void | Promise<AdmissionResponse | void>;
}

/** The `handles` functions {@link handling} made: fixed by their rules. */
const DECLARED_HANDLES = new WeakSet<object>();

/**
 * A plugin's `handles`, declared: per operation the resources it handles, as
 * `resource[.group][/subresource]` (`'pods'`, `'ingresses.networking.orch.io'`,
 * `'pods/ephemeralcontainers'`); a resource without a subresource means the main resource
 * only. Example: `handling({ CREATE: ['pods'], UPDATE: ['pods/ephemeralcontainers'] })`.
 */
export function handling(rules: Partial<Record<AdmissionOperation, readonly string[]>>): NonNullable<AdmissionPlugin['handles']> {
  const handled = new Set<string>();
  for (const [operation, resources] of Object.entries(rules)) {
    for (const entry of resources ?? []) {
      const [qualified, subresource = ''] = entry.split('/');
      const dot = qualified.indexOf('.');
      const [resource, group] = dot < 0 ? [qualified, ''] : [qualified.slice(0, dot), qualified.slice(dot + 1)];
      handled.add(`${operation} ${group}/${resource}/${subresource}`);
    }
  }
  const handles: NonNullable<AdmissionPlugin['handles']> = (operation, r, subresource) => handled.has(`${operation} ${r.group}/${r.resource}/${subresource}`);
  DECLARED_HANDLES.add(handles);
  return handles;
}

/** Whether the chain may keep a plugin's `handles` answers (see AdmissionPlugin.handlesFixed). */
function handlesFixed(p: AdmissionPlugin): boolean {
  return !!p.handlesFixed || (p.handles !== undefined && DECLARED_HANDLES.has(p.handles));
}

/** Marks a NestJS provider class as an admission plugin (collected by the gateway module). */
export const AdmissionPluginProvider = DiscoveryService.createDecorator<Record<string, never>>();

/** Plugins run in this order when present (upstream's ordered plugin list); others follow by name. */
export const ADMISSION_PLUGIN_ORDER: readonly string[] = UPSTREAM_PLUGIN_ORDER;

/** A 403 from an admission plugin, in upstream's wording (`<resource> "<name>" is forbidden: <reason>`). */
export function admissionDenied(a: Pick<AdmissionAttributes, 'resource' | 'name'>, reason: string): StatusError {
  return StatusError.forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, reason);
}

/** The admission of one request, handed to the registry (see WriteAdmission). */
export type RequestAdmission = WriteAdmission;

/** What admission knows of a request before any object is seen. */
type RequestScope = Omit<AdmissionAttributes, 'operation' | 'object' | 'oldObject'> & {
  /** Where plugin warnings go (the request's `Warning` headers). */
  warnings: string[];
};

/** The plugins of one hook that may handle a request: fixed `handles` already asked, the others still to ask. */
interface Route {
  mutate: readonly AdmissionPlugin[];
  validate: readonly AdmissionPlugin[];
}

/** Most (operation, resource, subresource) routes kept; more clears them (custom resources come and go). */
const MAX_ROUTES = 4096;

/**
 * The ordered admission chain (mutating then validating plugins). Empty by default; the
 * admission issue fills it. Cheap when no plugin handles a request: plugins whose `handles`
 * is fixed are asked once per (operation, resource, subresource), not per request.
 */
export class AdmissionChain {
  /** Plugins whose `handles` must be asked per request. */
  private readonly askEachTime: ReadonlySet<AdmissionPlugin>;
  private readonly routes = new BoundedMap<string, Route>(MAX_ROUTES);

  constructor(
    readonly plugins: readonly AdmissionPlugin[],
    private readonly audit?: AuditSink,
  ) {
    this.askEachTime = new Set(plugins.filter((p) => p.handles && !handlesFixed(p)));
  }

  /** The plugins, in chain order, a request's hooks go to (those with a fixed `handles` that said no left out). */
  private route(operation: AdmissionOperation, r: AdmissionResource, subresource: string): Route {
    const key = `${operation} ${r.group}/${r.version}/${r.resource}/${subresource}`;
    return this.routes.get(key, () => {
      const asked = this.plugins.filter((p) => !p.handles || this.askEachTime.has(p) || p.handles(operation, r, subresource));
      return { mutate: asked.filter((p) => p.mutate), validate: asked.filter((p) => p.validate) };
    });
  }

  /** Orders plugins by ADMISSION_PLUGIN_ORDER, then by name. */
  static ordered(plugins: readonly AdmissionPlugin[], audit?: AuditSink): AdmissionChain {
    const rank = (p: AdmissionPlugin) => {
      const i = ADMISSION_PLUGIN_ORDER.indexOf(p.name);
      return i < 0 ? ADMISSION_PLUGIN_ORDER.length : i;
    };
    return new AdmissionChain([...plugins].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name)), audit);
  }

  /** The admission of one request. */
  forRequest(scope: RequestScope): RequestAdmission {
    const attributes = (operation: AdmissionOperation, object: KubeObject | undefined, oldObject: KubeObject | undefined): AdmissionAttributes => ({
      operation,
      object,
      oldObject,
      kind: scope.kind,
      resource: scope.resource,
      subresource: scope.subresource,
      namespace: scope.namespace,
      name: scope.name || object?.metadata?.name || oldObject?.metadata?.name || '',
      userInfo: scope.userInfo,
      dryRun: scope.dryRun,
      options: scope.options,
    });
    /** Calls `hook` of the plugins that handle `a`; whether one that may change the object was called. */
    const run = async (plugins: readonly AdmissionPlugin[], hook: 'mutate' | 'validate', a: AdmissionAttributes): Promise<boolean> => {
      let changing = false;
      for (const p of plugins) {
        if (this.askEachTime.has(p) && !p.handles!(a.operation, a.resource, a.subresource)) continue;
        changing ||= !p.keepsObject;
        // A plugin that answers synchronously is not awaited (no promise made for its answer).
        const answer = p[hook]!.call(p, a);
        const res = answer instanceof Promise ? await answer : answer;
        // The same warning twice is said once (upstream's recorder; a reinvoked plugin repeats itself).
        for (const w of res?.warnings ?? []) if (!scope.warnings.includes(w)) scope.warnings.push(w);
        if (res?.auditAnnotations && this.audit) {
          this.audit(res.auditAnnotations, { user: a.userInfo.username, operation: a.operation, resource: a.resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
        }
      }
      return changing;
    };
    return {
      mutate: async (operation, object, oldObject) => {
        const plugins = this.route(operation, scope.resource, scope.subresource).mutate;
        if (plugins.length === 0) return;
        const a = attributes(operation, object, oldObject);
        a.reinvocation = new ReinvocationContext();
        let changing = await run(plugins, 'mutate', a);
        if (a.reinvocation.shouldReinvoke) {
          // upstream's reinvoker: once more, in-tree plugins whole and webhooks as they asked
          a.reinvocation.isReinvoke = true;
          changing = (await run(plugins, 'mutate', a)) || changing;
        }
        // A mutated object must still be a valid object of its kind (upstream re-decodes it);
        // one that no plugin could change is as its caller checked it.
        if (object && changing) validateFields(object, scope.kind, [], 'Ignore', scope.warnings);
      },
      validate: async (operation, object, oldObject) => {
        const plugins = this.route(operation, scope.resource, scope.subresource).validate;
        if (plugins.length === 0) return;
        await run(plugins, 'validate', attributes(operation, object, oldObject));
      },
    };
  }
}

/** Operations whose admission the invoke stage runs itself (nothing stored goes through the registry's write path). */
const CONNECT_SUBRESOURCES = new Set(['proxy', 'exec', 'attach', 'portforward']);

/**
 * The admit stage: builds the request's admission and hands it to the registry through the
 * request context. CONNECT requests (proxy and exec-style streams) are admitted here, since
 * no registry write follows.
 */
export function admitStage(chain: AdmissionChain): (r: ApiRequest) => void | Promise<void> {
  const connect = async (admission: RequestAdmission) => {
    await admission.mutate('CONNECT', undefined, undefined);
    await admission.validate('CONNECT', undefined, undefined);
  };
  return (r) => {
    if (!r.info.isResourceRequest) return;
    const t = requestTarget(r);
    const admission = chain.forRequest({
      kind: t.bodyKind,
      resource: { group: t.def.group, version: t.def.version, resource: t.def.resource },
      subresource: t.sub?.name ?? '',
      namespace: t.namespace,
      name: r.info.name,
      userInfo: requestUser(r),
      dryRun: t.ctx.dryRun,
      warnings: t.ctx.warnings,
    });
    r.admission = admission;
    t.ctx.admission = admission;
    if (t.sub && CONNECT_SUBRESOURCES.has(t.sub.name)) return connect(admission);
  };
}
