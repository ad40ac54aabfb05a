import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RestClient, type ClientConfig } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import type { RunningProcess } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, httpText, startControllerManager, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/**
 * The node agent with the process runtime against a real gateway: pods run as host processes
 * on their own loopback addresses, logs stream through the gateway, crashed and unhealthy
 * containers restart, proxies reach pods, graceful deletion stops processes, and a stopped
 * agent's node goes NotReady (node lifecycle controller of a real controller-manager).
 */
jest.setTimeout(90_000);

interface Pod extends KubeObject {
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string; state: Record<string, { exitCode?: number }>; lastState: { terminated?: { exitCode: number; reason?: string } } }[];
  };
}
interface Node extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
  spec?: { taints?: { key: string; effect: string }[] };
}

const NODE = 'e2e-node-1';
const PODS = { group: '', version: 'v1', resource: 'pods' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };

/** A small web server on $POD_IP:8080 that logs a tick every 200 ms and says goodbye on SIGTERM. */
const WEB = `
const http = require('http');
http.createServer((q, s) => s.end('hello from ' + process.env.POD_NAME + ' at ' + process.env.POD_IP + '\\n')).listen(8080, process.env.POD_IP, () => console.log('listening on ' + process.env.POD_IP + ':8080'));
let n = 0; setInterval(() => console.log('tick ' + n++), 200);
process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(0); });`;

function webPod(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 5,
      containers: [{ name: 'web', image: 'none', command: [process.execPath, '-e', WEB], ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { port: 'http', path: '/' }, periodSeconds: 1 } }],
    },
  };
}


