import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { freePort, reapSandboxHolders, removeDir, startProcess, tcpProbe, tempDir, type RunningProcess } from '@orch/testing';

const ROOT = join(__dirname, '..', '..');
export const NODE_AGENT_MAIN = join(ROOT, 'dist', 'apps', 'node-agent', 'src', 'main.js');

export { CONTROLLER_MANAGER_MAIN, startControllerManager } from './controller-manager';

export interface NodeAgentProcess {
  name: string;
  /** Port of the agent's HTTPS API. */
  port: number;
  rootDir: string;
  process: RunningProcess;
  /** SIGTERM, wait, remove the root dir (unless it was given). */
  stop(): Promise<void>;
}

export interface StartNodeAgentOptions {
  /** Node name (--hostname-override). */
  name: string;
  /** `run` (default) with `--kubeconfig`, or `join`. */
  command?: 'run' | 'join';
  kubeconfig?: string;
  args?: string[];
  rootDir?: string;
  timeoutMs?: number;
  onLine?: (line: string) => void;
}

/**
 * Runs the built node agent as a real process with its own root dir and free ports (API and
 * health), on node IP 127.0.0.1; ready once its HTTPS API accepts connections.
 */
export async function startNodeAgent(opts: StartNodeAgentOptions): Promise<NodeAgentProcess> {
  if (!existsSync(NODE_AGENT_MAIN)) throw new Error(`${NODE_AGENT_MAIN} is missing: run "node scripts/build.mjs" first`);
  const rootDir = opts.rootDir ?? (await tempDir('node-agent-'));
  const port = await freePort();
  const healthPort = await freePort();
  let proc: RunningProcess;
  try {
    proc = await startProcess({
      cmd: process.execPath,
      args: [
        NODE_AGENT_MAIN,
        ...(opts.command === 'join' ? ['join'] : []),
        ...(opts.kubeconfig ? [`--kubeconfig=${opts.kubeconfig}`] : []),
        `--root-dir=${rootDir}`,
        `--hostname-override=${opts.name}`,
        '--node-ip=127.0.0.1',
        '--address=127.0.0.1',
        `--port=${port}`,
        `--secure-port=${healthPort}`,
        '--node-logs-dir=' + rootDir,
        ...(opts.args ?? []),
      ],
      env: { ORCH_LOG_LEVEL: process.env['ORCH_LOG_LEVEL'] ?? 'info' },
      readyProbe: tcpProbe(port),
      timeoutMs: opts.timeoutMs ?? 30_000,
      stopGraceMs: 15_000,
      onLine: opts.onLine,
    });
  } catch (err) {
    if (!opts.rootDir) await removeDir(rootDir);
    throw err;
  }
  return {
    name: opts.name,
    port,
    rootDir,
    process: proc,
    async stop() {
      await proc.stop();
      // An agent killed earlier in the test (kill -9) left holders its clean stop did not know of.
      await reapSandboxHolders(rootDir);
      if (!opts.rootDir) await removeDir(rootDir);
    },
  };
}

export { eventually } from '@orch/testing';

/** A pod on `node` whose container (the host's node binary) answers every HTTP request on :8080 with `hello <path>`. */
export function webPodManifest(node: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: node
    command: ["${process.execPath}", "-e", "require('http').createServer((q, s) => s.end('hello ' + q.url)).listen(8080, process.env.POD_IP)"]
    ports: [{containerPort: 8080}]
`;
}

/** The body of a plain HTTP GET (a new connection each time). */
export function httpText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}
