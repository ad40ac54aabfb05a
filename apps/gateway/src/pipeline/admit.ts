import type { GroupVersionKind } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
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
  mutate?(attributes: AdmissionAttributes): AdmissionResponse | void | Promise<AdmissionResponse | void>;
  validate?(attributes: AdmissionAttributes): AdmissionResponse | void | Promise<AdmissionResponse | void>;
}

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
  return (operation, r, subresource) => handled.has(`${operation} ${r.group}/${r.resource}/${subresource}`);
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

/**
 * The ordered admission chain (mutating then validating plugins). Empty by default; the
 * admission issue fills it. Cheap when no plugin handles a request.
 */
export class AdmissionChain {
  constructor(
    readonly plugins: readonly AdmissionPlugin[],
    private readonly audit?: AuditSink,
  ) {}

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
    const run = async (hook: 'mutate' | 'validate', a: AdmissionAttributes) => {
      for (const p of this.plugins) {
        const fn = p[hook];
        if (!fn || (p.handles && !p.handles(a.operation, a.resource, a.subresource))) continue;
        const res = await fn.call(p, a);
        // The same warning twice is said once (upstream's recorder; a reinvoked plugin repeats itself).
        for (const w of res?.warnings ?? []) if (!scope.warnings.includes(w)) scope.warnings.push(w);
        if (res?.auditAnnotations && this.audit) {
          this.audit(res.auditAnnotations, { user: a.userInfo.username, operation: a.operation, resource: a.resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
        }
      }
    };
    return {
      mutate: async (operation, object, oldObject) => {
        if (this.plugins.length === 0) return;
        const a = attributes(operation, object, oldObject);
        a.reinvocation = new ReinvocationContext();
        await run('mutate', a);
        if (a.reinvocation.shouldReinvoke) {
          // upstream's reinvoker: once more, in-tree plugins whole and webhooks as they asked
          a.reinvocation.isReinvoke = true;
          await run('mutate', a);
        }
        // A mutated object must still be a valid object of its kind (upstream re-decodes it).
        if (object) validateFields(object, scope.kind, [], 'Ignore', scope.warnings);
      },
      validate: async (operation, object, oldObject) => {
        if (this.plugins.length === 0) return;
        await run('validate', attributes(operation, object, oldObject));
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
export function admitStage(chain: AdmissionChain): (r: ApiRequest) => Promise<void> {
  return async (r) => {
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
    if (t.sub && CONNECT_SUBRESOURCES.has(t.sub.name)) {
      await admission.mutate('CONNECT', undefined, undefined);
      await admission.validate('CONNECT', undefined, undefined);
    }
  };
}
