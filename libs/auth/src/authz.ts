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
}

export const ALLOW = (reason = ''): AuthorizationResult => ({ decision: 'allow', reason });
export const DENY = (reason = ''): AuthorizationResult => ({ decision: 'deny', reason });
export const NO_OPINION = (reason = ''): AuthorizationResult => ({ decision: 'no-opinion', reason });

/**
 * Asks each authorizer in order; the first `allow` or `deny` wins. When none decides the
 * answer is `no-opinion` (the caller denies: default deny). Reasons of undecided modes and
 * evaluation errors are joined into the reason, as upstream's union authorizer does.
 */
export function authorizerChain(list: readonly Authorizer[]): Authorizer {
  return {
    name: list.map((a) => a.name).join(','),
    async authorize(attributes) {
      const reasons: string[] = [];
      for (const a of list) {
        let result: AuthorizationResult;
        try {
          result = await a.authorize(attributes);
        } catch (err) {
          reasons.push(`${a.name}: ${(err as Error)?.message ?? String(err)}`);
          continue;
        }
        if (result.decision !== 'no-opinion') return result;
        if (result.reason) reasons.push(result.reason);
      }
      return NO_OPINION(reasons.join('; '));
    },
  };
}

/** `AlwaysAllow`: every request is allowed (only when no authorization is wanted). */
export function alwaysAllowAuthorizer(): Authorizer {
  return { name: 'AlwaysAllow', authorize: () => ALLOW() };
}

/** `AlwaysDeny`: every request is denied (tests only). */
export function alwaysDenyAuthorizer(): Authorizer {
  return { name: 'AlwaysDeny', authorize: () => DENY('Everything is forbidden.') };
}
