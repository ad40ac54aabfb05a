import { X509Certificate, createHash, timingSafeEqual } from 'node:crypto';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { parse } from 'yaml';
import { Backoff, RestClient, isNotFound, sleep } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { ConfigMap } from '../api/types';

/** The signed config map (SPEC "Token secrets"). */
export const CLUSTER_INFO_PATH = '/api/v1/namespaces/orch-public/configmaps/cluster-info';
const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/** A bootstrap token `<id>.<secret>` (SPEC "Bootstrap token" format). */
export interface BootstrapToken {
  id: string;
  secret: string;
}

/** Parses `[a-z0-9]{6}.[a-z0-9]{16}`; throws a clear error otherwise. */
export function parseBootstrapToken(token: string): BootstrapToken {
  const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(token.trim());
  if (!m) throw new Error('the bootstrap token must be of the form [a-z0-9]{6}.[a-z0-9]{16} (<token id>.<token secret>)');
  return { id: m[1], secret: m[2] };
}

/** `sha256:<hex>` of the CA certificate's SubjectPublicKeyInfo (kubeadm's CA pin). */
export function caCertHash(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** What cluster-info says about the cluster once its signature checked out. */
export interface ClusterInfo {
  /** PEM of the cluster CA. */
  caPem: string;
  /** The server URL in the cluster-info kubeconfig. */
  server: string;
  /** The signed kubeconfig text. */
  kubeconfig: string;
}

/**
 * Checks the detached JWS `jws-kubeconfig-<token id>` over cluster-info's `kubeconfig` with the
 * token as HS256 key (SPEC: base64url the payload without padding, put it between the dots)
 * and reads the CA and server from the kubeconfig. Throws when the signature is missing or
 * wrong, or the kubeconfig has no CA.
 */
export async function verifyClusterInfo(cm: ConfigMap, token: BootstrapToken): Promise<ClusterInfo> {
  const kubeconfig = cm.data?.kubeconfig;
  if (!kubeconfig) throw new Error('the cluster-info config map has no kubeconfig key');
  const detached = cm.data?.[`${JWS_KEY_PREFIX}${token.id}`];
  if (!detached) throw new Error(`there is no JWS signed token in the cluster-info config map for token id "${token.id}": the token is unknown to the cluster or not signed yet`);
  const [header, empty, signature] = detached.split('.');
  if (header === undefined || empty !== '' || signature === undefined) throw new Error('malformed detached JWS in cluster-info');
  const jws = `${header}.${Buffer.from(kubeconfig, 'utf8').toString('base64url')}.${signature}`;
  const protectedHeader = decodeProtectedHeader(jws);
  if (protectedHeader.alg !== 'HS256') throw new Error(`cluster-info signature uses ${String(protectedHeader.alg)}, want HS256`);
  if (protectedHeader.kid !== undefined && protectedHeader.kid !== token.id) throw new Error('cluster-info signature names another token id');
  try {
    await compactVerify(jws, new TextEncoder().encode(`${token.id}.${token.secret}`), { algorithms: ['HS256'] });
  } catch {
    throw new Error('failed to verify the JWS signature of the cluster-info config map with the bootstrap token');
  }
  const doc = parse(kubeconfig) as { clusters?: { cluster?: { server?: string; 'certificate-authority-data'?: string } }[] } | null;
  const cluster = doc?.clusters?.[0]?.cluster;
  const caData = cluster?.['certificate-authority-data'];
  if (!caData) throw new Error('the cluster-info kubeconfig has no certificate-authority-data');
  return { caPem: Buffer.from(caData, 'base64').toString('utf8'), server: cluster?.server ?? '', kubeconfig };
}

/** Checks the CA against the `sha256:<hex>` pins; no pins means no check. */
export function checkCaPins(caPem: string, pins: readonly string[]): void {
  if (pins.length === 0) return;
  const have = Buffer.from(caCertHash(caPem));
  if (!pins.some((p) => p.length === have.length && timingSafeEqual(Buffer.from(p.toLowerCase()), have))) {
    throw new Error(`the cluster CA's public key hash ${have.toString()} matches none of --discovery-token-ca-cert-hash`);
  }
}

/**
 * Token discovery (kubeadm join): fetches cluster-info from `server` anonymously without
 * trusting its certificate, verifies the signature with the token and the CA pins, then
 * fetches it again over TLS verified with that CA and checks it is the same. Retries (the
 * signer may not have signed yet) until `timeoutMs`. Returns the cluster CA.
 */
export async function discoverCluster(opts: { server: string; token: BootstrapToken; pins: readonly string[]; timeoutMs: number; signal: AbortSignal; logger: Logger }): Promise<ClusterInfo> {
  const deadline = Date.now() + opts.timeoutMs;
  const backoff = new Backoff({ initialMs: 500, maxMs: 5_000, jitter: 0.2 });
  let last: Error | undefined;
  while (!opts.signal.aborted && Date.now() < deadline) {
    const insecure = new RestClient({ server: opts.server, insecureSkipTlsVerify: true }, { component: 'node-agent', timeoutMs: 10_000 });
    try {
      const cm = await insecure.request<ConfigMap>({ method: 'GET', path: CLUSTER_INFO_PATH });
      const info = await verifyClusterInfo(cm, opts.token);
      checkCaPins(info.caPem, opts.pins);
      if (opts.pins.length === 0) opts.logger.warn('no --discovery-token-ca-cert-hash given: trusting the cluster CA because cluster-info is signed with the token', { caHash: caCertHash(info.caPem) });
      const secure = new RestClient({ server: opts.server, caPem: info.caPem }, { component: 'node-agent', timeoutMs: 10_000 });
      try {
        const again = await secure.request<ConfigMap>({ method: 'GET', path: CLUSTER_INFO_PATH });
        if (again.data?.kubeconfig !== info.kubeconfig) throw new Error('cluster-info changed between the insecure and the secure fetch');
      } finally {
        secure.close();
      }
      opts.logger.info('cluster-info verified', { server: opts.server, caHash: caCertHash(info.caPem) });
      return info;
    } catch (err) {
      last = err as Error;
      if (/matches none of|verify the JWS|uses .*want HS256/.test(last.message)) throw last;
      opts.logger.info('waiting for a signed cluster-info', { reason: isNotFound(err) ? 'cluster-info not found' : last.message });
    } finally {
      insecure.close();
    }
    await sleep(backoff.next(), opts.signal);
  }
  throw new Error(`cluster discovery did not succeed within ${Math.round(opts.timeoutMs / 1000)}s${last ? `: ${last.message}` : ''}`);
}
