import { join } from 'node:path';
import type { RestClient } from '@orch/client';
import type { RunningProcess } from '@orch/testing';
import type { GatewayProcess } from '../support/gateway';
import { startControllerCluster } from './support/cluster';

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
  const signing = (gateway: GatewayProcess) => {
    const pki = join(gateway.dataDir, 'pki');
    return [`--service-account-private-key-file=${join(pki, 'sa.key')}`, `--cluster-signing-cert-file=${join(pki, 'ca.crt')}`, `--cluster-signing-key-file=${join(pki, 'ca.key')}`, ...extraArgs];
  };
  const cluster = await startControllerCluster(controllers, signing);
  return { ...cluster, pkiDir: join(cluster.gateway.dataDir, 'pki') };
}
