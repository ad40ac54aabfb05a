import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, removeDir, startProcess, tempDir, type RunningProcess } from '@orch/testing';
import { ApiClient } from './api-client';

const ROOT = join(__dirname, '..', '..');
export const GATEWAY_MAIN = join(ROOT, 'dist', 'apps', 'gateway', 'src', 'main.js');

export interface GatewayProcess {
  url: string;
  port: number;
  dataDir: string;
  kubeconfig: string;
  process: RunningProcess;
  /** An HTTPS client authenticated as admin (system:masters). */
  admin: ApiClient;
  /** The admin's PEM credentials and the cluster CA (for other clients). */
  creds: { ca: string; cert: string; key: string };
  /** An HTTPS client with no credentials (anonymous). */
  anonymous: ApiClient;
  stop(): Promise<void>;
  /** kill -9, keeping the data directory for a restart. */
  kill9(): Promise<void>;
  /** Starts a new gateway process on the same data directory and port. */
  restart(): Promise<GatewayProcess>;
}

export interface StartGatewayOptions {
  args?: string[];
  dataDir?: string;
  port?: number;
  env?: Record<string, string>;
  /**
   * A command line the gateway's own is appended to, e.g. `nsenter -t PID -m --` to run it in
   * another mount namespace. The process keeps its pid when the launcher execs it.
   */
  launcher?: string[];
}

/** Runs the built gateway as a real child process on a free loopback port and waits for /readyz. */
export async function startGateway(opts: StartGatewayOptions = {}): Promise<GatewayProcess> {
  if (!existsSync(GATEWAY_MAIN)) throw new Error(`${GATEWAY_MAIN} is missing: run "node scripts/build.mjs" first`);
  const dataDir = opts.dataDir ?? (await tempDir('orch-gw-'));
  const port = opts.port ?? (await freePort());
  const url = `https://127.0.0.1:${port}`;
  const anonymous = new ApiClient(url, {});
  const command = [...(opts.launcher ?? []), process.execPath, GATEWAY_MAIN, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, ...(opts.args ?? [])];
  const proc = await startProcess({
    cmd: command[0],
    args: command.slice(1),
    env: { ...process.env, ...(opts.env ?? {}) } as Record<string, string>,
    readyProbe: async () => {
      try {
        const r = await anonymous.request('GET', '/readyz', undefined, { insecure: true });
        return r.status === 200;
      } catch {
        return false;
      }
    },
    timeoutMs: 30_000,
  });
  const pkiArg = (opts.args ?? []).find((a) => a.startsWith('--pki-dir='));
  const pki = pkiArg ? pkiArg.slice('--pki-dir='.length) : join(dataDir, 'pki');
  const creds = {
    ca: await readFile(join(pki, 'ca.crt'), 'utf8'),
    cert: await readFile(join(pki, 'admin.crt'), 'utf8'),
    key: await readFile(join(pki, 'admin.key'), 'utf8'),
  };
  const admin = new ApiClient(url, creds);
  const anon = new ApiClient(url, { ca: creds.ca });
  const gw: GatewayProcess = {
    url,
    port,
    dataDir,
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
    process: proc,
    admin,
    creds,
    anonymous: anon,
    async stop() {
      admin.close();
      anon.close();
      await proc.stop();
      if (!opts.dataDir) await removeDir(dataDir);
    },
    async kill9() {
      admin.close();
      anon.close();
      await proc.kill9();
    },
    restart: () => startGateway({ ...opts, dataDir, port }),
  };
  return gw;
}
