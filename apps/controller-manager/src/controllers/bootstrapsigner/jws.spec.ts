import { compactVerify } from 'jose';
import { parse } from 'yaml';
import type { ConfigMap } from '../../framework/api';
import { JWS_KEY_PREFIX, KUBECONFIG_KEY, clusterInfoKubeconfig, detachedSignature, signedClusterInfoData } from './jws';

const enc = new TextEncoder();
const KUBECONFIG = clusterInfoKubeconfig('https://127.0.0.1:6443', 'CA PEM\n');

/** SPEC "Token secrets": base64url(payload) between the dots, HS256 with the full token. */
function verify(detached: string, content: string, token: string) {
  const [header, , signature] = detached.split('.');
  return compactVerify(`${header}.${Buffer.from(content).toString('base64url')}.${signature}`, enc.encode(token));
}

describe('clusterInfoKubeconfig', () => {
  it('is a cluster-only kubeconfig with the CA data and server', () => {
    expect(parse(KUBECONFIG)).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: '', cluster: { 'certificate-authority-data': Buffer.from('CA PEM\n').toString('base64'), server: 'https://127.0.0.1:6443' } }],
      contexts: null,
      'current-context': '',
      preferences: {},
      users: null,
    });
  });
});

describe('detachedSignature', () => {
  it('has an HS256 header with the token id as kid and no payload', async () => {
    const sig = await detachedSignature(KUBECONFIG, 'abcdef', '0123456789abcdef');
    const [header, payload, signature] = sig.split('.');
    expect(payload).toBe('');
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', kid: 'abcdef' });
  });

  it.each([
    { name: 'verifies with its token', token: 'abcdef.0123456789abcdef', content: KUBECONFIG, ok: true },
    { name: 'fails with another token', token: 'abcdef.fedcba9876543210', content: KUBECONFIG, ok: false },
    { name: 'fails with another token id', token: 'zzzzzz.0123456789abcdef', content: KUBECONFIG, ok: false },
    { name: 'fails for a changed payload', token: 'abcdef.0123456789abcdef', content: `${KUBECONFIG}#`, ok: false },
  ])('$name', async ({ token, content, ok }) => {
    const sig = await detachedSignature(KUBECONFIG, 'abcdef', '0123456789abcdef');
    const result = verify(sig, content, token);
    if (ok) await expect(result).resolves.toMatchObject({ protectedHeader: { alg: 'HS256', kid: 'abcdef' } });
    else await expect(result).rejects.toThrow('signature verification failed');
  });
});

describe('signedClusterInfoData', () => {
  const cm = (data: Record<string, string>): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info', namespace: 'orch-public' }, data });
  const t1 = { id: 'aaaaaa', secret: '0123456789abcdef' };
  const t2 = { id: 'bbbbbb', secret: 'fedcba9876543210' };

  it.each<{ name: string; data: Record<string, string>; tokens: { id: string; secret: string }[]; want: string[] | undefined }>([
    { name: 'no kubeconfig: nothing to sign', data: { other: 'x' }, tokens: [t1], want: undefined },
    { name: 'adds one key per token', data: { [KUBECONFIG_KEY]: KUBECONFIG }, tokens: [t1, t2], want: [KUBECONFIG_KEY, `${JWS_KEY_PREFIX}aaaaaa`, `${JWS_KEY_PREFIX}bbbbbb`] },
    { name: 'removes stale keys, keeps others', data: { [KUBECONFIG_KEY]: KUBECONFIG, [`${JWS_KEY_PREFIX}gone00`]: 'x..y', note: 'n' }, tokens: [t1], want: [KUBECONFIG_KEY, 'note', `${JWS_KEY_PREFIX}aaaaaa`] },
    { name: 'no tokens: all signatures removed', data: { [KUBECONFIG_KEY]: KUBECONFIG, [`${JWS_KEY_PREFIX}aaaaaa`]: 'x..y' }, tokens: [], want: [KUBECONFIG_KEY] },
  ])('$name', async ({ data, tokens, want }) => {
    const got = await signedClusterInfoData(cm(data), tokens);
    expect(got === undefined ? undefined : Object.keys(got).sort()).toEqual(want?.sort());
  });

  it('is a no-op when the signatures are current', async () => {
    const signed = await signedClusterInfoData(cm({ [KUBECONFIG_KEY]: KUBECONFIG }), [t1]);
    expect(await signedClusterInfoData(cm(signed as Record<string, string>), [t1])).toBeUndefined();
  });
});
