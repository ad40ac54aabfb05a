import { createPrivateKey, createPublicKey, sign, verify, webcrypto, X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { DEFAULT_SERVING_HOSTS, ensurePki, issueClientCert, Pki, signCsr } from './pki';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const FILES = ['ca.crt', 'ca.key', 'serving.crt', 'serving.key', 'admin.crt', 'admin.key', 'sa.key', 'sa.pub'];

let dir: string;
let pki: Pki;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-pki-'));
  pki = await ensurePki(dir, { hosts: ['10.0.0.5', 'gw.example.com', 'fd00::5'] });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function freshDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'orch-pki-'));
}

/** Checks `certPem` is signed by the CA of `pki` and valid now. */
function expectSignedByCa(certPem: string, p: Pki = pki): X509Certificate {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(p.ca.certPem);
  expect(cert.checkIssued(ca)).toBe(true);
  expect(cert.verify(ca.publicKey)).toBe(true);
  expect(new Date(cert.validFrom).getTime()).toBeLessThanOrEqual(Date.now());
  expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now());
  return cert;
}

describe('ensurePki', () => {
  it('writes every file, keys mode 0600', async () => {
    for (const f of FILES) {
      const mode = (await stat(join(dir, f))).mode & 0o777;
      expect({ f, mode }).toEqual({ f, mode: f.endsWith('.key') ? 0o600 : 0o644 });
    }
    expect(await readFile(pki.files.caCert, 'utf8')).toBe(pki.ca.certPem);
    // PEMs end in a newline so bundles concatenate
    for (const pem of [pki.ca.certPem, pki.ca.keyPem, pki.serving.certPem, pki.admin.keyPem, pki.serviceAccount.publicKeyPem]) expect(pem.endsWith('-----\n')).toBe(true);
    expect(pki.files.saPub).toBe(join(dir, 'sa.pub'));
  });

  it('creates a self-signed CA named orch-ca, valid about 10 years', () => {
    const ca = new X509Certificate(pki.ca.certPem);
    expect(ca.subject).toBe('CN=orch-ca');
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.checkPrivateKey(createPrivateKey(pki.ca.keyPem))).toBe(true);
    const years = (new Date(ca.validTo).getTime() - Date.now()) / (365 * 24 * 3600 * 1000);
    expect(years).toBeGreaterThan(9.9);
  });

  it('reuses everything on the next start', async () => {
    const again = await ensurePki(dir, { hosts: ['10.0.0.5', 'gw.example.com', 'fd00::5'] });
    expect(again).toEqual(pki);
  });

  it('serving certificate: serverAuth, chain verifies, key matches', () => {
    const cert = expectSignedByCa(pki.serving.certPem);
    expect(cert.keyUsage).toEqual([SERVER_AUTH]);
    expect(cert.ca).toBe(false);
    expect(cert.checkPrivateKey(createPrivateKey(pki.serving.keyPem))).toBe(true);
  });

  it.each([...DEFAULT_SERVING_HOSTS, '10.0.0.5', 'gw.example.com', 'fd00::5'])('serving certificate covers %s', (host) => {
    const cert = new X509Certificate(pki.serving.certPem);
    expect(isIP(host) ? cert.checkIP(host) : cert.checkHost(host)).toBeDefined();
  });

  it('admin certificate: CN=admin O=system:masters, clientAuth', () => {
    const cert = expectSignedByCa(pki.admin.certPem);
    expect(cert.subject).toBe('O=system:masters\nCN=admin');
    expect(cert.keyUsage).toEqual([CLIENT_AUTH]);
    expect(cert.checkPrivateKey(createPrivateKey(pki.admin.keyPem))).toBe(true);
  });

  it('service-account key pair signs and verifies (ES256 material)', () => {
    const key = createPrivateKey(pki.serviceAccount.privateKeyPem);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const sig = sign('sha256', Buffer.from('token'), key);
    expect(verify('sha256', Buffer.from('token'), createPublicKey(pki.serviceAccount.publicKeyPem), sig)).toBe(true);
  });

  it('reissues the serving certificate for a new host, keeping the CA and the rest', async () => {
    const d = await freshDir();
    try {
      const first = await ensurePki(d, {});
      const second = await ensurePki(d, { hosts: ['orch.internal'] });
      expect(second.ca).toEqual(first.ca);
      expect(second.admin).toEqual(first.admin);
      expect(second.serviceAccount).toEqual(first.serviceAccount);
      expect(second.serving.certPem).not.toBe(first.serving.certPem);
      expect(new X509Certificate(second.serving.certPem).checkHost('orch.internal')).toBe('orch.internal');
      expectSignedByCa(second.serving.certPem, second);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it.each([
    { name: 'admin.crt removed', remove: ['admin.crt'], changes: ['admin'] },
    { name: 'serving.key removed', remove: ['serving.key'], changes: ['serving'] },
    { name: 'sa.pub removed is derived again from sa.key', remove: ['sa.pub'], changes: [] },
    { name: 'both CA files removed makes a new cluster', remove: ['ca.crt', 'ca.key'], changes: ['ca', 'serving', 'admin'] },
  ])('repairs: $name', async ({ remove, changes }) => {
    const d = await freshDir();
    try {
      const first = await ensurePki(d);
      for (const f of remove) await unlink(join(d, f));
      const second = await ensurePki(d);
      for (const part of ['ca', 'serving', 'admin', 'serviceAccount'] as const) {
        expect({ part, same: JSON.stringify(second[part]) === JSON.stringify(first[part]) }).toEqual({ part, same: !changes.includes(part) });
      }
      expectSignedByCa(second.serving.certPem, second);
      expectSignedByCa(second.admin.certPem, second);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it('reissues a leaf signed by another CA', async () => {
    const [a, b] = [await freshDir(), await freshDir()];
    try {
      const pa = await ensurePki(a);
      const pb = await ensurePki(b);
      await writeFile(join(a, 'admin.crt'), pb.admin.certPem);
      await writeFile(join(a, 'admin.key'), pb.admin.keyPem);
      const again = await ensurePki(a);
      expect(again.admin.certPem).not.toBe(pb.admin.certPem);
      expectSignedByCa(again.admin.certPem, pa);
    } finally {
      await Promise.all([a, b].map((d) => rm(d, { recursive: true, force: true })));
    }
  });

  it.each([
    { name: 'ca.crt without ca.key', mutate: (d: string) => unlink(join(d, 'ca.key')), want: /ca\.crt exists but .*ca\.key does not/ },
    { name: 'ca.key of another CA', mutate: async (d: string) => writeFile(join(d, 'ca.key'), await readFile(join(d, 'admin.key'))), want: /ca\.key does not match .*ca\.crt/ },
  ])('refuses to replace an existing CA: $name', async ({ mutate, want }) => {
    const d = await freshDir();
    try {
      await ensurePki(d);
      await mutate(d);
      await expect(ensurePki(d)).rejects.toThrow(want);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  /** Keeps the first half of a file, as a crash in the middle of a non-atomic write would. */
  const halve = async (d: string, f: string) => {
    const text = await readFile(join(d, f), 'utf8');
    await writeFile(join(d, f), text.slice(0, text.length >> 1));
  };

  it.each([
    { file: 'ca.crt', want: /ca\.crt cannot be read as PEM \(.*\): the file is incomplete or damaged; restore it from a backup, or remove the PKI directory/ },
    { file: 'ca.key', want: /ca\.key cannot be read as PEM \(.*\): the file is incomplete or damaged; restore it from a backup, or remove the PKI directory/ },
    { file: 'sa.key', want: /sa\.key cannot be read as PEM \(.*\): the file is incomplete or damaged; restore it from a backup, or remove it to create a new key/ },
  ])('a half-written $file fails with a message naming the file and what to do', async ({ file, want }) => {
    const d = await freshDir();
    try {
      await ensurePki(d);
      await halve(d, file);
      await expect(ensurePki(d)).rejects.toThrow(want);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it.each(['serving.crt', 'serving.key', 'admin.crt', 'admin.key'])('a half-written %s is reissued from the CA', async (file) => {
    const d = await freshDir();
    try {
      const first = await ensurePki(d);
      await halve(d, file);
      const second = await ensurePki(d);
      expect(second.ca).toEqual(first.ca);
      expectSignedByCa(second.serving.certPem, second);
      expectSignedByCa(second.admin.certPem, second);
      expect(createPublicKey(createPrivateKey(second.admin.keyPem)).export({ type: 'spki', format: 'pem' })).toBe(new X509Certificate(second.admin.certPem).publicKey.export({ type: 'spki', format: 'pem' }));
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it('leaves no temporary files behind', async () => {
    const d = await freshDir();
    try {
      await ensurePki(d);
      expect((await readdir(d)).sort()).toEqual([...FILES].sort());
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it('concurrent first starts agree on one CA', async () => {
    const d = await freshDir();
    try {
      const all = await Promise.all([ensurePki(d), ensurePki(d), ensurePki(d)]);
      expect(new Set(all.map((p) => p.ca.certPem)).size).toBe(1);
      expect(all[1]).toEqual(all[0]);
      expect(await readFile(join(d, 'ca.crt'), 'utf8')).toBe(all[0].ca.certPem);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('issueClientCert', () => {
  it.each([
    { name: 'scheduler', cn: 'system:orch-scheduler', orgs: [], subject: 'CN=system:orch-scheduler' },
    { name: 'controller-manager', cn: 'system:orch-controller-manager', orgs: [], subject: 'CN=system:orch-controller-manager' },
    { name: 'node', cn: 'system:node:worker-1', orgs: ['system:nodes'], subject: 'O=system:nodes\nCN=system:node:worker-1' },
    { name: 'proxy', cn: 'system:orch-proxy', orgs: [], subject: 'CN=system:orch-proxy' },
    { name: 'several groups', cn: 'jane', orgs: ['dev', 'ops'], subject: 'O=dev\nO=ops\nCN=jane' },
  ])('$name', async ({ cn, orgs, subject }) => {
    const issued = await issueClientCert(pki, { cn, orgs, days: 30 });
    const cert = expectSignedByCa(issued.certPem);
    expect(cert.subject).toBe(subject);
    expect(cert.keyUsage).toEqual([CLIENT_AUTH]);
    expect(cert.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    const days = (new Date(cert.validTo).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('caps validity at the CA expiry', async () => {
    const issued = await issueClientCert(pki, { cn: 'long', days: 100 * 365 });
    expect(new X509Certificate(issued.certPem).validTo).toBe(new X509Certificate(pki.ca.certPem).validTo);
  });

  it('needs a common name', async () => {
    await expect(issueClientCert(pki, { cn: '' })).rejects.toThrow('client certificate needs a common name');
  });
});

describe('signCsr', () => {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

  async function makeCsr(name: string, sans: x509.JsonGeneralNames = []): Promise<{ pem: string; keys: webcrypto.CryptoKeyPair }> {
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name,
      keys,
      signingAlgorithm: alg,
      extensions: sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
    });
    return { pem: csr.toString('pem'), keys };
  }

  it.each([
    { name: 'node client', subject: 'O=system:nodes, CN=system:node:n1', usages: ['digital signature', 'client auth'], eku: [CLIENT_AUTH], want: 'O=system:nodes\nCN=system:node:n1' },
    { name: 'node serving with SANs', subject: 'O=system:nodes, CN=system:node:n1', usages: ['digital signature', 'key encipherment', 'server auth'], eku: [SERVER_AUTH], sans: [{ type: 'dns', value: 'n1' }, { type: 'ip', value: '10.1.2.3' }] as x509.JsonGeneralNames, want: 'O=system:nodes\nCN=system:node:n1' },
    { name: 'both auths', subject: 'CN=jane', usages: ['signing', 'server auth', 'client auth'], eku: [SERVER_AUTH, CLIENT_AUTH], want: 'CN=jane' },
  ])('round trip: $name', async ({ subject, usages, eku, sans = [], want }) => {
    const csr = await makeCsr(subject, sans);
    const pem = await signCsr(pki, csr.pem, { usages, days: 7 });
    const cert = expectSignedByCa(pem);
    expect(cert.subject).toBe(want);
    expect(cert.keyUsage).toEqual(eku);
    expect(cert.ca).toBe(false);
    // the certificate carries the CSR's public key
    const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', csr.keys.publicKey));
    expect(cert.publicKey.export({ type: 'spki', format: 'der' }).equals(spki)).toBe(true);
    for (const s of sans) expect(s.type === 'ip' ? cert.checkIP(s.value) : cert.checkHost(s.value)).toBeDefined();
    expect(cert.subjectAltName).toBe(sans.length ? 'DNS:n1, IP Address:10.1.2.3' : undefined);
  });

  it('sets the requested key usage bits', async () => {
    const pem = await signCsr(pki, (await makeCsr('CN=x')).pem, { usages: ['digital signature', 'key encipherment', 'client auth'] });
    const ku = new x509.X509Certificate(pem).getExtension(x509.KeyUsagesExtension);
    expect(ku?.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
  });

  it.each([
    { name: 'not PEM', csr: async () => 'hello', want: /invalid certificate request/ },
    {
      name: 'tampered subject',
      csr: async () => {
        const pem = (await makeCsr('CN=alice')).pem;
        const der = Buffer.from(x509.PemConverter.decode(pem)[0]);
        const i = der.indexOf(Buffer.from('alice'));
        der.write('admin', i);
        return x509.PemConverter.encode(der, 'CERTIFICATE REQUEST');
      },
      want: 'invalid certificate request: signature does not verify',
    },
    { name: 'unknown usage', csr: async () => (await makeCsr('CN=x')).pem, usages: ['client auth', 'teleport'], want: 'unsupported key usage "teleport"' },
    { name: 'prototype name as usage', csr: async () => (await makeCsr('CN=x')).pem, usages: ['constructor'], want: 'unsupported key usage "constructor"' },
  ])('rejects: $name', async ({ csr, usages = ['client auth'], want }) => {
    await expect(signCsr(pki, await csr(), { usages })).rejects.toThrow(want);
  });
});
