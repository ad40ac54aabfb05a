import { existsSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { freePort, startProcess, type RunningProcess } from '@orch/testing';

const ROOT = join(__dirname, '..', '..');
export const DASHBOARD_MAIN = join(ROOT, 'dist', 'apps', 'dashboard', 'src', 'main.js');

export interface DashboardProcess {
  url: string;
  process: RunningProcess;
  stop(): Promise<void>;
}

/**
 * Runs the built dashboard as a child process on a free loopback port, in front of the gateway
 * at `gatewayUrl`, serving its own certificate from `pkiDir` (`dashboard.crt`, issued by the
 * cluster CA when the gateway runs with --write-component-kubeconfigs).
 */
export async function startDashboard(gatewayUrl: string, pkiDir: string, args: string[] = []): Promise<DashboardProcess> {
  if (!existsSync(DASHBOARD_MAIN)) throw new Error(`${DASHBOARD_MAIN} is missing: run "node scripts/build.mjs" first`);
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const proc = await startProcess({
    cmd: process.execPath,
    args: [DASHBOARD_MAIN, `--secure-port=${port}`, `--server=${gatewayUrl}`, `--certificate-authority=${join(pkiDir, 'ca.crt')}`, `--tls-cert-file=${join(pkiDir, 'dashboard.crt')}`, `--tls-private-key-file=${join(pkiDir, 'dashboard.key')}`, ...args],
    readyProbe: () =>
      new Promise((resolve) => {
        https
          .get(`${url}/auth/session`, { rejectUnauthorized: false }, (r) => {
            r.resume();
            resolve(r.statusCode === 401);
          })
          .on('error', () => resolve(false));
      }),
    timeoutMs: 30_000,
  });
  return { url, process: proc, stop: async () => void (await proc.stop()) };
}
