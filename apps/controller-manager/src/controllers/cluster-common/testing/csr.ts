// Test-only: PKCS#10 requests for CSR tests.
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

/** A fresh ECDSA P-256 request for `O=<orgs>... CN=<cn>` (+ DNS names), as base64 of its PEM (`spec.request`). */
export async function makeCsr(cn: string, orgs: string[] = [], dnsNames: string[] = []): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const name = [...orgs.map((o) => `O=${o}`), `CN=${cn}`].join(', ');
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: alg,
    extensions: dnsNames.length ? [new x509.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: 'dns' as const, value })))] : [],
  });
  return Buffer.from(csr.toString('pem')).toString('base64');
}
