import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, httpText, startNodeAgent, webPodManifest, type NodeAgentProcess } from './support/node-agent';

/**
 * The node agent's --streaming-connection-idle-timeout (here 7s) through stock kubectl, over
 * WebSocket and the SPDY fallback. A session with traffic stays open: for exec, kubectl's
 * heartbeat every 5s is traffic too (as upstream, where every frame resets the idle timer), so a
 * quiet command runs on; a port-forward gets a request every second (kubectl's WebSocket tunnel
 * sends no heartbeats). A client gone silent without closing its connection (kubectl stopped
 * with SIGSTOP: nothing sent, the TCP connection still up) is what the timeout is for: the agent
 * closes its session cleanly — exec: the command is stopped and the reason is the session's
 * error, which kubectl reports once it runs again; port-forward: the session ends (GOAWAY) and
 * kubectl says it lost the pod.
 */
jest.setTimeout(120_000);

const NODE = 'e2e-idle';
/** Longer than kubectl's heartbeat period (5s), with room for a loaded machine. */
const IDLE_MS = 7000;
const IDLE_S = IDLE_MS / 1000;

const manifests = `
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
---
${webPodManifest(NODE)}`;

/** kubectl's transports: WebSocket (its default) and the SPDY fallback, per command. */
const TRANSPORTS: { transport: string; exec: Record<string, string>; portForward: Record<string, string> }[] = [
  { transport: 'WebSocket', exec: {}, portForward: {} },
  { transport: 'SPDY', exec: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }, portForward: { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' } },
];

/** A running kubectl with its output so far and its exit code once it exits and its output is read. */
interface Kubectl {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

describe('streaming sessions and --streaming-connection-idle-timeout (kubectl)', () => {
  let gw: GatewayProcess;
  let agent: NodeAgentProcess;
  const running: ChildProcess[] = [];

  const kubectl = (args: string[], env: Record<string, string> = {}) =>
    spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  const start = (args: string[], env: Record<string, string>): Kubectl => {
    const child = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout!.on('data', (d) => (out.stdout += d));
    child.stderr!.on('data', (d) => (out.stderr += d));
    // 'close', not 'exit': a process can be seen to exit before its last output is read from the pipes.
    return { child, out, exited: new Promise((resolve) => child.once('close', (code) => resolve(code))) };
  };
  /** Sessions the agent closed for idling so far, by endpoint (node_agent_streaming_idle_closes_total). */
  const idleCloses = (): Record<string, number> => {
    const metrics = kubectl(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`]).stdout;
    return Object.fromEntries([...metrics.matchAll(/^node_agent_streaming_idle_closes_total\{endpoint="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  };
  const closedAfter = (endpoint: string, before: number) => eventually(`the agent closed the idle ${endpoint} session`, () => ((n) => (n > before ? n : undefined))(idleCloses()[endpoint] ?? 0), IDLE_MS + 10_000, 250);
  /** Host processes whose whole command line is `commandLine` (the process runtime runs exec'd commands as host processes). */
  const hostProcesses = (commandLine: string) => spawnSync('pgrep', ['-fx', commandLine], { encoding: 'utf8' }).stdout.trim();

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, args: [`--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, `--streaming-connection-idle-timeout=${IDLE_S}s`] });
    await eventually('node registered', () => (kubectl(['get', 'node', NODE]).status === 0 ? true : undefined));
    expect(spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, 'apply', '-f', '-'], { encoding: 'utf8', input: manifests }).stderr).toBe('');
    await eventually('pods running', () => (kubectl(['get', 'pod', 'shell', 'web', '-o', 'jsonpath={.items[*].status.phase}']).stdout === 'Running Running' ? true : undefined), 30_000, 200);
  });
  afterEach(() => {
    for (const c of running.splice(0)) c.kill('SIGKILL');
  });
  afterAll(async () => {
    await agent?.stop();
    await gw?.stop();
  });

  describe.each(TRANSPORTS)('exec over $transport', ({ exec: env }) => {
    it('keeps a quiet command running past the timeout: the heartbeats are traffic', () => {
      const before = idleCloses().exec ?? 0;
      const started = Date.now();
      const r = kubectl(['exec', 'shell', '--', 'sh', '-c', `sleep ${IDLE_S * 2}; echo done`], env);
      expect([r.status, r.stdout, r.stderr]).toEqual([0, 'done\n', '']);
      expect(Date.now() - started).toBeGreaterThan(IDLE_MS * 2);
      expect(idleCloses().exec ?? 0).toBe(before);
    });

    it('closes the session of a client gone silent: the command is stopped, kubectl reports why once it runs again', async () => {
      const marker = `sleep 36${Math.floor(Math.random() * 90) + 10}`;
      const before = idleCloses().exec ?? 0;
      const k = start(['exec', 'shell', '--', 'sh', '-c', `echo started; exec ${marker}`], env);
      await eventually('the command started', () => (k.out.stdout === 'started\n' && hostProcesses(marker) ? true : undefined), 30_000, 100);
      k.child.kill('SIGSTOP');
      await closedAfter('exec', before);
      await eventually('the idle command was stopped', () => (hostProcesses(marker) === '' ? true : undefined), 10_000, 200);
      k.child.kill('SIGCONT');
      expect(await k.exited).not.toBe(0);
      expect(k.out.stderr).toContain(`the connection was idle for ${IDLE_S}s: closed by the node agent (--streaming-connection-idle-timeout)`);
    });
  });

  describe.each(TRANSPORTS)('port-forward over $transport', ({ portForward: env }) => {
    /** `kubectl port-forward pod/web <port>:8080`, once it forwards. */
    const forward = async () => {
      const port = await freePort();
      const k = start(['port-forward', 'pod/web', `${port}:8080`, '--address=127.0.0.1'], env);
      await eventually('kubectl forwards', () => (/Forwarding from 127\.0\.0\.1:\d+ -> 8080/.test(k.out.stdout) ? true : undefined), 30_000, 100);
      expect(await httpText(`http://127.0.0.1:${port}/first`)).toBe('hello /first');
      return { port, k };
    };

    it('keeps a session with a request every second open past the timeout', async () => {
      const before = idleCloses().portForward ?? 0;
      const { port, k } = await forward();
      let ended = false;
      void k.exited.then(() => (ended = true));
      for (let i = 0; i < IDLE_S + 3; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        expect(await httpText(`http://127.0.0.1:${port}/tick${i}`)).toBe(`hello /tick${i}`);
      }
      expect(ended).toBe(false);
      expect(idleCloses().portForward ?? 0).toBe(before);
    });

    it('closes the session of a client gone silent: kubectl, running again, has lost the pod', async () => {
      const before = idleCloses().portForward ?? 0;
      const { k } = await forward();
      k.child.kill('SIGSTOP');
      await closedAfter('portForward', before);
      k.child.kill('SIGCONT');
      expect(await k.exited).toBe(1);
      expect(k.out.stderr).toContain('lost connection to pod');
    });
  });
});
