import { parseTime } from '@orch/apimachinery';
import { NAMESPACE_INDEX, type SharedInformer } from '@orch/client';
import { SYSTEM_NAMESPACE } from '../../framework/resources';
import type { Secret } from '../../framework/api';

/** Type of bootstrap token secrets (SPEC "Token secrets"). */
export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.orch.io/token';
/** Bootstrap token secrets are named `bootstrap-token-<token id>`. */
export const BOOTSTRAP_TOKEN_NAME_PREFIX = 'bootstrap-token-';

const TOKEN_ID_RE = /^[a-z0-9]{6}$/;
const TOKEN_SECRET_RE = /^[a-z0-9]{16}$/;

/** A bootstrap token secret: the right type, in `orch-system`. */
export function isBootstrapToken(secret: Secret): boolean {
  return secret.type === BOOTSTRAP_TOKEN_TYPE && secret.metadata.namespace === SYSTEM_NAMESPACE;
}

/** The bootstrap token secrets in a cache of all secrets. */
export function bootstrapTokens(secrets: SharedInformer<Secret>): Secret[] {
  return secrets.byIndex(NAMESPACE_INDEX, SYSTEM_NAMESPACE).filter(isBootstrapToken);
}

/** A secret's `data[key]` decoded from base64, '' when absent. */
export function secretData(secret: Secret, key: string): string {
  const v = secret.data?.[key];
  return v ? Buffer.from(v, 'base64').toString('utf8') : '';
}

/**
 * upstream bootstrapsecretutil.GetExpiration: milliseconds left before the token's
 * `expiration`; `expired` when it passed or cannot be parsed (treated as expired), `ttlMs`
 * undefined when the token never expires.
 */
export function tokenExpiration(secret: Secret, nowMs: number): { expired: boolean; ttlMs?: number } {
  const expiration = secretData(secret, 'expiration');
  if (!expiration) return { expired: false };
  let at: number;
  try {
    at = parseTime(expiration);
  } catch {
    return { expired: true };
  }
  const ttlMs = at - nowMs;
  return ttlMs <= 0 ? { expired: true } : { expired: false, ttlMs };
}

/**
 * upstream validateSecretForSigning: the `{id, secret}` of a bootstrap token that may sign
 * cluster-info — right type, name `bootstrap-token-<id>` matching `token-id`, well-formed
 * secret, not expired, `usage-bootstrap-signing: "true"`. Undefined otherwise.
 */
export function signingToken(secret: Secret, nowMs: number): { id: string; secret: string } | undefined {
  if (secret.type !== BOOTSTRAP_TOKEN_TYPE) return undefined;
  const name = secret.metadata.name ?? '';
  if (!name.startsWith(BOOTSTRAP_TOKEN_NAME_PREFIX)) return undefined;
  const nameId = name.slice(BOOTSTRAP_TOKEN_NAME_PREFIX.length);
  const id = secretData(secret, 'token-id');
  const tokenSecret = secretData(secret, 'token-secret');
  if (!TOKEN_ID_RE.test(nameId) || id !== nameId || !TOKEN_SECRET_RE.test(tokenSecret)) return undefined;
  if (tokenExpiration(secret, nowMs).expired) return undefined;
  if (secretData(secret, 'usage-bootstrap-signing') !== 'true') return undefined;
  return { id, secret: tokenSecret };
}
