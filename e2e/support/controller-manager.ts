import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startProcess, tcpProbe, type RunningProcess } from '@orch/testing';

export const CONTROLLER_MANAGER_MAIN = join(__dirname, '..', '..', 'dist', 'apps', 'controller-manager', 'src', 'main.js');

/**
 * Starts the built controller-manager as a child process with `--controllers=<controllers>`,
 * no leader election, two workers per controller and `args`; resolves once its health port
 * listens (within `timeoutMs`, else it is killed). Needs `node scripts/build.mjs` first.
 */
export async function startControllerManager(kubeconfig: string, controllers: string[], args: string[] = [], timeoutMs = 20_000): Promise<RunningProcess> {
  if (!existsSync(CONTROLLER_MANAGER_MAIN)) throw new Error(`${CONTROLLER_MANAGER_MAIN} is missing: run "node scripts/build.mjs" first`);
  const port = await freePort();
  return startProcess({
    cmd: process.execPath,
    args: [CONTROLLER_MANAGER_MAIN, `--kubeconfig=${kubeconfig}`, `--controllers=${controllers.join(',')}`, '--leader-elect=false', `--secure-port=${port}`, '--concurrent-syncs=2', ...args],
    env: { ORCH_LOG_LEVEL: process.env['ORCH_LOG_LEVEL'] ?? 'info' },
    readyProbe: tcpProbe(port),
    timeoutMs,
  });
}
