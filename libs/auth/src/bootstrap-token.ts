import { timingSafeEqual } from 'node:crypto';
import { StatusError } from '@orch/apimachinery';
import type { Authenticator } from './authn';
import type { UserInfo } from './user';

/** Type of bootstrap token secrets (SPEC "Token secrets"). */
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.orch.io/token';
/** Bootstrap token secrets are `orch-system/bootstrap-token-<token id>`. */
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
/** The group of every bootstrap token user. */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** upstream bootstraputil.ValidateBootstrapGroupName. */
const EXTRA_GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** What the authenticator reads of a bootstrap token secret. */
export interface BootstrapTokenSecret {
  type?: string;
  metadata?: { name?: string; deletionTimestamp?: string };
  /** Base64 values, as in the API. */
  data?: Record<string, string>;
}

function value(secret: BootstrapTokenSecret, key: string): string {
  const v = secret.data?.[key];
  return v ? Buffer.from(v, 'base64').toString('utf8') : '';
}

/** A 401 Unauthorized whose reason rides along as `cause` for logs. */
function rejected(reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(`bootstrap token: ${reason}`);
  return e;
}

/**
 * Bootstrap token authentication (SPEC "Bootstrap token", `--enable-bootstrap-token-auth`):
 * a bearer token `[a-z0-9]{6}.[a-z0-9]{16}` is checked against the secret
 * `orch-system/bootstrap-token-<id>` that `lookup(id)` returns. The secret must be of type
 * bootstrap.orch.io/token, not being deleted, hold the same token-id and token-secret, not be
 * expired and have `usage-bootstrap-authentication: "true"`; every auth-extra-groups entry
 * must start with `system:bootstrappers:`. The user is `system:bootstrap:<id>` in
 * `system:bootstrappers` plus the extra groups. Requests without a bearer token of this
 * shape are not claimed (null); a token of this shape that fails any check is a 401.
 */
export function bootstrapTokenAuthenticator(lookup: (tokenId: string) => Promise<BootstrapTokenSecret | undefined>, opts: { now?: () => Date } = {}): Authenticator {
  const now = opts.now ?? (() => new Date());
  return {
    async authenticate(req) {
      const header = req.headers['authorization'];
      const raw = Array.isArray(header) ? header[0] : header;
      const bearer = raw ? /^Bearer\s+(\S+)\s*$/i.exec(raw)?.[1] : undefined;
      const m = bearer ? TOKEN_RE.exec(bearer) : null;
      if (!m) return null;
      const [, id, secret] = m;
      const s = await lookup(id);
      if (!s) throw rejected(`no secret for token id ${id}`);
      if (s.metadata?.deletionTimestamp) throw rejected(`secret of token id ${id} is being deleted`);
      if (s.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) throw rejected(`secret of token id ${id} has type ${JSON.stringify(s.type)}, want ${BOOTSTRAP_TOKEN_SECRET_TYPE}`);
      const want = Buffer.from(value(s, 'token-secret'));
      const have = Buffer.from(secret);
      if (value(s, 'token-id') !== id || want.length !== have.length || !timingSafeEqual(want, have)) throw rejected(`token id ${id} does not match its secret`);
      const expiration = value(s, 'expiration');
      if (expiration) {
        const at = Date.parse(expiration);
        if (!Number.isFinite(at) || at <= now().getTime()) throw rejected(`token id ${id} has expired`);
      }
      if (value(s, 'usage-bootstrap-authentication') !== 'true') throw rejected(`token id ${id} may not be used for authentication`);
      const extra = value(s, 'auth-extra-groups')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      const bad = extra.find((g) => !EXTRA_GROUP_RE.test(g));
      if (bad) throw rejected(`token id ${id} has an invalid auth-extra-groups entry ${JSON.stringify(bad)}`);
      const user: UserInfo = { username: `system:bootstrap:${id}`, groups: [...new Set([BOOTSTRAPPERS_GROUP, ...extra])] };
      return user;
    },
  };
}
