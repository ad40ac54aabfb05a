import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/**
 * A container that keeps stdin open (`stdin: true`, attached to with `kubectl attach -i`)
 * outlives a kill -9 of its node agent like any other container: the restarted agent adopts the
 * same process (same pid, restartCount 0), the next attach session's input reaches it and exec
 * runs in it; the same for a container in a terminal (`tty: true`: its terminal is held by
 * util-linux `script` under the shim).
 */
jest.setTimeout(120_000);

const NODE = 'e2e-interactive-restart';

interface Pod {
  status?: { phase?: string; containerStatuses?: { restartCount: number; containerID?: string; state: Record<string, unknown> }[] };
}

describe('interactive containers across a node agent restart', () => {
  let gw: GatewayProcess;
  let agent: NodeAgentProcess | undefined;
  let rootDir: string;
  const agentArgs = () => [`--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, '--shutdown-grace-period=5s'];

  const kubectl = (args: string[], input?: string) => spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, ...args], { encoding: 'utf8', input, timeout: 30_000 });
  const pod = (name: string): Pod => JSON.parse(kubectl(['get', 'pod', name, '-o', 'json']).stdout) as Pod;
  const pidOf = (p: Pod) => Number(p.status?.containerStatuses?.[0]?.containerID?.replace('process://', ''));
  /** `kubectl attach -i` typing `line`; resolves with its output once `expected` shows (then detaches), rejects if it ends first. */
  const attachUntil = (line: string, expected: string, name = 'reader') =>
    new Promise<string>((resolve, reject) => {
      const k = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, 'attach', '-i', name], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      const timer = setTimeout(() => k.kill('SIGKILL'), 20_000);
      k.stdout.on('data', (d) => {
        out += d;
        if (out.includes(expected)) {
          clearTimeout(timer);
          k.kill('SIGTERM');
          resolve(out);
        }
      });
      k.stderr.on('data', (d) => (out += d));
      k.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`kubectl attach ended before "${expected}": ${out}`));
      });
      k.stdin.write(`${line}\n`);
    });

  beforeAll(async () => {
    rootDir = await tempDir('interactive-restart-');
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, rootDir, args: agentArgs() });
  });
  afterAll(async () => {
    await agent?.stop();
    await gw?.stop();
    await removeDir(rootDir);
  });

  it('kill -9 of the agent: stdin and terminal containers keep running and take the next attach session', async () => {
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: reader}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    stdin: true
    command: ["sh", "-c", "i=0; while read line; do i=$((i+1)); echo \\"got $i: $line\\"; done; echo eof"]
---
apiVersion: v1
kind: Pod
metadata: {name: term}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    stdin: true
    tty: true
    command: ["sh"]
`;
    expect(kubectl(['apply', '-f', '-'], manifest).stderr).toBe('');
    const before = await eventually('reader runs', () => ((p) => (p.status?.containerStatuses?.[0]?.state.running ? p : undefined))(pod('reader')), 30_000, 200);
    const termBefore = await eventually('term runs', () => ((p) => (p.status?.containerStatuses?.[0]?.state.running ? p : undefined))(pod('term')), 30_000, 200);
    expect(await attachUntil('one', 'got 1: one\n')).not.toContain('eof');
    // In a terminal: what is typed is echoed, and the shell's output comes back with terminal line ends.
    expect(await attachUntil('echo tty-$((6*7)) $(tty)', 'tty-42 /dev/pts/', 'term')).toContain('echo tty-$((6*7)) $(tty)');

    await agent!.process.kill9();
    const pid = pidOf(before);
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).not.toMatch(/\) Z /); // still running without an agent
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, rootDir, args: agentArgs() });

    // The agent serves attach once it has adopted the pod; until then an attach fails and is tried again.
    const second = await eventually('a second attach session is served', () => attachUntil('two', 'got 2: two\n').catch(() => undefined), 40_000, 500);
    expect(second).not.toContain('eof'); // stdin stayed open across the restart: the loop still waits for lines
    const termSecond = await eventually('the terminal is served after the restart', () => attachUntil('echo again-$((6*7))', 'again-42', 'term').catch(() => undefined), 40_000, 500);
    expect(termSecond).toContain('again-42');
    const termAfter = pod('term');
    expect([pidOf(termAfter), termAfter.status?.containerStatuses?.[0]?.restartCount]).toEqual([pidOf(termBefore), 0]);
    // exec works in an adopted container too.
    expect(kubectl(['exec', 'reader', '--', 'echo', 'adopted']).stdout).toBe('adopted\n');
    const after = pod('reader');
    expect([pidOf(after), after.status?.containerStatuses?.[0]?.restartCount]).toEqual([pid, 0]);
  });
});
