import { createHmac, createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatTime, type KubeObject } from '@orch/apimachinery';
import { isNotFound } from '@orch/client';
import { eventually, startClusterControllers, type ClusterControllers } from './cluster-support';

const core = (resource: string) => ({ group: '', version: 'v1', resource });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

interface SecretObj extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}
interface ConfigMapObj extends KubeObject {
  data?: Record<string, string>;
}

/** Checks an ES256 compact JWS with the PEM public key (independently of the signer's library). */
function verifyEs256(jwt: string, publicKeyPem: string): Record<string, unknown> {
  const [header, payload, signature] = jwt.split('.');
  const ok = verify('sha256', Buffer.from(`${header}.${payload}`), { key: createPublicKey(publicKeyPem), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('signature does not verify');
  expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'ES256' });
  return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
}

/** SPEC "Token secrets": base64url(kubeconfig) between the dots, HMAC-SHA256 keyed by the full token. */
function jwsVerifies(detached: string, kubeconfig: string, token: string): boolean {
  const [header, , signature] = detached.split('.');
  const expected = createHmac('sha256', token).update(`${header}.${Buffer.from(kubeconfig).toString('base64url')}`).digest('base64url');
  return expected === signature;
}

const bootstrapToken = (id: string, secret: string, extra: Record<string, string> = {}): SecretObj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'bootstrap.orch.io/token',
  metadata: { name: `bootstrap-token-${id}`, namespace: 'orch-system' },
  data: Object.fromEntries(Object.entries({ 'token-id': id, 'token-secret': secret, 'usage-bootstrap-signing': 'true', ...extra }).map(([k, v]) => [k, b64(v)])),
});

describe('cluster controllers: serviceaccount-token, bootstrapsigner, tokencleaner (real gateway + controller-manager)', () => {
  let c: ClusterControllers;
  beforeAll(async () => {
    c = await startClusterControllers(['serviceaccount-token', 'bootstrapsigner', 'tokencleaner']);
  });
  afterAll(() => c?.stop());

  it('fills a legacy token secret with a JWT signed by the service-account key', async () => {
    const sa = await c.client.resource(core('serviceaccounts'), 'default').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } });
    const secrets = c.client.resource<SecretObj>(core('secrets'), 'default');
    await secrets.create({ apiVersion: 'v1', kind: 'Secret', type: 'orch.io/service-account-token', metadata: { name: 'builder-token', annotations: { 'orch.io/service-account.name': 'builder' } } });
    const filled = await eventually('token written', async () => {
      const s = await secrets.get('builder-token');
      return s.data?.['token'] ? s : undefined;
    });
    expect(decode(filled.data?.['ca.crt'])).toBe(await readFile(join(c.pkiDir, 'ca.crt'), 'utf8'));
    expect(decode(filled.data?.['namespace'])).toBe('default');
    expect(filled.metadata.annotations?.['orch.io/service-account.uid']).toBe(sa.metadata.uid);
    const claims = verifyEs256(decode(filled.data?.['token']), await readFile(join(c.pkiDir, 'sa.pub'), 'utf8'));
    expect(claims).toEqual({
      iss: 'orch/serviceaccount',
      sub: 'system:serviceaccount:default:builder',
      'orch.io/serviceaccount/namespace': 'default',
      'orch.io/serviceaccount/secret.name': 'builder-token',
      'orch.io/serviceaccount/service-account.name': 'builder',
      'orch.io/serviceaccount/service-account.uid': sa.metadata.uid,
    });
  });

  it('signs cluster-info with every signing token: the JWS verifies with its token and fails with another', async () => {
    const secrets = c.client.resource<SecretObj>(core('secrets'), 'orch-system');
    await secrets.create(bootstrapToken('abcdef', '0123456789abcdef'));
    await secrets.create(bootstrapToken('nosign', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }));
    const cm = await eventually('cluster-info signed', async () => {
      const x = await c.client.resource<ConfigMapObj>(core('configmaps'), 'orch-public').get('cluster-info');
      return x.data?.['jws-kubeconfig-abcdef'] ? x : undefined;
    });
    const kubeconfig = cm.data?.['kubeconfig'] ?? '';
    expect(kubeconfig).toContain(`certificate-authority-data: ${b64(await readFile(join(c.pkiDir, 'ca.crt'), 'utf8'))}`);
    expect(kubeconfig).toContain(`server: ${c.gateway.url}`);
    expect(Object.keys(cm.data ?? {}).sort()).toEqual(['jws-kubeconfig-abcdef', 'kubeconfig']);
    const sig = cm.data?.['jws-kubeconfig-abcdef'] ?? '';
    expect(sig).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    expect(jwsVerifies(sig, kubeconfig, 'abcdef.0123456789abcdef')).toBe(true);
    expect(jwsVerifies(sig, kubeconfig, 'abcdef.fedcba9876543210')).toBe(false);
  });

  it('deletes expired bootstrap tokens and drops their signatures', async () => {
    const secrets = c.client.resource<SecretObj>(core('secrets'), 'orch-system');
    await secrets.create(bootstrapToken('shortl', '0123456789abcdef', { expiration: formatTime(Date.now() + 2000) }));
    await eventually('short-lived token signs', async () => {
      const x = await c.client.resource<ConfigMapObj>(core('configmaps'), 'orch-public').get('cluster-info');
      return x.data?.['jws-kubeconfig-shortl'] ? true : undefined;
    });
    await eventually('expired token deleted', async () => {
      try {
        await secrets.get('bootstrap-token-shortl');
        return undefined;
      } catch (err) {
        return isNotFound(err) ? true : undefined;
      }
    }, 10_000);
    await eventually('its signature removed', async () => {
      const x = await c.client.resource<ConfigMapObj>(core('configmaps'), 'orch-public').get('cluster-info');
      return x.data?.['jws-kubeconfig-shortl'] ? undefined : true;
    });
    // Tokens without expiration stay.
    expect((await secrets.get('bootstrap-token-abcdef')).metadata.name).toBe('bootstrap-token-abcdef');
  });
});
