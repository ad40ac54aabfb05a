import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How to reach and authenticate to the gateway. Loaded from a kubeconfig (by `@orch/auth`)
 * or from the pod environment by {@link inClusterConfig}.
 */
export interface ClientConfig {
  /** `https://host:port` (optionally with a path prefix); `http://` for plain loopback peers. */
  server: string;
  /** PEM CA bundle that signed the gateway's serving certificate. */
  caPem?: string;
  /** PEM client certificate and key (x509 authentication). */
  certPem?: string;
  keyPem?: string;
  /** Bearer token. */
  token?: string;
  /**
   * File holding a bearer token; re-read at most once a minute so rotated
   * (projected, expiring) tokens are picked up. Used when `token` is unset.
   */
  tokenFile?: string;
  /** A token kept fresh by its owner (a TokenRequest-backed source); used when `token` is unset, before `tokenFile`. */
  tokenSource?: TokenSource;
  /** Name to verify in the serving certificate instead of the server's host. */
  tlsServerName?: string;
  insecureSkipTlsVerify?: boolean;
  /** Default namespace (in-cluster: the pod's namespace). */
  namespace?: string;
}

/**
 * A bearer token someone else keeps current (upstream's ResettableTokenSource): read on every
 * request; told when the server answered 401 so it fetches a new token instead of waiting for
 * its refresh time.
 */
export interface TokenSource {
  token(): string;
  rejected?(): void;
}

/** Where a pod's service-account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/orch.io/serviceaccount';

export class NotInClusterError extends Error {
  constructor() {
    super('unable to load in-cluster configuration: ORCH_SERVICE_HOST and ORCH_SERVICE_PORT must be defined');
    this.name = 'NotInClusterError';
  }
}

/**
 * Config for a process running in a pod: the gateway address from `ORCH_SERVICE_HOST` /
 * `ORCH_SERVICE_PORT`, and `token` (read through `tokenFile`, so rotation is followed),
 * `ca.crt` and `namespace` from the service-account directory. Throws
 * {@link NotInClusterError} when the variables are missing, and the fs error when the token
 * or CA cannot be read.
 */
export function inClusterConfig(opts: { dir?: string; env?: NodeJS.ProcessEnv } = {}): ClientConfig {
  const dir = opts.dir ?? SERVICE_ACCOUNT_DIR;
  const env = opts.env ?? process.env;
  const host = env['ORCH_SERVICE_HOST'];
  const port = env['ORCH_SERVICE_PORT'];
  if (!host || !port) throw new NotInClusterError();
  const tokenFile = join(dir, 'token');
  readFileSync(tokenFile, 'utf8'); // fail now, not on the first request
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    tokenFile,
    namespace,
  };
}
