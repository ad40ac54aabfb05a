import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RestClient, SharedInformer, isNotFound, type ClientConfig } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import { memoryLogger, removeDir, tempDir, waitFor } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/**
 * A gateway stopped with SIGTERM and started again on the same data directory: the watches of
 * a libs/client informer and of a node agent come back as soon as it listens, whatever their
 * backoff has grown to while it was down, and the first write after the restart reaches them.
 */
jest.setTimeout(120_000);

const NODE = 'restart-node';
const PODS = { group: '', version: 'v1', resource: 'pods' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

interface Pod extends KubeObject {
  spec: Record<string, unknown>;
  status?: { phase?: string; containerStatuses?: { containerID?: string }[] };
}

describe('watches across a gateway restart (SIGTERM, same data directory)', () => {
  let dataDir: string;
  let gw: GatewayProcess;
  let agent: NodeAgentProcess;
  let client: RestClient;

  beforeAll(async () => {
    dataDir = await tempDir('gw-restart-');
    gw = await startGateway({ dataDir, controllers: POD_CONTROLLERS });
    const pki = join(dataDir, 'pki');
    const config: ClientConfig = { server: gw.url, caPem: await readFile(join(pki, 'ca.crt'), 'utf8'), certPem: await readFile(join(pki, 'admin.crt'), 'utf8'), keyPem: await readFile(join(pki, 'admin.key'), 'utf8') };
    client = new RestClient(config, { component: 'e2e' });
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, args: [`--client-ca-file=${join(pki, 'ca.crt')}`] });
  });
  afterAll(async () => {
    client?.close();
    await agent?.stop();
    await gw?.stop();
    await removeDir(dataDir);
  });

  it('an informer whose backoff is ten minutes and the node agent see the first writes after the restart', async () => {
    const log = memoryLogger();
    const configMaps = client.resource<KubeObject>(CONFIGMAPS, 'default');
    // A backoff this long stands for a client that failed for a while: only the server's return may end its wait.
    const informer = new SharedInformer<KubeObject>(configMaps, { logger: log, name: 'configmaps', backoff: { initialMs: 600_000, maxMs: 600_000 } });
    const seen = new Set<string>();
    informer.addEventHandler({ onAdd: (o) => seen.add(o.metadata.name!) });
    informer.run();
    try {
      await informer.waitForSync();
      await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } });
      await waitFor(() => seen.has('before'), 'the informer sees a write before the restart', 20_000);

      const pods = client.resource<Pod>(PODS, 'default');
      await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sleeper' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'none', command: ['sleep', '600'] }] } });
      const running = await eventually('the pod runs', async () => ((p) => (p.status?.phase === 'Running' ? p : undefined))(await pods.get('sleeper')), 30_000);
      const pid = Number(running.status?.containerStatuses?.[0]?.containerID?.replace('process://', ''));

      await gw.process.stop('SIGTERM');
      gw.admin.close();
      gw.anonymous.close();
      await waitFor(() => log.lines.some((l) => l.includes('the server does not accept connections; waiting for it')), 'the informer waits for the gateway', 20_000);
      gw = await gw.restart();

      await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } });
      await waitFor(() => seen.has('after'), 'the informer sees the first write after the restart', 60_000);
      // The node agent's pod informer: a graceful delete is carried out (container stopped, pod removed).
      await pods.delete('sleeper');
      await eventually('the node agent stops the deleted pod', async () => (await pods.get('sleeper').then(() => false, (err) => isNotFound(err))) || undefined, 60_000);
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      await informer.stop();
    }
  });
});
