import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RestClient } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/** One agent in the simulated runtime serves many fake nodes; their pods run at once. */
jest.setTimeout(60_000);

interface Node extends KubeObject {
  metadata: KubeObject['metadata'];
  spec?: { podCIDR?: string };
  status?: { conditions?: { type: string; status: string }[]; nodeInfo?: { containerRuntimeVersion?: string } };
}
interface Pod extends KubeObject {
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

const NODES = 20;
const PODS = 200;

describe('node agent (simulated runtime)', () => {
  let gw: GatewayProcess;
  let agent: NodeAgentProcess;
  let client: RestClient;

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    const pki = join(gw.dataDir, 'pki');
    client = new RestClient({ server: gw.url, caPem: await readFile(join(pki, 'ca.crt'), 'utf8'), certPem: await readFile(join(pki, 'admin.crt'), 'utf8'), keyPem: await readFile(join(pki, 'admin.key'), 'utf8') }, { component: 'e2e' });
    agent = await startNodeAgent({ name: 'fake', kubeconfig: gw.kubeconfig, args: ['--runtime=simulated', `--simulated-nodes=${NODES}`] });
  });
  afterAll(async () => {
    client?.close();
    await agent?.stop();
    await gw?.stop();
  });

  it('registers every fake node, Ready, with its own pod range', async () => {
    const nodes = await eventually('all nodes Ready', async () => {
      const list = await client.resource<Node>({ group: '', version: 'v1', resource: 'nodes' }).list();
      const ready = list.items.filter((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
      return ready.length === NODES ? ready : undefined;
    });
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual(Array.from({ length: NODES }, (_, i) => `fake-${i}`).sort());
    expect(new Set(nodes.map((n) => n.spec?.podCIDR)).size).toBe(NODES);
    expect(nodes[0].status?.nodeInfo?.containerRuntimeVersion).toMatch(/^simulated:\/\//);
  });

  it('runs pods at once and removes deleted ones', async () => {
    const pods = client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, 'default');
    await Promise.all(
      Array.from({ length: PODS }, (_, i) =>
        pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `sim-${i}`, namespace: 'default' }, spec: { nodeName: `fake-${i % NODES}`, containers: [{ name: 'c', image: 'none' }] } }),
      ),
    );
    const running = await eventually('all pods Running and Ready', async () => {
      const list = await pods.list();
      const ok = list.items.filter((p) => p.status?.phase === 'Running' && p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
      return ok.length === PODS ? ok : undefined;
    });
    expect(new Set(running.map((p) => p.status?.podIP)).size).toBe(PODS);
    await pods.delete('sim-0');
    await eventually('sim-0 removed', async () => ((list) => (list.items.some((p) => p.metadata.name === 'sim-0') ? undefined : true))(await pods.list()));
  });
});
