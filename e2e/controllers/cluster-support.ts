import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RestClient } from '@orch/client';
import { freePort, startProcess, tcpProbe, type RunningProcess } from '@orch/testing';
import { startGateway, type GatewayProcess } from '../support/gateway';
import { CONTROLLER_MANAGER_MAIN, adminConfig } from './support/cluster';

export { eventually } from './support/cluster';

/** A real gateway and a real controller-manager running the cluster controllers under test. */
export interface ClusterControllers {
  gateway: GatewayProcess;
  controllerManager: RunningProcess;
  /** Admin client of the gateway. */
  client: RestClient;
  /** The gateway's PKI directory (ca.crt, ca.key, sa.key, sa.pub). */
  pkiDir: string;
  stop(): Promise<void>;
}

/**
 * Starts the built gateway, then the built controller-manager with `--controllers=<controllers>`,
 * no leader election, the gateway's service-account key and CA as signing material, and
 * `extraArgs`. Needs `node scripts/build.mjs` first.
 */
export async function startClusterControllers(controllers: string[], extraArgs: string[] = []): Promise<ClusterControllers> {
  if (!existsSync(CONTROLLER_MANAGER_MAIN)) throw new Error(`${CONTROLLER_MANAGER_MAIN} is missing: run "node scripts/build.mjs" first`);
  const gateway = await startGateway();
  const pkiDir = join(gateway.dataDir, 'pki');
  let controllerManager: RunningProcess;
  try {
    const port = await freePort();
    controllerManager = await startProcess({
      cmd: process.execPath,
      args: [
        CONTROLLER_MANAGER_MAIN,
        `--kubeconfig=${gateway.kubeconfig}`,
        `--controllers=${controllers.join(',')}`,
        '--leader-elect=false',
        `--secure-port=${port}`,
        '--concurrent-syncs=2',
        `--service-account-private-key-file=${join(pkiDir, 'sa.key')}`,
        `--cluster-signing-cert-file=${join(pkiDir, 'ca.crt')}`,
        `--cluster-signing-key-file=${join(pkiDir, 'ca.key')}`,
        ...extraArgs,
      ],
      env: { ORCH_LOG_LEVEL: process.env['ORCH_LOG_LEVEL'] ?? 'info' },
      readyProbe: tcpProbe(port),
      timeoutMs: 20_000,
    });
  } catch (err) {
    await gateway.stop();
    throw err;
  }
  const client = new RestClient(await adminConfig(gateway), { component: 'e2e' });
  return {
    gateway,
    controllerManager,
    client,
    pkiDir,
    async stop() {
      client.close();
      await controllerManager.stop();
      await gateway.stop();
    },
  };
}
