import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, freePort, removeDir, startProcess, tempDir, type RunningProcess } from '@orch/testing';
import { ApiClient } from './api-client';
import { startControllerManager } from './controller-manager';

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
  /** The controller-manager running `options.controllers`, if any. */
  controllerManager?: RunningProcess;
  /** Stops the controller-manager (if any), then the gateway. */
  stop(): Promise<void>;
  /** kill -9 of the gateway, keeping the data directory for a restart (a controller-manager keeps running, as beside a real crashed server). */
  kill9(): Promise<void>;
  /** Starts a new gateway process on the same data directory and port; a running controller-manager stays with it. */
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
  /**
   * Controllers run beside the gateway by a controller-manager (started once the gateway is
   * ready, as the admin, stopped by `stop()`), as in a real cluster. Suites that create pods
   * pass `POD_CONTROLLERS`: the ServiceAccount admission plugin refuses a pod whose namespace
   * has no `default` account, and the serviceaccount controller makes one in every namespace
   * (startGateway then waits for `default/default`).
   */
  controllers?: string[];
}

/** What a cluster needs for pods to be admitted: `default` service accounts. */
export const POD_CONTROLLERS = ['serviceaccount'];

/** Waits until the namespace's `default` service account exists (the serviceaccount controller made it). */
export async function defaultServiceAccount(admin: ApiClient, namespace: string, timeoutMs = 30_000): Promise<void> {
  await eventually(`the default service account of ${namespace}`, async () => ((await admin.get(`/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status === 200 ? true : undefined), timeoutMs);
}

/**
 * Runs the built gateway as a real child process on a free loopback port and waits for /readyz;
 * with `controllers`, then starts them (see StartGatewayOptions).
 */
export async function startGateway(opts: StartGatewayOptions = {}): Promise<GatewayProcess> {
  return launchGateway(opts);
}

async function launchGateway(opts: StartGatewayOptions, running?: RunningProcess): Promise<GatewayProcess> {
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
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  let controllerManager = running;
  if (!controllerManager && opts.controllers?.length) {
    try {
      controllerManager = await startControllerManager(kubeconfig, opts.controllers);
      if (opts.controllers.includes('serviceaccount')) await defaultServiceAccount(admin, 'default');
    } catch (err) {
      await controllerManager?.stop();
      await proc.stop();
      throw err;
    }
  }
  const gw: GatewayProcess = {
    url,
    port,
    dataDir,
    kubeconfig,
    process: proc,
    admin,
    creds,
    anonymous: anon,
    controllerManager,
    async stop() {
      admin.close();
      anon.close();
      await controllerManager?.stop();
      await proc.stop();
      if (!opts.dataDir) await removeDir(dataDir);
    },
    async kill9() {
      admin.close();
      anon.close();
      await proc.kill9();
    },
    restart: () => launchGateway({ ...opts, dataDir, port }, controllerManager),
  };
  return gw;
}
