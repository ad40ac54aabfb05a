import { createPrivateKey, createPublicKey, KeyObject, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as x509 from '@peculiar/x509';
import { MASTERS_GROUP } from './user';
import { readOptional, withLock, writeAtomic } from './fsutil';

x509.cryptoProvider.set(webcrypto);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type SigningAlgorithm = webcrypto.RsaHashedImportParams | webcrypto.EcdsaParams;

/** A certificate and its private key, both PEM (key: PKCS#8). */
export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

/** Absolute paths of the PKI files. */
export interface PkiFiles {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

/** The cluster PKI: CA, gateway serving cert, admin client cert and service-account key pair. */
export interface Pki {
  dir: string;
  files: PkiFiles;
  ca: CertAndKey;
  serving: CertAndKey;
  admin: CertAndKey;
  /** ECDSA P-256 key pair signing service-account tokens (JWS `ES256`); PEM PKCS#8 / SPKI. */
  serviceAccount: { privateKeyPem: string; publicKeyPem: string };
}

export const CA_COMMON_NAME = 'orch-ca';
export const SERVING_COMMON_NAME = 'orch-apiserver';
/** SANs every serving certificate carries besides the `hosts` given to `ensurePki`. */
export const DEFAULT_SERVING_HOSTS = ['127.0.0.1', '::1', 'localhost', 'orch', 'orch.default', 'orch.default.svc', 'orch.default.svc.cluster.local'];

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
/** A leaf certificate expiring sooner than this is reissued by `ensurePki`. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
/** notBefore is backdated by this much to tolerate clock skew between machines. */
const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/**
 * Loads the PKI from `dir`, creating what is missing (idempotent; files survive restarts):
 * `ca.crt`/`ca.key` (self-signed `orch-ca`, 10 years, ECDSA P-256), `serving.crt`/`.key`
 * (serverAuth, SANs `DEFAULT_SERVING_HOSTS` + `hosts`), `admin.crt`/`.key` (CN=admin,
 * O=system:masters, clientAuth), `sa.key`/`sa.pub`. A serving or admin certificate that is
 * missing, not signed by the CA, not matching its key, expiring within 30 days or (serving)
 * lacking a requested SAN is reissued; otherwise the same bytes are returned. An existing CA is
 * never replaced: `ca.crt` without `ca.key`, or an expired CA, is an error. Keys are written
 * mode 0600, every file atomically, under a lock directory so concurrent starts agree.
 */
export async function ensurePki(pkiDir: string, opts: { hosts?: readonly string[] } = {}): Promise<Pki> {
  const dir = resolve(pkiDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files: PkiFiles = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'serving.crt'),
    servingKey: join(dir, 'serving.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
  };
  const hosts = [...new Set([...DEFAULT_SERVING_HOSTS, ...(opts.hosts ?? [])])];
  return withLock(join(dir, '.lock'), async () => {
    const ca = await loadOrCreateCa(files);
    const signer = await caSigner(ca);
    const serving = await loadOrIssue(files.servingCert, files.servingKey, signer, {
      ok: (cert) => hosts.every((h) => certHasSan(cert, h)),
      issue: () => issueLeaf(signer, { subject: [{ CN: [SERVING_COMMON_NAME] }], days: LEAF_DAYS, extKeyUsages: [x509.ExtendedKeyUsage.serverAuth], hosts }),
    });
    const admin = await loadOrIssue(files.adminCert, files.adminKey, signer, {
      ok: () => true,
      issue: () => issueLeaf(signer, { subject: subjectOf('admin', [MASTERS_GROUP]), days: LEAF_DAYS, extKeyUsages: [x509.ExtendedKeyUsage.clientAuth] }),
    });
    const serviceAccount = await loadOrCreateSaKeys(files);
    return { dir, files, ca, serving, admin, serviceAccount };
  });
}

/** Common name of the front-proxy client certificate extension API servers accept (`requestheader-allowed-names`). */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** The gateway's identity towards extension API servers (upstream --requestheader-client-ca-file / --proxy-client-cert-file). */
export interface FrontProxyPki {
  /** CA extension servers trust for the identity headers; separate from the cluster CA. */
  ca: CertAndKey;
  /** Client certificate (CN front-proxy-client) the gateway presents when it proxies. */
  client: CertAndKey;
}

/**
 * Loads the front-proxy PKI from `pkiDir`, creating what is missing (`front-proxy-ca.crt/.key`,
 * `front-proxy-client.crt/.key`), with the same renewal and locking rules as {@link ensurePki}.
 */
export async function ensureFrontProxyPki(pkiDir: string): Promise<FrontProxyPki> {
  const dir = resolve(pkiDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return withLock(join(dir, '.front-proxy.lock'), async () => {
    const ca = await loadOrCreateCa({ caCert: join(dir, 'front-proxy-ca.crt'), caKey: join(dir, 'front-proxy-ca.key') }, 'orch-front-proxy-ca');
    const signer = await caSigner(ca);
    const client = await loadOrIssue(join(dir, 'front-proxy-client.crt'), join(dir, 'front-proxy-client.key'), signer, {
      ok: () => true,
      issue: () => issueLeaf(signer, { subject: [{ CN: [FRONT_PROXY_CLIENT_NAME] }], days: LEAF_DAYS, extKeyUsages: [x509.ExtendedKeyUsage.clientAuth] }),
    });
    return { ca, client };
  });
}

/**
 * Issues a client certificate (clientAuth) signed by the cluster CA with a fresh ECDSA key:
 * CN = user name, one O per group, e.g. `{cn: 'system:node:n1', orgs: ['system:nodes']}`.
 * Nothing is written to disk. Validity is capped at the CA's.
 */
export async function issueClientCert(pki: Pki, opts: { cn: string; orgs?: readonly string[]; days?: number }): Promise<CertAndKey> {
  if (!opts.cn) throw new Error('client certificate needs a common name');
  const signer = await caSigner(pki.ca);
  return issueLeaf(signer, { subject: subjectOf(opts.cn, opts.orgs ?? []), days: opts.days ?? LEAF_DAYS, extKeyUsages: [x509.ExtendedKeyUsage.clientAuth] });
}

/**
 * Issues a serving certificate (serverAuth) signed by the cluster CA with a fresh ECDSA key for
 * `hosts` (IPs and DNS names), e.g. the dashboard's own. Nothing is written to disk.
 */
export async function issueServingCert(pki: Pki, opts: { cn: string; hosts: readonly string[]; days?: number }): Promise<CertAndKey> {
  if (!opts.cn || opts.hosts.length === 0) throw new Error('a serving certificate needs a common name and at least one host');
  const signer = await caSigner(pki.ca);
  return issueLeaf(signer, { subject: [{ CN: [opts.cn] }], days: opts.days ?? LEAF_DAYS, extKeyUsages: [x509.ExtendedKeyUsage.serverAuth], hosts: opts.hosts });
}

/**
 * An in-memory serving certificate for a component port that was given none (upstream's
 * self-signed fallback): a throwaway CA signs a serverAuth leaf for `hosts`. Nothing is written.
 */
export async function selfSignedServingCert(hosts: readonly string[], commonName: string): Promise<CertAndKey & { caPem: string }> {
  const ca = await createCa();
  const signer = await caSigner(ca);
  const leaf = await issueLeaf(signer, { subject: [{ CN: [commonName] }], days: 365, extKeyUsages: [x509.ExtendedKeyUsage.serverAuth], hosts });
  return { ...leaf, caPem: ca.certPem };
}

/** Key usages a CSR may ask for, as spelled in `CertificateSigningRequest.spec.usages`. */
const KEY_USAGES: Record<string, x509.KeyUsageFlags> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};
const EXT_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': x509.ExtendedKeyUsage.serverAuth,
  'client auth': x509.ExtendedKeyUsage.clientAuth,
  'code signing': x509.ExtendedKeyUsage.codeSigning,
  'email protection': x509.ExtendedKeyUsage.emailProtection,
  's/mime': x509.ExtendedKeyUsage.emailProtection,
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: x509.ExtendedKeyUsage.timeStamping,
  'ocsp signing': x509.ExtendedKeyUsage.ocspSigning,
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/**
 * Signs a PEM PKCS#10 request with the cluster CA: checks the request's own signature, copies
 * its subject and subject alternative names, and sets the given usages (upstream spellings:
 * `digital signature`, `key encipherment`, `client auth`, `server auth`, ...). Never issues a
 * CA certificate. Throws for a malformed or badly signed request or an unknown usage.
 * Returns the certificate PEM.
 */
export async function signCsr(pki: Pki, csrPem: string, opts: { usages: readonly string[]; days?: number }): Promise<string> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (e) {
    throw new Error(`invalid certificate request: ${(e as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error('invalid certificate request: signature does not verify');
  let keyUsage = 0;
  const ext: string[] = [];
  for (const u of opts.usages) {
    if (Object.hasOwn(KEY_USAGES, u)) keyUsage |= KEY_USAGES[u];
    else if (Object.hasOwn(EXT_KEY_USAGES, u)) ext.push(EXT_KEY_USAGES[u]);
    else throw new Error(`unsupported key usage "${u}"`);
  }
  const san = csr.extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension);
  const signer = await caSigner(pki.ca);
  const cert = await createCert(signer, {
    subject: csr.subjectName,
    publicKey: csr.publicKey,
    days: opts.days ?? LEAF_DAYS,
    keyUsage,
    extKeyUsages: ext,
    extra: san ? [new x509.SubjectAlternativeNameExtension(san.names.toJSON())] : [],
  });
  return toPem(cert);
}

/** Subject `O=<org>... CN=<cn>`, in the RDN order Go's crypto/x509 writes. */
function subjectOf(cn: string, orgs: readonly string[]): x509.JsonName {
  return [...orgs.map((o) => ({ O: [o] })), { CN: [cn] }];
}

interface CaSigner {
  cert: x509.X509Certificate;
  key: CryptoKey;
  algorithm: SigningAlgorithm;
}

async function caSigner(ca: CertAndKey): Promise<CaSigner> {
  const { key, algorithm } = await importSigningKey(ca.keyPem);
  return { cert: new x509.X509Certificate(ca.certPem), key, algorithm };
}

/** Imports a PEM private key (PKCS#8, SEC1 or PKCS#1; ECDSA P-256/P-384 or RSA) for signing. */
async function importSigningKey(pem: string): Promise<{ key: CryptoKey; algorithm: SigningAlgorithm }> {
  const ko = createPrivateKey(pem);
  const der = ko.export({ type: 'pkcs8', format: 'der' });
  if (ko.asymmetricKeyType === 'ec') {
    const curve = { prime256v1: 'P-256', secp384r1: 'P-384' }[ko.asymmetricKeyDetails?.namedCurve ?? ''];
    if (!curve) throw new Error(`unsupported CA key curve ${ko.asymmetricKeyDetails?.namedCurve}`);
    const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
    return { key, algorithm: { name: 'ECDSA', hash: curve === 'P-384' ? 'SHA-384' : 'SHA-256' } };
  }
  if (ko.asymmetricKeyType === 'rsa') {
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await webcrypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']), algorithm };
  }
  throw new Error(`unsupported CA key type ${ko.asymmetricKeyType}`);
}

async function createCert(
  signer: CaSigner,
  p: { subject: x509.JsonName | x509.Name; publicKey: x509.PublicKey | CryptoKey; days: number; keyUsage: number; extKeyUsages: string[]; extra?: x509.Extension[] },
): Promise<x509.X509Certificate> {
  const now = Date.now();
  const notAfter = Math.min(now + p.days * DAY_MS, signer.cert.notAfter.getTime());
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    await x509.AuthorityKeyIdentifierExtension.create(signer.cert.publicKey),
    await x509.SubjectKeyIdentifierExtension.create(p.publicKey),
    ...(p.extra ?? []),
  ];
  if (p.keyUsage) extensions.push(new x509.KeyUsagesExtension(p.keyUsage, true));
  if (p.extKeyUsages.length) extensions.push(new x509.ExtendedKeyUsageExtension(p.extKeyUsages));
  return x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: p.subject,
    issuer: signer.cert.subjectName,
    publicKey: p.publicKey,
    signingKey: signer.key,
    signingAlgorithm: signer.algorithm,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    extensions,
  });
}

async function issueLeaf(signer: CaSigner, p: { subject: x509.JsonName; days: number; extKeyUsages: string[]; hosts?: readonly string[] }): Promise<CertAndKey> {
  const keys = await generateKeyPair();
  const extra = p.hosts ? [new x509.SubjectAlternativeNameExtension(p.hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h })))] : [];
  const cert = await createCert(signer, {
    subject: p.subject,
    publicKey: keys.publicKey,
    days: p.days,
    keyUsage: x509.KeyUsageFlags.digitalSignature,
    extKeyUsages: p.extKeyUsages,
    extra,
  });
  return { certPem: toPem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

async function createCa(commonName = CA_COMMON_NAME): Promise<CertAndKey> {
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [commonName] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + CA_DAYS * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: toPem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

const CA_ADVICE = 'restore it from a backup, or remove the PKI directory to create a new cluster CA (every credential the old one issued stops working)';

/**
 * Parses a PKI file read from disk; a file that does not parse (cut short by a crash while it
 * was written by an older version, or damaged) fails start-up with a message naming the file
 * and what to do, instead of a bare decoder error.
 */
function parsePkiFile<T>(path: string, parse: () => T, advice: string): T {
  try {
    return parse();
  } catch (err) {
    throw new Error(`${path} cannot be read as PEM (${(err as Error).message}): the file is incomplete or damaged; ${advice}`);
  }
}

async function loadOrCreateCa(files: Pick<PkiFiles, 'caCert' | 'caKey'>, commonName = CA_COMMON_NAME): Promise<CertAndKey> {
  const [certPem, keyPem] = await Promise.all([readOptional(files.caCert), readOptional(files.caKey)]);
  if (certPem === undefined) {
    const ca = await createCa(commonName);
    await writeAtomic(files.caKey, ca.keyPem, 0o600);
    await writeAtomic(files.caCert, ca.certPem, 0o644);
    return ca;
  }
  if (keyPem === undefined) throw new Error(`${files.caCert} exists but ${files.caKey} does not: cannot sign certificates`);
  const cert = parsePkiFile(files.caCert, () => new X509Certificate(certPem), CA_ADVICE);
  const key = parsePkiFile(files.caKey, () => createPrivateKey(keyPem), CA_ADVICE);
  if (!cert.checkPrivateKey(key)) throw new Error(`${files.caKey} does not match ${files.caCert}`);
  if (new Date(cert.validTo).getTime() <= Date.now()) throw new Error(`CA certificate ${files.caCert} expired on ${cert.validTo}; remove the PKI directory to create a new cluster CA`);
  return { certPem, keyPem };
}

async function loadOrIssue(certPath: string, keyPath: string, signer: CaSigner, how: { ok: (cert: x509.X509Certificate) => boolean; issue: () => Promise<CertAndKey> }): Promise<CertAndKey> {
  const [certPem, keyPem] = await Promise.all([readOptional(certPath), readOptional(keyPath)]);
  if (certPem !== undefined && keyPem !== undefined && stillGood(certPem, keyPem, signer, how.ok)) return { certPem, keyPem };
  const issued = await how.issue();
  await writeAtomic(keyPath, issued.keyPem, 0o600);
  await writeAtomic(certPath, issued.certPem, 0o644);
  return issued;
}

function stillGood(certPem: string, keyPem: string, signer: CaSigner, ok: (cert: x509.X509Certificate) => boolean): boolean {
  try {
    const node = new X509Certificate(certPem);
    const ca = new X509Certificate(Buffer.from(signer.cert.rawData));
    if (!node.checkIssued(ca) || !node.verify(ca.publicKey) || !node.checkPrivateKey(createPrivateKey(keyPem))) return false;
    if (new Date(node.validTo).getTime() - Date.now() < RENEW_BEFORE_MS) return false;
    return ok(new x509.X509Certificate(certPem));
  } catch {
    return false;
  }
}

async function loadOrCreateSaKeys(files: PkiFiles): Promise<Pki['serviceAccount']> {
  let keyPem = await readOptional(files.saKey);
  if (keyPem === undefined) {
    keyPem = await privateKeyPem((await generateKeyPair()).privateKey);
    await writeAtomic(files.saKey, keyPem, 0o600);
  }
  // sa.pub is derived from sa.key, never the other way: a new sa.key would revoke every token.
  const pem = keyPem;
  const publicKeyPem = spkiPem(
    parsePkiFile(files.saKey, () => createPublicKey(pem), 'restore it from a backup, or remove it to create a new key (every service-account token issued so far stops working)'),
  );
  if ((await readOptional(files.saPub)) !== publicKeyPem) await writeAtomic(files.saPub, publicKeyPem, 0o644);
  return { privateKeyPem: keyPem, publicKeyPem };
}

function spkiPem(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

function certHasSan(cert: x509.X509Certificate, host: string): boolean {
  const names = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  if (isIP(host)) return names.some((n) => n.type === 'ip' && canonicalIp(n.value) === canonicalIp(host));
  return names.some((n) => n.type === 'dns' && n.value.toLowerCase() === host.toLowerCase());
}

/** One spelling per address (`0:0:0:0:0:0:0:1` and `::1` are equal). */
function canonicalIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]`).hostname : ip;
}

function generateKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `${x509.PemConverter.encode(der, 'PRIVATE KEY')}\n`;
}

/** PEM ending in a newline, so bundles can be concatenated. */
function toPem(cert: x509.X509Certificate): string {
  return `${cert.toString('pem')}\n`;
}

/** A random positive 128-bit serial number, hex. */
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] & 0x7f) | 0x01;
  return b.toString('hex');
}
