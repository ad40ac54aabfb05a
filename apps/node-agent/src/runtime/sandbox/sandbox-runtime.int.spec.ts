import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@orch/server-common';
import { removeDir, tempDir } from '@orch/testing';
import type { Container, Pod } from '../../api/types';
import { PodIpAllocator } from '../../node/pod-cidr';
import { ProcessRuntime } from '../process/process-runtime';
import type { ContainerRuntimeState } from '../runtime';
import { Sandbox } from './sandbox';

/**
 * The process runtime with the sandbox isolation (namespaces; root and util-linux, as on the
 * machines this project runs on): how a container's end is reported, and that a clean stop
 * leaves no process of any pod behind.
 */
jest.setTimeout(60_000);

let dir: string;
let runtime: ProcessRuntime;

const logger = createLogger('test', { level: 'error' });

beforeEach(async () => {
  dir = await tempDir('sandbox-runtime-');
  const { sandbox, reason } = Sandbox.create({ rootDir: dir, maskedPaths: [], logger });
  if (!sandbox) throw new Error(`the sandbox cannot run on this machine: ${reason}`);
  runtime = new ProcessRuntime({
    rootDir: dir,
    nodeName: 'n1',
    hostIP: '127.0.0.1',
    ips: new PodIpAllocator('127.78.0.0/24'),
    source: { configMap: async () => undefined, secret: async () => undefined },
    token: async () => undefined,
    rootCaPem: 'CA',
    nodeAllocatable: () => ({ cpu: '2', memory: '1Gi' }),
    entrypoints: new Map(),
    log: { maxBytes: 1 << 20, maxFiles: 2 },
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    syncFrequencyMs: 60_000,
    logger,
    onChange: () => undefined,
    event: () => undefined,
    isolation: sandbox,
  });
});
afterEach(async () => {
  await runtime.shutdown(1000);
  await removeDir(dir);
});

let seq = 0;
function pod(containers: Container[]): Pod {
  seq++;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${seq}`, namespace: 'ns', uid: `sandbox-uid-${seq}` },
    spec: { restartPolicy: 'Never', containers, terminationGracePeriodSeconds: 1, automountServiceAccountToken: false },
  };
}

async function syncUntil(p: Pod, want: (cs: ContainerRuntimeState[]) => boolean, what: string): Promise<ContainerRuntimeState[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await runtime.syncPod(p);
    const cs = runtime.podState(p.metadata.uid!)?.containers ?? [];
    if (want(cs)) return cs;
    if (Date.now() > deadline) throw new Error(`${what}: not reached; states ${JSON.stringify(cs)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const running = (cs: ContainerRuntimeState[]) => cs.length > 0 && cs.every((c) => !!c.running);
const pidOf = (c: ContainerRuntimeState) => Number(c.containerID?.replace('process://', ''));

/** PID 1 of the container's PID namespace: the first child of the process the runtime started. */
async function namespaceInit(pid: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const first = Number((await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/)[0]);
    if (first > 1) return first;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no child under ${pid}`);
}

/** Every live process (not a zombie) whose UTS namespace is `uts`. */
async function processesIn(uts: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const [ns, stat] = await Promise.all([readlink(`/proc/${pid}/ns/uts`).catch(() => ''), readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')]);
    if (ns === uts && stat && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(pid);
  }
  return found;
}

describe('sandbox runtime', () => {
  it.each([
    { name: 'exit 3', command: ['sh', '-c', 'exit 3'], kill: undefined, want: 3 },
    { name: 'exit 1', command: ['sh', '-c', 'exit 1'], kill: undefined, want: 1 },
    { name: 'SIGKILL of PID 1 from the host', command: ['sleep', '600'], kill: 'SIGKILL' as const, want: 137 },
  ])('reports how the main process ended: $name → $want', async ({ command, kill, want }) => {
    const p = pod([{ name: 'c', image: 'busybox', command }]);
    if (kill) {
      const [c] = await syncUntil(p, running, 'running');
      process.kill(await namespaceInit(pidOf(c)), kill);
    }
    const [ended] = await syncUntil(p, (cs) => !!cs[0]?.terminated, 'ended');
    expect(ended.terminated?.exitCode).toBe(want);
  });

  it('a clean stop leaves no process of any pod: containers, interactive ones and namespace holders included', async () => {
    const p = pod([
      { name: 'plain', image: 'busybox', command: ['sh', '-c', 'sleep 600 & sleep 600'] },
      { name: 'interactive', image: 'busybox', command: ['sh', '-c', 'cat; sleep 600'], stdin: true },
    ]);
    const cs = await syncUntil(p, running, 'running');
    const holder = Number(await readFile(join(dir, 'pods', p.metadata.uid!, 'pids', 'sandbox'), 'utf8'));
    const uts = await readlink(`/proc/${holder}/ns/uts`);
    // The holder, and under each container its waiter, PID 1 and what PID 1 started (once the init scripts ran).
    const want = 1 + 2 * 3;
    let before = await processesIn(uts);
    for (let i = 0; i < 200 && before.length < want; i++) {
      await new Promise((r) => setTimeout(r, 50));
      before = await processesIn(uts);
    }
    expect(before).toEqual(expect.arrayContaining([holder, ...cs.map(pidOf)]));
    expect(before.length).toBeGreaterThanOrEqual(want);
    await runtime.shutdown(2000);
    expect(await processesIn(uts)).toEqual([]);
  });
});
