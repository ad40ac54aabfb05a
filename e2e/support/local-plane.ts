import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, reapSandboxHolders, removeDir, tempDir } from '@orch/testing';
import { ApiClient } from './api-client';

const ROOT = join(__dirname, '..', '..');

/** `npm start` running in its own process group (Ctrl-C = SIGINT to the group). */
export interface LocalPlane {
  /** `https://127.0.0.1:<ORCH_PORT>`. */
  url: string;
  dataDir: string;
  kubeconfig: string;
  /** The port of every component (the environment given to `npm start`). */
  env: Record<string, string>;
  admin: ApiClient;
  /** Everything `npm start` printed so far. */
  output(): string;
  /** Ctrl-C: SIGINT to the process group, SIGKILL after 30 s; removes the data dir. */
  stop(): Promise<void>;
}

/**
 * Runs `npm start` exactly as the README says, with its own ORCH_DATA_DIR and a free port for
 * every component (never the well-known ones, so it runs beside a developer's plane), and
 * waits for "control plane up".
 */
export async function startLocalPlane(timeoutMs = 120_000, extraEnv: Record<string, string> = {}): Promise<LocalPlane> {
  const dir = await tempDir('orch-plane-');
  const dataDir = join(dir, 'state');
  const env: Record<string, string> = { ...extraEnv, ORCH_DATA_DIR: dataDir };
  for (const name of ['ORCH_PORT', 'ORCH_CONTROLLER_MANAGER_PORT', 'ORCH_SCHEDULER_PORT', 'ORCH_NODE_AGENT_PORT', 'ORCH_NODE_AGENT_HEALTHZ_PORT', 'ORCH_PROXY_HEALTHZ_PORT', 'ORCH_PROXY_METRICS_PORT', 'ORCH_METRICS_SERVER_PORT', 'ORCH_DASHBOARD_PORT']) {
    env[name] = String(await freePort());
  }
  let output = '';
  const child: ChildProcess = spawn('npm', ['start'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    // npm may exit before the node agent has released its pods' namespace holders.
    await reapSandboxHolders(dir);
    await removeDir(dir);
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('control plane up')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not bring the control plane up:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const url = `https://127.0.0.1:${env.ORCH_PORT}`;
  const pki = join(dataDir, 'pki');
  const admin = new ApiClient(url, { ca: await readFile(join(pki, 'ca.crt'), 'utf8'), cert: await readFile(join(pki, 'admin.crt'), 'utf8'), key: await readFile(join(pki, 'admin.key'), 'utf8') });
  return {
    url,
    dataDir,
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
    env,
    admin,
    output: () => output,
    async stop() {
      admin.close();
      await stop();
    },
  };
}
