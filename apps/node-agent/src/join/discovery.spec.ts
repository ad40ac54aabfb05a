import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign } from 'jose';
import { ensurePki, type Pki } from '@orch/auth';
import type { ConfigMap } from '../api/types';
import { caCertHash, checkCaPins, parseBootstrapToken, verifyClusterInfo } from './discovery';

let dir: string;
let pki: Pki;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-discovery-'));
  pki = await ensurePki(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const TOKEN = { id: 'abcdef', secret: '0123456789abcdef' };

function kubeconfig(caPem: string): string {
  return `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}\n    server: https://10.0.0.1:6443\n  name: ""\nkind: Config\n`;
}

/** A detached HS256 JWS as the bootstrap signer writes it (SPEC "Token secrets"). */
async function sign(content: string, id: string, secret: string): Promise<string> {
  const enc = new TextEncoder();
  const jws = await new CompactSign(enc.encode(content)).setProtectedHeader({ alg: 'HS256', kid: id }).sign(enc.encode(`${id}.${secret}`));
  const [h, , s] = jws.split('.');
  return `${h}..${s}`;
}

const cm = (data: Record<string, string>): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info', namespace: 'orch-public' }, data });

describe('verifyClusterInfo', () => {
  it('accepts a kubeconfig signed with the token and returns its CA and server', async () => {
    const kc = kubeconfig(pki.ca.certPem);
    const info = await verifyClusterInfo(cm({ kubeconfig: kc, 'jws-kubeconfig-abcdef': await sign(kc, TOKEN.id, TOKEN.secret) }), TOKEN);
    expect(info).toEqual({ caPem: pki.ca.certPem, server: 'https://10.0.0.1:6443', kubeconfig: kc });
  });

  it.each<{ name: string; data: () => Promise<Record<string, string>>; want: RegExp }>([
    { name: 'no signature for the token', data: async () => ({ kubeconfig: kubeconfig(pki.ca.certPem) }), want: /no JWS signed token/ },
    { name: 'signed with another secret', data: async () => ({ kubeconfig: kubeconfig(pki.ca.certPem), 'jws-kubeconfig-abcdef': await sign(kubeconfig(pki.ca.certPem), TOKEN.id, 'ffffffffffffffff') }), want: /failed to verify the JWS/ },
    {
      name: 'kubeconfig changed after signing',
      data: async () => ({ kubeconfig: kubeconfig(pki.ca.certPem).replace('10.0.0.1', '10.6.6.6'), 'jws-kubeconfig-abcdef': await sign(kubeconfig(pki.ca.certPem), TOKEN.id, TOKEN.secret) }),
      want: /failed to verify the JWS/,
    },
    { name: 'malformed signature', data: async () => ({ kubeconfig: kubeconfig(pki.ca.certPem), 'jws-kubeconfig-abcdef': 'not-a-jws' }), want: /malformed detached JWS/ },
    { name: 'no kubeconfig', data: async () => ({}), want: /no kubeconfig key/ },
  ])('rejects: $name', async ({ data, want }) => {
    await expect(verifyClusterInfo(cm(await data()), TOKEN)).rejects.toThrow(want);
  });
});

describe('token and CA pins', () => {
  it.each([
    { input: 'abcdef.0123456789abcdef', ok: true },
    { input: 'abcdef.0123456789abcde', ok: false },
    { input: 'ABCDEF.0123456789abcdef', ok: false },
    { input: 'abcdef0123456789abcdef', ok: false },
  ])('token $input', ({ input, ok }) => {
    if (ok) expect(parseBootstrapToken(input)).toEqual(TOKEN);
    else expect(() => parseBootstrapToken(input)).toThrow(/\[a-z0-9\]\{6\}/);
  });

  it('checks sha256 pins of the CA public key', () => {
    const hash = caCertHash(pki.ca.certPem);
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(() => checkCaPins(pki.ca.certPem, [])).not.toThrow();
    expect(() => checkCaPins(pki.ca.certPem, ['sha256:00', hash])).not.toThrow();
    expect(() => checkCaPins(pki.ca.certPem, [`sha256:${'0'.repeat(64)}`])).toThrow(/matches none/);
  });
});
