import type { UserInfo } from './user';

/**
 * What an authorizer decides about (SPEC "Authorization" 2; upstream authorizer.Attributes).
 * Resource requests carry apiGroup ('' is core) … name; non-resource requests carry `path`
 * and the lowercase HTTP method as `verb`. Built once per request and never mutated.
 */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** /api/v1/... and /apis/<group>/<version>/...: true; /healthz, /version, discovery: false. */
  isResourceRequest: boolean;
  path: string;
  /** API verb (get, list, watch, create, update, patch, delete, deletecollection, impersonate, bind, escalate, ...). */
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** What names a resource request; anything left out is empty (all groups' core, no subresource…). */
export type ResourceFields = Partial<Omit<AuthorizationAttributes, 'user' | 'isResourceRequest' | 'path'>> & Pick<AuthorizationAttributes, 'verb' | 'resource'>;

/** The attributes of a resource request by `user`. */
export function resourceAttributes(user: UserInfo, fields: ResourceFields): AuthorizationAttributes {
  const { verb, resource, apiGroup = '', apiVersion = '', subresource = '', namespace = '', name = '' } = fields;
  return { user, isResourceRequest: true, path: '', verb, apiGroup, apiVersion, resource, subresource, namespace, name };
}

/** The attributes of a non-resource request (`/healthz`, `/version`, discovery) by `user`. */
export function nonResourceAttributes(user: UserInfo, verb: string, path: string): AuthorizationAttributes {
  return { user, isResourceRequest: false, path, verb, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

/** An authorizer's answer: the first `allow` or `deny` of the chain ends evaluation. */
export type Decision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizationResult {
  decision: Decision;
  /** Why; shown to the user after the Forbidden message when non-empty. */
  reason: string;
}

/**
 * One authorization mode (`--authorization-mode`: Node, RBAC, ABAC, Webhook, AlwaysAllow,
 * AlwaysDeny). Must not throw for ordinary denials: answer `deny` or `no-opinion` instead;
 * a thrown error is an evaluation error (the chain treats it as no-opinion and reports it).
 */
export interface Authorizer {
  /** The mode name (`RBAC`, `Node`, ...). */
  readonly name: string;
  authorize(attributes: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult>;
  /**
   * What `user` may do in `namespace` (SelfSubjectRulesReview). A mode that cannot list its
   * rules leaves this out; the chain then reports the answer as incomplete.
   */
  rulesFor?(user: UserInfo, namespace: string): SubjectRules;
}

/** A SelfSubjectRulesReview status (authorization v1 SubjectRulesReviewStatus). */
export interface SubjectRules {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

export const ALLOW = (reason = ''): AuthorizationResult => ({ decision: 'allow', reason });
export const DENY = (reason = ''): AuthorizationResult => ({ decision: 'deny', reason });
export const NO_OPINION = (reason = ''): AuthorizationResult => ({ decision: 'no-opinion', reason });

/**
 * Asks each authorizer in order; the first `allow` or `deny` wins. When none decides the
 * answer is `no-opinion` (the caller denies: default deny). Reasons of undecided modes and
 * evaluation errors are joined into the reason, as upstream's union authorizer does.
 * Answers without a promise when every authorizer it asks does; from the first that answers
 * with a promise, the rest of the walk waits for it.
 */
export function authorizerChain(list: readonly Authorizer[]): Authorizer {
  const failure = (a: Authorizer, err: unknown) => `${a.name}: ${(err as Error)?.message ?? String(err)}`;
  /** The result when it decides; else its reason kept and undefined. */
  const decided = (result: AuthorizationResult, reasons: string[]): AuthorizationResult | undefined => {
    if (result.decision !== 'no-opinion') return result;
    if (result.reason) reasons.push(result.reason);
    return undefined;
  };
  /** The walk from list[start] on. */
  const decideFrom = (attributes: AuthorizationAttributes, start: number, reasons: string[]): AuthorizationResult | Promise<AuthorizationResult> => {
    for (let i = start; i < list.length; i++) {
      const a = list[i];
      let result: AuthorizationResult | Promise<AuthorizationResult>;
      try {
        result = a.authorize(attributes);
      } catch (err) {
        reasons.push(failure(a, err));
        continue;
      }
      if (result instanceof Promise) {
        return result.then(
          (settled) => decided(settled, reasons) ?? decideFrom(attributes, i + 1, reasons),
          (err: unknown) => (reasons.push(failure(a, err)), decideFrom(attributes, i + 1, reasons)),
        );
      }
      const d = decided(result, reasons);
      if (d) return d;
    }
    return NO_OPINION(reasons.join('; '));
  };
  return {
    name: list.map((a) => a.name).join(','),
    authorize: (attributes) => decideFrom(attributes, 0, []),
    rulesFor(user, namespace) {
      const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const a of list) {
        if (!a.rulesFor) {
          out.incomplete = true;
          continue;
        }
        const r = a.rulesFor(user, namespace);
        out.resourceRules.push(...r.resourceRules);
        out.nonResourceRules.push(...r.nonResourceRules);
        out.incomplete ||= r.incomplete;
        if (r.evaluationError) errors.push(r.evaluationError);
      }
      if (errors.length) out.evaluationError = errors.join('; ');
      return out;
    },
  };
}

/** Splits policy rules into the two lists of a SubjectRules answer. */
export function subjectRules(rules: readonly { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] }[]): SubjectRules {
  const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };
  for (const r of rules) {
    if (r.nonResourceURLs?.length) out.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    if (r.resources?.length) out.resourceRules.push({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources, ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) });
  }
  return out;
}

/** `AlwaysAllow`: every request is allowed (only when no authorization is wanted). */
export function alwaysAllowAuthorizer(): Authorizer {
  return {
    name: 'AlwaysAllow',
    authorize: () => ALLOW(),
    rulesFor: () => subjectRules([
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
  };
}

/** `AlwaysDeny`: every request is denied (tests only). */
export function alwaysDenyAuthorizer(): Authorizer {
  return { name: 'AlwaysDeny', authorize: () => DENY('Everything is forbidden.'), rulesFor: () => subjectRules([]) };
}
