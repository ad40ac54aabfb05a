import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RestClient, type ClientConfig } from '@orch/client';
import type { RunningProcess } from '@orch/testing';
import { startControllerManager } from '../../support/controller-manager';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from '../../support/gateway';

export { CONTROLLER_MANAGER_MAIN } from '../../support/controller-manager';

/** A real gateway and a real controller-manager running the given controllers. */
export interface ControllerCluster {
  gateway: GatewayProcess;
  controllerManager: RunningProcess;
  /** Admin client of the gateway. */
  client: RestClient;
  stop(): Promise<void>;
}

/** Admin credentials of a started gateway as a client configuration. */
export async function adminConfig(gw: GatewayProcess): Promise<ClientConfig> {
  const pki = join(gw.dataDir, 'pki');
  return {
    server: gw.url,
    caPem: await readFile(join(pki, 'ca.crt'), 'utf8'),
    certPem: await readFile(join(pki, 'admin.crt'), 'utf8'),
    keyPem: await readFile(join(pki, 'admin.key'), 'utf8'),
  };
}

/**
 * Starts the built gateway and controller-manager (`--controllers=<controllers>` and, as in every
 * real cluster, the serviceaccount controller, which the ServiceAccount admission of pods needs;
 * no leader election, plus `extraArgs(gateway)`) as child processes; resolves once `default` has
 * its account. Needs `node scripts/build.mjs` first.
 */
export async function startControllerCluster(controllers: string[], extraArgs: (gateway: GatewayProcess) => string[] = () => []): Promise<ControllerCluster> {
  const gateway = await startGateway();
  const stopAll = async (err: unknown, controllerManager?: RunningProcess): Promise<never> => {
    await controllerManager?.stop();
    await gateway.stop();
    throw err;
  };
  const controllerManager = await startControllerManager(gateway.kubeconfig, [...new Set([...controllers, ...POD_CONTROLLERS])], extraArgs(gateway)).catch((err) => stopAll(err));
  await defaultServiceAccount(gateway.admin, 'default').catch((err) => stopAll(err, controllerManager));
  const client = new RestClient(await adminConfig(gateway), { component: 'e2e' });
  return {
    gateway,
    controllerManager,
    client,
    async stop() {
      client.close();
      await controllerManager.stop();
      await gateway.stop();
    },
  };
}

export { eventually } from '@orch/testing';

/**
 * Resolves true when the object's resourceVersion stays the same for `quietMs`: the
 * controllers writing it have settled (no write loop).
 */
export async function staysUnchanged(get: () => Promise<{ metadata: { resourceVersion?: string } }>, quietMs = 1000): Promise<boolean> {
  const before = (await get()).metadata.resourceVersion;
  await new Promise((r) => setTimeout(r, quietMs));
  return (await get()).metadata.resourceVersion === before;
}
