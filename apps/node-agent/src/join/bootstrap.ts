import { X509Certificate, webcrypto } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { loadKubeconfig, writeAtomic, writeKubeconfig } from '@orch/auth';
import { RestClient, sleep, type ClientConfig } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { KubeObject } from '@orch/apimachinery';
import { CSRS } from '../api/types';

x509.cryptoProvider.set(webcrypto);

/** Signer of node agents' client certificates. */
export const NODE_CLIENT_SIGNER = 'orch.io/kube-apiserver-client-kubelet';

/** User name of a node (the CN of its client certificate). */
export function nodeUser(nodeName: string): string {
  return `system:node:${nodeName}`;
}

interface Csr extends KubeObject {
  spec?: { request: string; signerName: string; usages: string[] };
  status?: { certificate?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** A fresh ECDSA P-256 key and a PKCS#10 request for `O=system:nodes, CN=system:node:<name>`. */
export async function nodeCsr(nodeName: string): Promise<{ csrPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ O: ['system:nodes'] }, { CN: [nodeUser(nodeName)] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { csrPem: csr.toString('pem'), keyPem: `${x509.PemConverter.encode(der, 'PRIVATE KEY')}\n` };
}

/** True when the kubeconfig holds a client certificate for the node that is valid for another hour. */
export async function hasValidNodeCredentials(kubeconfigPath: string, nodeName: string): Promise<boolean> {
  try {
    const creds = await loadKubeconfig(kubeconfigPath);
    if (!creds.certPem || !creds.keyPem) return false;
    const cert = new X509Certificate(creds.certPem);
    return cert.subject.split('\n').includes(`CN=${nodeUser(nodeName)}`) && new Date(cert.validTo).getTime() > Date.now() + 3600_000;
  } catch {
    return false;
  }
}

export interface TlsBootstrapOptions {
  /** Gateway address, CA and bootstrap token. */
  bootstrap: ClientConfig;
  nodeName: string;
  /** Where the key and certificate are written. */
  certDir: string;
  /** The kubeconfig written for the node's own identity. */
  kubeconfigPath: string;
  timeoutMs: number;
  signal: AbortSignal;
  logger: Logger;
}

/**
 * TLS bootstrap (upstream kubelet with --bootstrap-kubeconfig): unless `kubeconfigPath`
 * already holds a valid node certificate, creates a CertificateSigningRequest for
 * `system:node:<name>` (group system:nodes, signer orch.io/kube-apiserver-client-kubelet)
 * with the bootstrap credentials, waits until it is approved and issued (or fails when it is
 * denied, fails or times out), and writes the key, certificate, CA and a kubeconfig.
 */
export async function tlsBootstrap(opts: TlsBootstrapOptions): Promise<void> {
  if (await hasValidNodeCredentials(opts.kubeconfigPath, opts.nodeName)) {
    opts.logger.info('node client certificate present and valid; skipping TLS bootstrap', { kubeconfig: opts.kubeconfigPath });
    return;
  }
  const client = new RestClient(opts.bootstrap, { component: 'node-agent', timeoutMs: 15_000 });
  try {
    const { csrPem, keyPem } = await nodeCsr(opts.nodeName);
    const csrs = client.resource<Csr>(CSRS);
    const created = await csrs.create({
      apiVersion: 'certificates.orch.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'node-csr-' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: NODE_CLIENT_SIGNER, usages: ['digital signature', 'client auth'] },
    });
    const name = String(created.metadata.name);
    opts.logger.info('waiting for the certificate signing request to be approved and issued', { csr: name });
    const deadline = Date.now() + opts.timeoutMs;
    let certB64: string | undefined;
    while (!certB64) {
      if (opts.signal.aborted) throw new Error('aborted');
      if (Date.now() > deadline) throw new Error(`certificate signing request ${name} was not issued within ${Math.round(opts.timeoutMs / 1000)}s (is the controller-manager running csrapproving and csrsigning?)`);
      const csr = await csrs.get(name);
      const bad = csr.status?.conditions?.find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status === 'True');
      if (bad) throw new Error(`certificate signing request ${name} was ${bad.type.toLowerCase()}: ${bad.reason ?? ''} ${bad.message ?? ''}`.trim());
      certB64 = csr.status?.certificate || undefined;
      if (!certB64) await sleep(500, opts.signal);
    }
    const certPem = Buffer.from(certB64, 'base64').toString('utf8');
    await mkdir(opts.certDir, { recursive: true, mode: 0o700 });
    await writeAtomic(join(opts.certDir, 'node-agent-client.key'), keyPem, 0o600);
    await writeAtomic(join(opts.certDir, 'node-agent-client.crt'), certPem, 0o644);
    if (opts.bootstrap.caPem) await writeAtomic(join(opts.certDir, 'ca.crt'), opts.bootstrap.caPem, 0o644);
    await writeKubeconfig(opts.kubeconfigPath, {
      server: opts.bootstrap.server,
      caPem: opts.bootstrap.caPem ?? '',
      clientCertPem: certPem,
      clientKeyPem: keyPem,
      user: nodeUser(opts.nodeName),
      context: `${nodeUser(opts.nodeName)}@orch`,
    });
    opts.logger.info('node client certificate issued', { csr: name, subject: new X509Certificate(certPem).subject.replace(/\n/g, ', '), kubeconfig: opts.kubeconfigPath });
  } finally {
    client.close();
  }
}
