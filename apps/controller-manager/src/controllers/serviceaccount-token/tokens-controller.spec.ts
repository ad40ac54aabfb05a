import { generateKeyPairSync } from 'node:crypto';
import { jwtVerify } from 'jose';
import type { Secret, ServiceAccount } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_TYPE, SERVICE_ACCOUNT_UID_ANNOTATION } from './secrets';
import { TokenGenerator } from './token';
import { TokensController, serviceAccountTokenController } from './tokens-controller';

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const keyPem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const decode = (s: Secret, k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString('utf8');

const account = (name: string, uid: string, secrets?: string[]): ServiceAccount => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: 'ns', uid },
  ...(secrets ? { secrets: secrets.map((n) => ({ name: n })) } : {}),
});
const tokenSecret = (name: string, sa: string): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: SERVICE_ACCOUNT_TOKEN_TYPE,
  metadata: { name, namespace: 'ns', annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: sa } },
});
const secretNamed = (h: Harness, name: string) => storedObject<Secret>(h.peer, '/v1/secrets', name, 'ns');

describe('TokensController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ serviceAccountKeyPem: keyPem });
    h.peer.put('/v1/serviceaccounts', account('builder', 'u1', ['builder-token']));
    h.peer.put('/v1/secrets', tokenSecret('builder-token', 'builder'));
    h.peer.put('/v1/secrets', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'plain', namespace: 'ns' } });
    h.start(new TokensController(h.ctx, new TokenGenerator(keyPem)));
  });
  afterEach(() => h.stop());

  it('fills token, ca.crt, namespace and the uid annotation', async () => {
    const s = await eventually('token written', () => {
      const x = secretNamed(h, 'builder-token');
      return x?.data?.['token'] ? x : undefined;
    });
    expect(decode(s, 'ca.crt')).toBe('ROOT CA PEM\n');
    expect(decode(s, 'namespace')).toBe('ns');
    expect(s.metadata.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION]).toBe('u1');
    const { payload } = await jwtVerify(decode(s, 'token'), keys.publicKey);
    expect(payload).toMatchObject({ sub: 'system:serviceaccount:ns:builder', 'orch.io/serviceaccount/secret.name': 'builder-token' });
    expect(secretNamed(h, 'plain')?.data).toBeUndefined();
  });

  it('deletes a token secret whose account does not exist', async () => {
    h.peer.put('/v1/secrets', tokenSecret('ghost-token', 'ghost'));
    await eventually('orphan token deleted', () => (secretNamed(h, 'ghost-token') ? undefined : true));
  });

  it('deletes the token secrets of a deleted account', async () => {
    await eventually('token written', () => (secretNamed(h, 'builder-token')?.data?.['token'] ? true : undefined));
    h.peer.remove('/v1/serviceaccounts', 'ns', 'builder');
    await eventually('token secrets deleted', () => (h.peer.stored('/v1/secrets').some((s) => s.metadata.name?.startsWith('builder')) ? undefined : true));
    expect(secretNamed(h, 'plain')).toBeDefined();
  });

  it('replaces a referenced token secret that was deleted (older auto-created model)', async () => {
    await eventually('token written', () => (secretNamed(h, 'builder-token')?.data?.['token'] ? true : undefined));
    h.peer.remove('/v1/secrets', 'ns', 'builder-token');
    const sa = await eventually('reference moved', () => {
      const x = storedObject<ServiceAccount>(h.peer, '/v1/serviceaccounts', 'builder', 'ns');
      return x?.secrets?.[0]?.name !== 'builder-token' ? x : undefined;
    });
    const name = sa.secrets?.[0]?.name ?? '';
    expect(name).toMatch(/^builder-token-[a-z0-9]{5}$/);
    const replacement = secretNamed(h, name) as Secret;
    expect(replacement.type).toBe(SERVICE_ACCOUNT_TOKEN_TYPE);
    const { payload } = await jwtVerify(decode(replacement, 'token'), keys.publicKey);
    expect(payload['orch.io/serviceaccount/secret.name']).toBe(name);
  });
});

describe('serviceaccount-token descriptor', () => {
  it('does nothing without a signing key', async () => {
    const h = await startHarness();
    try {
      const c = serviceAccountTokenController.create(h.ctx);
      await c.run(new AbortController().signal);
      expect(h.logs.join('\n')).toContain('no --service-account-private-key-file given');
    } finally {
      await h.stop();
    }
  });
});
