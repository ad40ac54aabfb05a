import type { Secret, ServiceAccount } from '../../framework/api';

/** Type of long-lived service-account token secrets (SPEC "Token secrets"). */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'orch.io/service-account-token';
/** Annotation naming the account (set by the creator). */
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'orch.io/service-account.name';
/** Annotation with the account's uid (set by the control plane). */
export const SERVICE_ACCOUNT_UID_ANNOTATION = 'orch.io/service-account.uid';
export const TOKEN_KEY = 'token';
export const CA_KEY = 'ca.crt';
export const NAMESPACE_KEY = 'namespace';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The account a token secret names, or undefined for a secret that is not one. */
export function secretAccount(secret: Secret): { name: string; uid: string } | undefined {
  if (secret.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return undefined;
  const name = secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION];
  return name ? { name, uid: secret.metadata.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION] ?? '' } : undefined;
}

/** True when `secret` is a token secret of `sa` (name matches; uid too when recorded). */
export function isTokenSecretOf(secret: Secret, sa: { metadata: { name?: string; uid?: string } }): boolean {
  const ref = secretAccount(secret);
  return !!ref && ref.name === sa.metadata.name && (!ref.uid || ref.uid === sa.metadata.uid);
}

/** What a token secret lacks (upstream generateTokenIfNeeded): a current CA, its namespace, a token. */
export interface TokenSecretNeeds {
  ca: boolean;
  namespace: boolean;
  token: boolean;
}

/** Which parts of a token secret must be (re)written; none means it is complete. */
export function tokenSecretNeeds(secret: Secret, rootCaPem: string): TokenSecretNeeds {
  const data = secret.data ?? {};
  return {
    ca: rootCaPem.length > 0 && data[CA_KEY] !== b64(rootCaPem),
    namespace: !data[NAMESPACE_KEY],
    token: !data[TOKEN_KEY],
  };
}

/**
 * The completed copy of a token secret: the missing parts filled in (the token from `token`,
 * when needed) and both account annotations set, as upstream does on every write.
 */
export function completeTokenSecret(secret: Secret, sa: ServiceAccount, rootCaPem: string, needs: TokenSecretNeeds, token?: string): Secret {
  const out = structuredClone(secret) as Secret;
  const data = { ...(out.data ?? {}) };
  if (needs.ca) data[CA_KEY] = b64(rootCaPem);
  if (needs.namespace) data[NAMESPACE_KEY] = b64(out.metadata.namespace ?? '');
  if (needs.token && token !== undefined) data[TOKEN_KEY] = b64(token);
  out.data = data;
  out.metadata.annotations = {
    ...(out.metadata.annotations ?? {}),
    [SERVICE_ACCOUNT_NAME_ANNOTATION]: sa.metadata.name ?? '',
    [SERVICE_ACCOUNT_UID_ANNOTATION]: sa.metadata.uid ?? '',
  };
  return out;
}
