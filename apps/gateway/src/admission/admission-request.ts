// The AdmissionRequest of a request (admission.k8s.io/v1 shape): what webhooks receive in an
// AdmissionReview and what admission expressions see as `request`, plus the expression
// environment and the per-request values both share.

import { schemaForKind, typeSchema, type GroupVersionKind } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { Authorizer } from '@orch/auth';
import { AuthorizerValue, CelEnvironment, mergeProjections, project, type CelAuthorizer, type CelProgram, type CelSchema, type CelVariable, type Projection } from '@orch/cel';
import { definition, SCHEMA_REF_PREFIX } from '../openapi/schemas';
import type { AdmissionAttributes, AdmissionResource } from '../pipeline/admit';

export interface AdmissionRequestV1 {
  uid: string;
  kind: GroupVersionKind;
  resource: AdmissionResource;
  subResource?: string;
  requestKind: GroupVersionKind;
  requestResource: AdmissionResource;
  requestSubResource?: string;
  name: string;
  namespace?: string;
  operation: string;
  userInfo: { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun: boolean;
  options?: Record<string, unknown> | null;
}

const OPTIONS_KIND: Readonly<Record<string, string>> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/**
 * A request as a hook matched it (upstream VersionedAttributes): under matchPolicy Equivalent
 * `resource`, `kind`, `object` and `oldObject` are those of the version the hook's rules named
 * (the objects converted), and `requested` keeps what the client asked for.
 */
export interface VersionedAttributes extends AdmissionAttributes {
  requested?: { resource: AdmissionResource; kind: GroupVersionKind };
}

/**
 * The AdmissionRequest's fields of a request as a hook matched it, in the order
 * admissionRequest writes them: each one's value, undefined where the request has none (the
 * field is left out). One definition for webhooks' whole requests and expressions' projected ones.
 */
const REQUEST_FIELDS: { readonly [K in keyof AdmissionRequestV1]-?: (a: VersionedAttributes, uid: string) => AdmissionRequestV1[K] | undefined } = {
  uid: (_a, uid) => uid,
  kind: (a) => a.kind,
  resource: (a) => a.resource,
  subResource: (a) => a.subresource || undefined,
  requestSubResource: (a) => a.subresource || undefined,
  requestKind: (a) => a.requested?.kind ?? a.kind,
  requestResource: (a) => a.requested?.resource ?? a.resource,
  name: (a) => a.name,
  namespace: (a) => a.namespace || undefined,
  operation: (a) => a.operation,
  userInfo: (a) => ({ username: a.userInfo.username, ...(a.userInfo.uid ? { uid: a.userInfo.uid } : {}), groups: [...(a.userInfo.groups ?? [])], ...(a.userInfo.extra ? { extra: a.userInfo.extra } : {}) }),
  object: (a) => a.object ?? null,
  oldObject: (a) => a.oldObject ?? null,
  dryRun: (a) => a.dryRun,
  options: (a) => a.options ?? (OPTIONS_KIND[a.operation] ? { kind: OPTIONS_KIND[a.operation], apiVersion: 'meta.k8s.io/v1', ...(a.dryRun ? { dryRun: ['All'] } : {}) } : null),
};
const REQUEST_FIELD_NAMES = Object.keys(REQUEST_FIELDS) as (keyof AdmissionRequestV1)[];

/** The AdmissionRequest of a request as a hook matched it. */
export function admissionRequest(a: VersionedAttributes, uid: string): AdmissionRequestV1 {
  const out: Partial<Record<keyof AdmissionRequestV1, unknown>> = {};
  for (const k of REQUEST_FIELD_NAMES) {
    const v = REQUEST_FIELDS[k](a, uid);
    if (v !== undefined) out[k] = v;
  }
  return out as AdmissionRequestV1;
}

/**
 * Schemas of built-in kinds by kind name, then group and version (schema undefined: the kind has
 * none). Looked up with the request's own strings: a `group/version/kind` key made per call cost
 * ~15x more (the new string is flattened and hashed for the Map; measured in isolation).
 */
const kindSchemas = new Map<string, { group: string; version: string; schema: CelSchema | undefined }[]>();
const refSchemas = new Map<string, CelSchema | undefined>();

/** The OpenAPI schema of a built-in kind (for expression types), with $refs resolved lazily; computed once per kind. */
export function kindSchema(kind: GroupVersionKind): CelSchema | undefined {
  let versions = kindSchemas.get(kind.kind);
  if (!versions) kindSchemas.set(kind.kind, (versions = []));
  for (const v of versions) if (v.group === kind.group && v.version === kind.version) return v.schema;
  const t = schemaForKind(kind.group, kind.version, kind.kind);
  const schema = t ? (definition(t) as CelSchema) : undefined;
  versions.push({ group: kind.group, version: kind.version, schema });
  return schema;
}

/** Resolves `#/components/schemas/<name>` against the built-in type schemas (computed once per name). */
export function resolveBuiltinRef(ref: string): CelSchema | undefined {
  if (!refSchemas.has(ref)) {
    const t = ref.startsWith(SCHEMA_REF_PREFIX) ? typeSchema(ref.slice(SCHEMA_REF_PREFIX.length)) : undefined;
    refSchemas.set(ref, t ? (definition(t) as CelSchema) : undefined);
  }
  return refSchemas.get(ref);
}

/** The variables of admission expressions (webhook matchConditions; policies add params, namespaceObject, variables). */
export function admissionVariables(extra: readonly CelVariable[] = []): CelVariable[] {
  return [{ name: 'object' }, { name: 'oldObject' }, { name: 'request' }, ...extra];
}

/** An expression environment for admission expressions (dynamic `object`, the authorizer library). */
export function admissionEnvironment(extra: readonly CelVariable[] = []): CelEnvironment {
  return new CelEnvironment({ variables: admissionVariables(extra), authorizer: true, resolveRef: resolveBuiltinRef });
}

/** The authorizer library's view of the gateway's authorizers. */
export function celAuthorizer(authorizer: Authorizer): CelAuthorizer {
  return {
    async authorize(a) {
      const r = await authorizer.authorize({
        user: { username: a.user.username, uid: a.user.uid, groups: [...(a.user.groups ?? [])], extra: a.user.extra as Record<string, string[]> | undefined },
        isResourceRequest: a.resourceRequest,
        path: a.path ?? '',
        verb: a.verb,
        apiGroup: a.apiGroup ?? '',
        apiVersion: '*',
        resource: a.resource ?? '',
        subresource: a.subresource ?? '',
        namespace: a.namespace ?? '',
        name: a.name ?? '',
      });
      return { decision: r.decision, reason: r.reason };
    },
  };
}

/** Expression values of one request, converted once and shared by every hook and policy that evaluates it (null: not read by the expressions it was made for). */
export interface AdmissionActivation {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  authorizer: AuthorizerValue | null;
  /** No size in `object`, `oldObject` and `request` (as converted) is above this (CelValueConverter.largestSize). */
  largestSize: number;
}

/**
 * What a set of expressions reads of the request's values (undefined: nothing; see
 * CelProgram.readsOf): of `object`, `oldObject` and `request` (and, for policies,
 * `namespaceObject` and `params`) the parts they can read, and whether they use `authorizer`.
 */
export interface ActivationReads {
  object?: Projection;
  oldObject?: Projection;
  request?: Projection;
  namespaceObject?: Projection;
  params?: Projection;
  authorizer?: Projection;
}

/** The variables an ActivationReads covers. */
export const READ_VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject', 'params', 'authorizer'] as const satisfies readonly (keyof ActivationReads)[];

/** Reads of everything: the activation every expression can use. */
export const ALL_READS: ActivationReads = Object.fromEntries(READ_VARIABLES.map((v) => [v, true]));

/** What `programs` together read (see ActivationReads). */
export function readsOfPrograms(programs: Iterable<CelProgram>): ActivationReads {
  const reads: ActivationReads = {};
  for (const p of programs) for (const v of READ_VARIABLES) reads[v] = mergeProjections(reads[v], p.readsOf(v));
  return reads;
}

/** A request's activations, per what they were converted for. */
const activations = new WeakMap<AdmissionAttributes, Map<ActivationReads, AdmissionActivation>>();

/** Drops the request's expression values after a mutation changed its object (they read the object as it was). */
export function forgetActivation(a: AdmissionAttributes): void {
  activations.delete(a);
}

/** The AdmissionRequest fields expressions' `request` does not have (null there): its objects and uid. */
const HIDDEN_REQUEST_FIELDS: ReadonlySet<string> = new Set(['object', 'oldObject', 'uid']);

/**
 * `request` as expressions reading `p` of it see it, before conversion: the AdmissionRequest
 * without its hidden fields, projected by `p` (see project), with only the fields `p` names
 * made (expressions that read `request.operation` cost no user info, options or copies).
 */
function requestValue(a: AdmissionAttributes, p: Projection): unknown {
  if (p === true) return { ...admissionRequest(a, ''), object: undefined, oldObject: undefined, uid: undefined };
  const out: Record<string, unknown> = {};
  for (const [k, sub] of p) {
    if (HIDDEN_REQUEST_FIELDS.has(k)) out[k] = undefined;
    else if (Object.hasOwn(REQUEST_FIELDS, k)) {
      const v = REQUEST_FIELDS[k as keyof AdmissionRequestV1](a, '');
      if (v !== undefined) out[k] = project(v, sub);
    }
  }
  return out;
}

/**
 * The request's expression values (`object` and `oldObject` typed by the kind's schema), made
 * once per request and `reads` (see convertedActivation). Pass the same ActivationReads value
 * for the same expressions.
 */
export function admissionActivation(env: CelEnvironment, a: AdmissionAttributes, authorizer: Authorizer, reads: ActivationReads = ALL_READS): AdmissionActivation {
  let byReads = activations.get(a);
  const cached = byReads?.get(reads);
  if (cached) return cached;
  const act = convertedActivation(env, a, authorizer, reads);
  if (!byReads) activations.set(a, (byReads = new Map()));
  byReads.set(reads, act);
  return act;
}

/**
 * The request's expression values, made anew (admissionActivation shares them among the hooks
 * of a request). With `reads`, only the parts of the values those expressions can read are
 * converted (the rest is left out, a value they do not use is null: no expression of theirs
 * can tell).
 */
export function convertedActivation(env: CelEnvironment, a: AdmissionAttributes, authorizer: Authorizer, reads: ActivationReads = ALL_READS): AdmissionActivation {
  const converter = env.converter();
  const schema = kindSchema(a.kind);
  const convert = (o: KubeObject | undefined, p: Projection | undefined) => (o && p ? converter.convertProjected(o, p, schema) : null);
  const act: AdmissionActivation = {
    object: convert(a.object, reads.object),
    oldObject: convert(a.oldObject, reads.oldObject),
    request: reads.request ? converter.convert(requestValue(a, reads.request)) : null,
    authorizer: reads.authorizer ? new AuthorizerValue(celAuthorizer(authorizer), REQUEST_FIELDS.userInfo(a, '')!, { group: a.resource.group, resource: a.resource.resource, subresource: a.subresource || undefined, namespace: a.namespace || undefined, name: a.name || undefined }) : null,
    largestSize: 0,
  };
  act.largestSize = converter.largestSize;
  return act;
}
