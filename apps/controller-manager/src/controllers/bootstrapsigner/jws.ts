import { CompactSign } from 'jose';
import type { ConfigMap } from '../../framework/api';

/** The signed config map (SPEC "Token secrets"). */
export const CLUSTER_INFO = 'cluster-info';
/** Key of the cluster-only kubeconfig in cluster-info. */
export const KUBECONFIG_KEY = 'kubeconfig';
/** Signature keys are `jws-kubeconfig-<token id>`. */
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/**
 * The cluster-only kubeconfig published in cluster-info, as kubeadm writes it: one unnamed
 * cluster with `certificate-authority-data` and `server`, no users or contexts.
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem, 'utf8').toString('base64')}`,
    `    server: ${server}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

/**
 * upstream jws.ComputeDetachedSignature: an HS256 JWS over `content` with header
 * `{"alg":"HS256","kid":<token id>}`, keyed by the full token `<id>.<secret>`, with the payload
 * left out: `<header>..<signature>`. To verify, put base64url(content) between the dots.
 */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const enc = new TextEncoder();
  const jws = await new CompactSign(enc.encode(content)).setProtectedHeader({ alg: 'HS256', kid: tokenId }).sign(enc.encode(`${tokenId}.${tokenSecret}`));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

/**
 * upstream Signer.signConfigMap: cluster-info's data with one `jws-kubeconfig-<id>` per signing
 * token and no stale signature key. Undefined when nothing changes or there is no kubeconfig
 * to sign.
 */
export async function signedClusterInfoData(cm: ConfigMap, tokens: readonly { id: string; secret: string }[]): Promise<Record<string, string> | undefined> {
  const data = cm.data ?? {};
  const content = data[KUBECONFIG_KEY];
  if (content === undefined) return undefined;
  const next: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) next[k] = v;
  for (const t of tokens) next[`${JWS_KEY_PREFIX}${t.id}`] = await detachedSignature(content, t.id, t.secret);
  const same = Object.keys(next).length === Object.keys(data).length && Object.entries(next).every(([k, v]) => data[k] === v);
  return same ? undefined : next;
}
