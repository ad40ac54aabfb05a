import * as x509 from '@peculiar/x509';
import type { CertificateSigningRequest } from '../../framework/api';

/** Signer of node agents' client certificates. */
export const KUBELET_CLIENT_SIGNER = 'orch.io/kube-apiserver-client-kubelet';
/** Signer of other client certificates for the gateway. */
export const APISERVER_CLIENT_SIGNER = 'orch.io/kube-apiserver-client';

/** The parts of a PKCS#10 request the approver and signer check. */
export interface ParsedCsr {
  commonName: string;
  organizations: string[];
  /** DNS names, emails, IPs and URIs asked for. */
  altNames: number;
}

/** Parses `spec.request` (base64 of a PEM CERTIFICATE REQUEST); throws a clear error when malformed. */
export function parseCsr(requestB64: string): ParsedCsr {
  const pem = Buffer.from(requestB64, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----')) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pem);
  } catch (err) {
    throw new Error(`invalid certificate request: ${(err as Error).message}`);
  }
  const san = csr.extensions.find((e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension);
  return {
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    organizations: csr.subjectName.getField('O'),
    altNames: san ? san.names.items.length : 0,
  };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x)) && new Set(a).size === a.length;

/**
 * upstream IsKubeletClientCSR: O exactly `system:nodes`, CN `system:node:<name>`, no alternative
 * names, usages exactly {digital signature, client auth} (plus key encipherment for RSA keys).
 * Returns what is wrong, or undefined when it is a node client request.
 */
export function kubeletClientCsrProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!sameSet(csr.organizations, ['system:nodes'])) return 'subject organization is not system:nodes';
  if (csr.altNames > 0) return 'DNS, email, IP or URI subjectAltNames are not allowed';
  if (!csr.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, ['digital signature', 'key encipherment', 'client auth']) && !sameSet(usages, ['digital signature', 'client auth'])) {
    return 'usages did not match [client auth digital signature] or [client auth digital signature key encipherment]';
  }
  return undefined;
}

/** upstream validAPIServerClientUsages: only client usages, client auth among them. */
export function apiServerClientUsagesProblem(usages: readonly string[]): string | undefined {
  for (const u of usages) if (u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth') return `invalid usage for client certificate: ${u}`;
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
}

const hasTrue = (csr: CertificateSigningRequest, type: string) => (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** The request was approved and not denied. */
export function isApproved(csr: CertificateSigningRequest): boolean {
  return hasTrue(csr, 'Approved') && !hasTrue(csr, 'Denied');
}

/** The request was approved or denied already. */
export function isDecided(csr: CertificateSigningRequest): boolean {
  return hasTrue(csr, 'Approved') || hasTrue(csr, 'Denied');
}

/** Signing the request failed before. */
export function hasFailed(csr: CertificateSigningRequest): boolean {
  return hasTrue(csr, 'Failed');
}
