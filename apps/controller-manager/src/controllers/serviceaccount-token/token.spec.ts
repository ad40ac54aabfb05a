import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { LEGACY_ISSUER, TokenGenerator, keyId, legacyClaims } from './token';

const subject = { namespace: 'ns1', serviceAccountName: 'builder', serviceAccountUid: 'uid-1', secretName: 'builder-token' };

describe('legacyClaims', () => {
  it('has the upstream legacy claims with orch names', () => {
    expect(legacyClaims(subject)).toEqual({
      iss: LEGACY_ISSUER,
      sub: 'system:serviceaccount:ns1:builder',
      'orch.io/serviceaccount/namespace': 'ns1',
      'orch.io/serviceaccount/secret.name': 'builder-token',
      'orch.io/serviceaccount/service-account.name': 'builder',
      'orch.io/serviceaccount/service-account.uid': 'uid-1',
    });
  });
});

describe('TokenGenerator', () => {
  it.each([
    { name: 'ECDSA P-256 (the PKI sa.key)', keys: generateKeyPairSync('ec', { namedCurve: 'P-256' }), alg: 'ES256' },
    { name: 'ECDSA P-384', keys: generateKeyPairSync('ec', { namedCurve: 'P-384' }), alg: 'ES384' },
    { name: 'RSA', keys: generateKeyPairSync('rsa', { modulusLength: 2048 }), alg: 'RS256' },
  ])('$name: signs a JWT the public key verifies', async ({ keys, alg }) => {
    const pem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const token = await new TokenGenerator(pem).generate(legacyClaims(subject));
    expect(decodeProtectedHeader(token)).toEqual({ alg, kid: keyId(keys.publicKey) });
    const { payload } = await jwtVerify(token, keys.publicKey, { issuer: LEGACY_ISSUER, subject: 'system:serviceaccount:ns1:builder' });
    expect(payload['orch.io/serviceaccount/service-account.uid']).toBe('uid-1');
    expect(payload.exp).toBeUndefined();
  });

  it('fails verification with another key', async () => {
    const a = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const b = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = await new TokenGenerator(a.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()).generate(legacyClaims(subject));
    await expect(jwtVerify(token, b.publicKey)).rejects.toThrow('signature verification failed');
  });

  it('accepts a SEC1 EC key and rejects unsupported key types', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    expect(() => new TokenGenerator(ec)).not.toThrow();
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => new TokenGenerator(ed)).toThrow('unsupported service account key: ed25519');
  });
});
