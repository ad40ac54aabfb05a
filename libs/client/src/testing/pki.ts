import { KeyObject, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** Test PKI: a CA, a serving certificate for 127.0.0.1/localhost and a client certificate. PEM strings. */
export interface TestPki {
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

function keyPem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Makes fresh certificates valid for one day. */
export async function makeTestPki(clientCn = 'tester'): Promise<TestPki> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const caKeys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=orch-test-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const issue = async (serial: string, name: string, extensions: x509.Extension[]) => {
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial,
      subject: name,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: alg,
      extensions,
    });
    return { certPem: cert.toString('pem'), keyPem: keyPem(keys.privateKey) };
  };
  const server = await issue('02', 'CN=orch-gateway', [
    new x509.SubjectAlternativeNameExtension([
      { type: 'ip', value: '127.0.0.1' },
      { type: 'dns', value: 'localhost' },
    ]),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
  ]);
  const client = await issue('03', `CN=${clientCn}`, [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]);
  return { caPem: ca.toString('pem'), serverCertPem: server.certPem, serverKeyPem: server.keyPem, clientCertPem: client.certPem, clientKeyPem: client.keyPem };
}
