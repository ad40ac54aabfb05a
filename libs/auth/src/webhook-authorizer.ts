import { ALLOW, DENY, NO_OPINION, type AuthorizationAttributes, type AuthorizationResult, type Authorizer } from './authz';
import { ExpiringCache } from './token-cache';
import type { ReviewPoster } from './webhook-token';

export interface WebhookAuthorizerOptions {
  /** How long an allow is reused (`--authorization-webhook-cache-authorized-ttl`, upstream 5 min). */
  authorizedTtlMs: number;
  /** How long a deny or no-opinion is reused (`--authorization-webhook-cache-unauthorized-ttl`, upstream 30 s). */
  unauthorizedTtlMs: number;
  maxEntries?: number;
  now?: () => number;
}

interface SubjectAccessReviewAnswer {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** The SubjectAccessReview v1 of a request (upstream webhook authorizer's request body). */
export function subjectAccessReviewOf(a: AuthorizationAttributes): Record<string, unknown> {
  const spec: Record<string, unknown> = { user: a.user.username, groups: a.user.groups };
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  if (a.isResourceRequest) {
    spec.resourceAttributes = { namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name };
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
}

/**
 * Webhook authorization (`--authorization-webhook-config-file`, upstream WebhookAuthorizer):
 * each request is sent as a SubjectAccessReview v1; `allowed` allows, `denied` denies,
 * neither is no opinion (the next mode decides). Answers are cached by the review's content:
 * allows for `authorizedTtlMs`, the rest for `unauthorizedTtlMs`. A failed call is an
 * evaluation error (no opinion, not cached). It cannot list rules (rules reviews say incomplete).
 */
export function webhookAuthorizer(post: ReviewPoster, opts: WebhookAuthorizerOptions): Authorizer {
  const now = opts.now ?? Date.now;
  const cache = new ExpiringCache<AuthorizationResult>(opts.maxEntries ?? 8192);
  return {
    name: 'Webhook',
    async authorize(a) {
      const review = subjectAccessReviewOf(a);
      const key = JSON.stringify(review.spec);
      const hit = cache.get(key, now());
      if (hit) return hit;
      let answer: SubjectAccessReviewAnswer;
      try {
        answer = (await post(review)) as SubjectAccessReviewAnswer;
      } catch (err) {
        throw new Error(`webhook authorizer: ${(err as Error).message}`);
      }
      const s = answer?.status ?? {};
      const reason = [s.reason, s.evaluationError].filter(Boolean).join('; ');
      const result = s.allowed ? ALLOW(reason) : s.denied ? DENY(reason) : NO_OPINION(reason);
      cache.set(key, result, now() + (result.decision === 'allow' ? opts.authorizedTtlMs : opts.unauthorizedTtlMs));
      return result;
    },
  };
}
