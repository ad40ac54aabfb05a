import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { writeAtomic } from './fsutil';

export interface WriteKubeconfigOptions {
  /** Gateway URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  caPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  /** Bearer token, for service-account or bootstrap kubeconfigs. */
  token?: string;
  /** User entry name, e.g. `admin`. */
  user: string;
  /** Context name, which becomes current-context, e.g. `admin@orch`. */
  context: string;
  /** Cluster entry name; default `orch`. */
  cluster?: string;
  namespace?: string;
}

/** Connection settings of a kubeconfig's (current) context. */
export interface KubeconfigCredentials {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  namespace?: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/**
 * Writes a standard single-cluster kubeconfig (credentials inline as `*-data`) with
 * current-context set, mode 0600, atomically; creates the parent directory.
 */
export async function writeKubeconfig(path: string, o: WriteKubeconfigOptions): Promise<void> {
  const cluster = o.cluster ?? 'orch';
  const user: Record<string, string> = {};
  if (o.clientCertPem) user['client-certificate-data'] = b64(o.clientCertPem);
  if (o.clientKeyPem) user['client-key-data'] = b64(o.clientKeyPem);
  if (o.token) user.token = o.token;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [{ name: o.user, user }],
    contexts: [{ name: o.context, context: { cluster, user: o.user, ...(o.namespace ? { namespace: o.namespace } : {}) } }],
    'current-context': o.context,
    preferences: {},
  };
  await mkdir(dirname(resolve(path)), { recursive: true });
  await writeAtomic(path, stringify(config), 0o600);
}

interface RawCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
}
interface RawUser {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
}
interface RawContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

/**
 * Reads the credentials of `opts.context` (default: current-context) from a kubeconfig.
 * Inline `*-data` wins over the file form (`certificate-authority`, `client-certificate`,
 * `client-key`, paths relative to the kubeconfig's directory); `token` wins over `tokenFile`.
 * Throws a clear error for a missing context, cluster or user, or an unreadable file.
 */
export async function loadKubeconfig(path: string, opts: { context?: string } = {}): Promise<KubeconfigCredentials> {
  const doc = parse(await readFile(path, 'utf8')) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object') throw new Error(`kubeconfig ${path} is empty or not a mapping`);
  const contextName = opts.context ?? (doc['current-context'] as string | undefined);
  if (!contextName) throw new Error(`kubeconfig ${path} has no current-context`);
  const context = entry<RawContext>(doc, 'contexts', 'context', contextName, path);
  if (!context.cluster) throw new Error(`context "${contextName}" in kubeconfig ${path} names no cluster`);
  const cluster = entry<RawCluster>(doc, 'clusters', 'cluster', context.cluster, path);
  const user = context.user ? entry<RawUser>(doc, 'users', 'user', context.user, path) : {};
  if (!cluster.server) throw new Error(`cluster "${context.cluster}" in kubeconfig ${path} has no server`);

  const base = dirname(resolve(path));
  const data = async (inline: string | undefined, file: string | undefined): Promise<string | undefined> => {
    if (inline) return Buffer.from(inline, 'base64').toString('utf8');
    if (file) return readFile(resolve(base, file), 'utf8');
    return undefined;
  };
  const out: KubeconfigCredentials = { server: cluster.server };
  const set = <K extends keyof KubeconfigCredentials>(k: K, v: KubeconfigCredentials[K] | undefined) => {
    if (v !== undefined && v !== '') out[k] = v;
  };
  set('caPem', await data(cluster['certificate-authority-data'], cluster['certificate-authority']));
  set('certPem', await data(user['client-certificate-data'], user['client-certificate']));
  set('keyPem', await data(user['client-key-data'], user['client-key']));
  set('token', user.token || (user.tokenFile ? (await readFile(resolve(base, user.tokenFile), 'utf8')).trim() : undefined));
  if (cluster['insecure-skip-tls-verify'] === true) out.insecureSkipTlsVerify = true;
  set('tlsServerName', cluster['tls-server-name']);
  set('namespace', context.namespace);
  return out;
}

/** The body of the entry named `name` in list `list` (`{name, <kind>: body}`). */
function entry<T>(doc: Record<string, unknown>, list: string, kind: string, name: string, path: string): T {
  const items: unknown[] = Array.isArray(doc[list]) ? doc[list] : [];
  const found = items.find((i): i is Record<string, unknown> => typeof i === 'object' && i !== null && (i as { name?: unknown }).name === name);
  if (!found) throw new Error(`${kind} "${name}" not found in kubeconfig ${path}`);
  return (found[kind] ?? {}) as T;
}
