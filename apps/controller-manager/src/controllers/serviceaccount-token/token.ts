import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/** `iss` of tokens in service-account token secrets (upstream LegacyIssuer). */
export const LEGACY_ISSUER = 'orch/serviceaccount';

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

/** upstream keyIDFromPublicKey: base64url (unpadded) SHA-256 of the PKIX DER public key. */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** JWS algorithm for a private key: ES256/ES384/ES512 by curve, RS256 for RSA. */
function algorithmFor(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const alg = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg) return alg;
  }
  throw new Error(`unsupported service account signing key: ${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim());
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
    this.alg = algorithmFor(this.key);
    this.kid = keyId(createPublicKey(this.key));
  }

  /** A compact JWS of `claims`. */
  generate(claims: Record<string, string>): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: this.alg, kid: this.kid }).sign(this.key);
  }
}