function kubectl(gw: GatewayProcess, args: string[]): string {
  const r = spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, ...args], { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const pidOf = (p: Pod, container = 0) => Number(p.status?.containerStatuses?.[container]?.containerID?.replace('process://', ''));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('node agent (process runtime)', () => {
  let gw: GatewayProcess;
  let cm: RunningProcess;
  let agent: NodeAgentProcess;
  let client: RestClient;

  const pod = (name: string) => client.resource<Pod>(PODS, 'default').get(name);
  const waitPod = (name: string, what: string, ok: (p: Pod) => boolean, timeoutMs = 20_000) => eventually(`pod ${name} ${what}`, async () => ((p) => (ok(p) ? p : undefined))(await pod(name)), timeoutMs);

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    const pki = join(gw.dataDir, 'pki');
    const config: ClientConfig = { server: gw.url, caPem: await readFile(join(pki, 'ca.crt'), 'utf8'), certPem: await readFile(join(pki, 'admin.crt'), 'utf8'), keyPem: await readFile(join(pki, 'admin.key'), 'utf8') };
    client = new RestClient(config, { component: 'e2e' });
    cm = await startControllerManager(gw.kubeconfig, ['nodelifecycle'], ['--node-monitor-grace-period=5s']);
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, args: [`--client-ca-file=${join(pki, 'ca.crt')}`, '--node-lease-duration-seconds=4', '--restart-backoff-initial=1s', '--pod-workers=4'] });
    await eventually('node Ready', async () => ((n) => (n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined))(await client.resource<Node>(NODES).get(NODE)));
  });
  afterAll(async () => {
    client?.close();
    await agent?.stop();
    await cm?.stop();
    await gw?.stop();
  });

  it('runs pods as host processes, each serving the same port on its own address', async () => {
    await client.resource<Pod>(PODS, 'default').create(webPod('web-a'));
    await client.resource<Pod>(PODS, 'default').create(webPod('web-b'));
    const a = await waitPod('web-a', 'ready', (p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    const b = await waitPod('web-b', 'ready', (p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    expect(a.status).toMatchObject({ phase: 'Running', hostIP: '127.0.0.1' });
    expect(a.status?.podIP).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(a.status?.podIP).not.toBe(b.status?.podIP);
    expect(a.status?.conditions?.map((c) => c.type)).toEqual(expect.arrayContaining(['Initialized', 'ContainersReady', 'Ready']));
    const pid = pidOf(a);
    expect(alive(pid)).toBe(true);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]).toBe(process.execPath);
    expect(await httpText(`http://${a.status?.podIP}:8080/`)).toBe(`hello from web-a at ${a.status?.podIP}\n`);
    expect(await httpText(`http://${b.status?.podIP}:8080/`)).toBe(`hello from web-b at ${b.status?.podIP}\n`);
  });

  it('streams logs through the gateway: kubectl logs and kubectl logs -f', async () => {
    // The pod prints "listening" and then a tick every 200 ms: two ticks logged before the tail is read.
    await eventually('two ticks logged', async () => ((kubectl(gw, ['logs', 'web-a']).match(/^tick \d+$/gm)?.length ?? 0) >= 2 ? true : undefined), 10_000);
    expect(kubectl(gw, ['logs', 'web-a', '--tail=2']).trimEnd().split('\n')).toEqual([expect.stringMatching(/^tick \d+$/), expect.stringMatching(/^tick \d+$/)]);
    expect(kubectl(gw, ['logs', 'web-a', '--limit-bytes=9'])).toBe('listening');
    const follow = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, 'logs', '-f', 'web-a', '--tail=1', '--timestamps'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: { at: number; line: string }[] = [];
    let buf = '';
    follow.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        lines.push({ at: Date.now(), line: buf.slice(0, nl) });
        buf = buf.slice(nl + 1);
      }
    });
    try {
      await eventually('5 followed lines', () => (lines.length >= 5 ? true : undefined), 10_000);
    } finally {
      follow.kill();
    }
    expect(lines[0].line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z tick \d+$/);
    // The lines arrived over time (a stream), not in one piece at the end.
    expect(lines[4].at - lines[0].at).toBeGreaterThanOrEqual(400);
  });

  it('restarts a container whose process was killed, with restartCount + 1', async () => {
    const before = await pod('web-a');
    const pid = pidOf(before);
    process.kill(pid, 'SIGKILL');
    const after = await waitPod('web-a', 'restarted', (p) => p.status?.containerStatuses?.[0]?.restartCount === 1 && !!p.status.containerStatuses[0].state.running);
    expect(after.status?.containerStatuses?.[0].lastState.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    const newPid = pidOf(after);
    expect(newPid).not.toBe(pid);
    expect(alive(newPid)).toBe(true);
    expect(kubectl(gw, ['logs', 'web-a', '--previous', '--tail=1'])).toMatch(/^tick \d+\n$/);
  });

  it('restarts a container whose liveness probe fails', async () => {
    await client.resource<Pod>(PODS, 'default').create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sick', namespace: 'default' },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: 'none',
            command: [process.execPath, '-e', "const fs = require('fs'); fs.writeFileSync('healthy', 'yes'); setTimeout(() => fs.unlinkSync('healthy'), 1500); setInterval(() => {}, 1000);"],
            livenessProbe: { exec: { command: ['test', '-f', 'healthy'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      },
    });
    const created = Date.now();
    await waitPod('sick', 'running', (p) => !!p.status?.containerStatuses?.[0]?.state.running);
    const restarted = await waitPod('sick', 'restarted by its liveness probe', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 20_000);
    // Healthy for 1.5 s, then the next probe fails and the container is killed and started again.
    expect(Date.now() - created).toBeGreaterThanOrEqual(1500);
    expect(restarted.status?.containerStatuses?.[0].lastState.terminated?.exitCode).toBeGreaterThanOrEqual(128);
  });

  it('proxies to pods and to the node agent through the gateway', async () => {
    const b = await pod('web-b');
    const viaPod = await gw.admin.get('/api/v1/namespaces/default/pods/web-b:8080/proxy/');
    expect(viaPod.text).toBe(`hello from web-b at ${b.status?.podIP}\n`);
    const healthz = await gw.admin.get(`/api/v1/nodes/${NODE}/proxy/healthz`);
    expect([healthz.status, healthz.text]).toEqual([200, 'ok']);
    const summary = await gw.admin.get(`/api/v1/nodes/${NODE}/proxy/stats/summary`);
    expect(summary.json.node.nodeName).toBe(NODE);
    expect(summary.json.pods.map((p: { podRef: { name: string } }) => p.podRef.name)).toEqual(expect.arrayContaining(['web-a', 'web-b']));
    // services/proxy picks an endpoint of the service port and goes through that pod's agent.
    const a = await pod('web-a');
    await gw.admin.post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
    await gw.admin.post('/api/v1/namespaces/default/endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: a.status?.podIP, nodeName: NODE, targetRef: { kind: 'Pod', name: 'web-a', namespace: 'default' } }], ports: [{ port: 8080 }] }],
    });
    const viaService = await gw.admin.get('/api/v1/namespaces/default/services/web:80/proxy/');
    expect(viaService.text).toBe(`hello from web-a at ${a.status?.podIP}\n`);
    const noContainer = await gw.admin.get('/api/v1/namespaces/default/pods/web-b/log?container=nope');
    expect([noContainer.status, noContainer.json.message]).toEqual([400, 'container nope is not valid for pod web-b']);
  });

  it('stops a deleted pod gracefully and then removes it', async () => {
    const b = await pod('web-b');
    const pid = pidOf(b);
    await client.resource<Pod>(PODS, 'default').delete('web-b');
    await eventually('web-b gone', async () => {
      try {
        await pod('web-b');
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
    expect(alive(pid)).toBe(false);
  });

  it('stopping the agent makes its node NotReady; its pods are evicted after their tolerationSeconds', async () => {
    // A second, healthy node (its lease renewed here): with every node down the controller
    // would see a full disruption and evict nothing (upstream rule).
    await client.resource<Node>(NODES).create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'healthy' }, spec: {} } as Node);
    await client.resource<Node>(NODES).patch('healthy', 'merge', { status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } }, { subresource: 'status' });
    const leases = client.resource<KubeObject & { spec?: Record<string, unknown> }>({ group: 'coordination.orch.io', version: 'v1', resource: 'leases' }, 'orch-node-lease');
    const microNow = () => new Date().toISOString().replace('Z', '000Z');
    await leases.create({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'healthy' }, spec: { holderIdentity: 'healthy', leaseDurationSeconds: 40, renewTime: microNow() } } as never);
    let renewing = true;
    const renewer = (async () => {
      while (renewing) {
        await leases.patch('healthy', 'merge', { spec: { renewTime: microNow() } }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    // A pod that tolerates the node being unreachable for 2 s only.
    await client.resource<Pod>(PODS, 'default').create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'short-tolerance' },
      spec: {
        nodeName: NODE,
        tolerations: [
          { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 },
          { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 },
        ],
        containers: [{ name: 'c', image: 'none', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] }],
      },
    } as Pod);
    await waitPod('short-tolerance', 'running', (p) => p.status?.phase === 'Running');
    try {
      await agent.stop();
      const node = await eventually(
        'node not Ready',
        async () => ((n) => (n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True' ? n : undefined))(await client.resource<Node>(NODES).get(NODE)),
        30_000,
        250,
      );
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
      type Taint = { key: string; effect: string; timeAdded?: string };
      const taint: Taint = await eventually(
        'NoExecute unreachable taint',
        async () => {
          const n = (await client.resource<Node>(NODES).get(NODE)) as Node & { spec?: { taints?: Taint[] } };
          return n.spec?.taints?.find((t) => t.key === 'node.orch.io/unreachable' && t.effect === 'NoExecute');
        },
        15_000,
        250,
      );
      const evicted = await waitPod('short-tolerance', 'evicted', (p) => !!p.metadata.deletionTimestamp, 20_000);
      const taintedAt = Date.parse(taint.timeAdded!);
      // Whole-second timestamps: evicted no earlier than tolerationSeconds (within their 1 s precision).
      expect(Date.parse(evicted.metadata.deletionTimestamp!) + 1000).toBeGreaterThanOrEqual(taintedAt + 2000);
    } finally {
      renewing = false;
      await renewer;
    }
  });
});
