import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeconfigCredentials, loadKubeconfig, writeKubeconfig } from './kubeconfig';

const CA = '-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-kubeconfig-'));
  await mkdir(join(dir, 'pki'));
  await writeFile(join(dir, 'pki', 'ca.crt'), CA);
  await writeFile(join(dir, 'pki', 'admin.crt'), CERT);
  await writeFile(join(dir, 'pki', 'admin.key'), KEY);
  await writeFile(join(dir, 'token'), 'file-token\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('writeKubeconfig + loadKubeconfig', () => {
  it.each([
    {
      name: 'client certificate',
      opts: { server: 'https://127.0.0.1:6443', caPem: CA, clientCertPem: CERT, clientKeyPem: KEY, user: 'admin', context: 'admin@orch' },
      want: { server: 'https://127.0.0.1:6443', caPem: CA, certPem: CERT, keyPem: KEY },
    },
    {
      name: 'token and namespace',
      opts: { server: 'https://orch:6443', caPem: CA, token: 'abc.def', user: 'sa', context: 'sa@orch', cluster: 'prod', namespace: 'kube-system' },
      want: { server: 'https://orch:6443', caPem: CA, token: 'abc.def', namespace: 'kube-system' },
    },
  ])('round trip: $name', async ({ name, opts, want }) => {
    const path = join(dir, 'out', `${name.replace(/ /g, '-')}.conf`);
    await writeKubeconfig(path, opts);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await loadKubeconfig(path)).toEqual(want);
  });

  // kubectl is part of the machine (README); a missing one fails here rather than skipping.
  it('kubectl reads what we write', async () => {
    const path = join(dir, 'kubectl.conf');
    await writeKubeconfig(path, { server: 'https://127.0.0.1:6443', caPem: CA, clientCertPem: CERT, clientKeyPem: KEY, user: 'admin', context: 'admin@orch' });
    const r = spawnSync('kubectl', ['--kubeconfig', path, 'config', 'view', '--raw', '--minify', '-o', 'json'], { encoding: 'utf8' });
    expect(r.error?.message).toBeUndefined();
    expect(r.status).toBe(0);
    const cfg = JSON.parse(r.stdout);
    expect(cfg['current-context']).toBe('admin@orch');
    expect(cfg.clusters[0].cluster).toEqual({ server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64(CA) });
    expect(cfg.users[0].user).toEqual({ 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) });
  });
});

describe('loadKubeconfig', () => {
  /** Built lazily: `dir` exists only once beforeAll ran. */
  const base = () => ({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'a',
    contexts: [
      { name: 'a', context: { cluster: 'c', user: 'u' } },
      { name: 'other', context: { cluster: 'c2', user: 'u2', namespace: 'dev' } },
    ],
    clusters: [
      { name: 'c', cluster: { server: 'https://a:6443', 'certificate-authority': 'pki/ca.crt' } },
      { name: 'c2', cluster: { server: 'https://b:6443', 'insecure-skip-tls-verify': true, 'tls-server-name': 'orch' } },
    ],
    users: [
      { name: 'u', user: { 'client-certificate': 'pki/admin.crt', 'client-key': join(dir, 'pki/admin.key') } },
      { name: 'u2', user: { tokenFile: 'token' } },
    ],
  });

  it.each<{ name: string; doc: () => Record<string, unknown>; context?: string; want: KubeconfigCredentials }>([
    { name: 'file paths, relative and absolute', doc: base, want: { server: 'https://a:6443', caPem: CA, certPem: CERT, keyPem: KEY } },
    { name: 'context override, tokenFile, insecure, tls-server-name', doc: base, context: 'other', want: { server: 'https://b:6443', token: 'file-token', insecureSkipTlsVerify: true, tlsServerName: 'orch', namespace: 'dev' } },
    {
      name: 'inline data wins over files, token over tokenFile',
      doc: () => ({
        ...base(),
        clusters: [{ name: 'c', cluster: { server: 'https://a:6443', 'certificate-authority': 'missing', 'certificate-authority-data': b64('inline-ca') } }],
        users: [{ name: 'u', user: { 'client-certificate': 'missing', 'client-certificate-data': b64('inline-cert'), 'client-key-data': b64('inline-key'), token: 't', tokenFile: 'missing' } }],
      }),
      want: { server: 'https://a:6443', caPem: 'inline-ca', certPem: 'inline-cert', keyPem: 'inline-key', token: 't' },
    },
    { name: 'context without user', doc: () => ({ ...base(), contexts: [{ name: 'a', context: { cluster: 'c' } }] }), want: { server: 'https://a:6443', caPem: CA } },
  ])('$name', async ({ name, doc, context, want }) => {
    const path = join(dir, `${name.replace(/\W+/g, '-')}.conf`);
    await writeFile(path, stringify(doc()));
    expect(await loadKubeconfig(path, { context })).toEqual(want);
  });

  it.each([
    { name: 'empty file', doc: () => '', want: /is empty or not a mapping/ },
    { name: 'no current-context', doc: () => stringify({ ...base(), 'current-context': '' }), want: /has no current-context/ },
    { name: 'unknown context', doc: () => stringify({ ...base(), 'current-context': 'x' }), want: /context "x" not found in kubeconfig/ },
    { name: 'unknown cluster', doc: () => stringify({ ...base(), clusters: [] }), want: /cluster "c" not found in kubeconfig/ },
    { name: 'unknown user', doc: () => stringify({ ...base(), users: [] }), want: /user "u" not found in kubeconfig/ },
    { name: 'no server', doc: () => stringify({ ...base(), clusters: [{ name: 'c', cluster: {} }] }), want: /cluster "c" in kubeconfig .* has no server/ },
    { name: 'missing referenced file', doc: () => stringify({ ...base(), clusters: [{ name: 'c', cluster: { server: 'https://a', 'certificate-authority': 'nope.crt' } }] }), want: /ENOENT.*nope\.crt/ },
  ])('error: $name', async ({ name, doc, want }) => {
    const path = join(dir, `err-${name.replace(/\W+/g, '-')}.conf`);
    await writeFile(path, doc());
    await expect(loadKubeconfig(path)).rejects.toThrow(want);
  });
});
