import { StatusError } from '@orch/apimachinery';
import type { Authenticator } from './authn';
import { bearerToken, cachedTokenAuthenticator } from './token-cache';
import type { UserInfo } from './user';

/** Sends a review object to a webhook and returns its parsed JSON answer (HTTPS, the config file's credentials). */
export type ReviewPoster = (review: unknown) => Promise<unknown>;

interface TokenReviewAnswer {
  apiVersion?: string;
  kind?: string;
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; audiences?: string[]; error?: string };
}

function unauthorized(reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(`token webhook: ${reason}`);
  return e;
}

/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`, upstream
 * webhook.WebhookTokenAuthenticator): every bearer token is sent as a TokenReview v1
 * (`authentication.k8s.io/v1`, spec.token and spec.audiences); `authenticated: true` with a
 * user is the user, `false` is not a user (null: 401 when nobody else claims the token), a
 * failed call is 401. Answers are cached by token hash for `cacheTtlMs`, successes and
 * failures alike (`--authentication-token-webhook-cache-ttl`, default 2 min); failed calls are not.
 */
export function webhookTokenAuthenticator(post: ReviewPoster, opts: { cacheTtlMs: number; now?: () => number }): Authenticator {
  const inner: Authenticator = {
    async authenticate(req) {
      const token = bearerToken(req.headers);
      if (!token) return null;
      const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(req.audiences?.length ? { audiences: req.audiences } : {}) } };
      let answer: TokenReviewAnswer;
      try {
        answer = (await post(review)) as TokenReviewAnswer;
      } catch (err) {
        throw unauthorized(`the webhook could not be called: ${(err as Error).message}`);
      }
      const s = answer?.status;
      if (!s?.authenticated) return null;
      if (!s.user?.username) throw unauthorized('the webhook authenticated a token without a username');
      if (req.audiences?.length && s.audiences && !s.audiences.some((a) => req.audiences!.includes(a))) return null;
      const user: UserInfo = { username: s.user.username, groups: Array.isArray(s.user.groups) ? s.user.groups.filter((g) => typeof g === 'string') : [] };
      if (s.user.uid) user.uid = s.user.uid;
      if (s.user.extra && Object.keys(s.user.extra).length) user.extra = s.user.extra;
      return user;
    },
  };
  return cachedTokenAuthenticator(inner, { successTtlMs: opts.cacheTtlMs, failureTtlMs: opts.cacheTtlMs, ...(opts.now ? { now: opts.now } : {}) });
}
