import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startProcess, tcpProbe, type RunningProcess } from '@orch/testing';

export const SCHEDULER_MAIN = join(__dirname, '..', '..', 'dist', 'apps', 'scheduler', 'src', 'main.js');

/**
 * Starts the built scheduler as a child process with `args` (leader election is on unless
 * `--leader-elect=false` is given); resolves once its health port listens (within `timeoutMs`,
 * else it is killed). Needs `node scripts/build.mjs` first.
 */
export async function startScheduler(kubeconfig: string, args: string[] = [], timeoutMs = 20_000): Promise<RunningProcess> {
  if (!existsSync(SCHEDULER_MAIN)) throw new Error(`${SCHEDULER_MAIN} is missing: run "node scripts/build.mjs" first`);
  const port = await freePort();
  return startProcess({
    cmd: process.execPath,
    args: [SCHEDULER_MAIN, `--kubeconfig=${kubeconfig}`, `--secure-port=${port}`, ...args],
    env: { ORCH_LOG_LEVEL: process.env['ORCH_LOG_LEVEL'] ?? 'info' },
    readyProbe: tcpProbe(port),
    timeoutMs,
  });
}
