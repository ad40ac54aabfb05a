import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { LEGACY_ISSUER, serviceAccountKeyId, signingAlgorithm } from '@orch/auth';

export { LEGACY_ISSUER };
/** The key id the gateway's verifier expects (shared with @orch/auth). */
export const keyId = serviceAccountKeyId;

const CLAIM_PREFIX = 'orch.io/serviceaccount/';

/** Who a legacy token is for: the account and the secret that holds the token. */
export interface LegacyTokenSubject {
  namespace: string;
  serviceAccountName: string;
  serviceAccountUid: string;
  secretName: string;
}

/**
 * upstream serviceaccount.LegacyClaims: issuer, subject `system:serviceaccount:<ns>:<name>`
 * and the private `orch.io/serviceaccount/*` claims. No `exp`: the token lives as long as its
 * secret.
 */
export function legacyClaims(s: LegacyTokenSubject): Record<string, string> {
  return {
    iss: LEGACY_ISSUER,
    sub: `system:serviceaccount:${s.namespace}:${s.serviceAccountName}`,
    [`${CLAIM_PREFIX}namespace`]: s.namespace,
    [`${CLAIM_PREFIX}secret.name`]: s.secretName,
    [`${CLAIM_PREFIX}service-account.name`]: s.serviceAccountName,
    [`${CLAIM_PREFIX}service-account.uid`]: s.serviceAccountUid,
  };
}

/**
 * Signs service-account JWTs (upstream JWTTokenGenerator) with the PEM private key of
 * `--service-account-private-key-file` (PKCS#8, SEC1 or PKCS#1). The header carries `alg` and
 * `kid` (the public key's id, as the gateway's verifier expects).
 */
export class TokenGenerator {
  private readonly key: KeyObject;
  private readonly alg: string;
  private readonly kid: string;

  constructor(privateKeyPem: string) {
    this.key = createPrivateKey(privateKeyPem);
    this.alg = signingAlgorithm(this.key);
    this.kid = keyId(createPublicKey(this.key));
  }

  /** A compact JWS of `claims`. */
  generate(claims: Record<string, string>): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: this.alg, kid: this.kid }).sign(this.key);
  }
}
