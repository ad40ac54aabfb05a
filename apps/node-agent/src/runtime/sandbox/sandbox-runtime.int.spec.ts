import { existsSync } from 'node:fs';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@orch/server-common';
import { removeDir, tempDir } from '@orch/testing';
import type { Container, Pod } from '../../api/types';
import { ProcessRuntime } from '../process/process-runtime';
import { testRuntimeOptions } from '../process/testing';
import type { ContainerRuntimeState } from '../runtime';
import { detectCgroups, type CgroupDriver } from './cgroups';
import { Sandbox } from './sandbox';

/**
 * The process runtime with the sandbox isolation and cgroups (namespaces and cgroups; root and
 * util-linux, as on the machines this project runs on): how a container's end is reported, and
 * that neither a deleted pod nor a clean stop leaves anything of a pod behind.
 */
jest.setTimeout(60_000);

let dir: string;
let runtime: ProcessRuntime;
let cgroups: CgroupDriver;

beforeAll(async () => {
  const found = await detectCgroups(`orch-test-${process.pid}`);
  if (!found.driver) throw new Error(`no cgroups for containers on this machine: ${found.reason}`);
  cgroups = found.driver;
});
afterAll(async () => {
  await cgroups?.remove([]);
});

const logger = createLogger('test', { level: 'error' });

beforeEach(async () => {
  dir = await tempDir('sandbox-runtime-');
  const { sandbox, reason } = Sandbox.create({ rootDir: dir, maskedPaths: [], logger });
  if (!sandbox) throw new Error(`the sandbox cannot run on this machine: ${reason}`);
  runtime = new ProcessRuntime(testRuntimeOptions(dir, '127.78.0.0/24', { backoff: { initialMs: 60_000, maxMs: 60_000 }, logger, isolation: sandbox, cgroups }));
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

/** Kernel clock ticks per second (USER_HZ; `getconf CLK_TCK`), the unit of start times in /proc/<pid>/stat. */
const CLK_TCK = 100;

/** Now, in the unit of process start times (clock ticks since boot). */
async function ticksSinceBoot(): Promise<number> {
  return Math.ceil(parseFloat(await readFile('/proc/uptime', 'utf8')) * CLK_TCK);
}

/**
 * Every live process (not a zombie) in the namespace `ns` (a link of /proc/<pid>/ns/<kind>)
 * that started by `startedBy` (clock ticks since boot): namespace inode numbers are reused
 * once freed, so a process started later may be in another namespace of the same name.
 */
async function processesIn(ns: string, kind: 'uts' | 'mnt' = 'uts', startedBy = Infinity): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const [link, stat] = await Promise.all([readlink(`/proc/${pid}/ns/${kind}`).catch(() => ''), readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')]);
    if (link !== ns || !stat) continue;
    // Fields after the command: state is the first, starttime the 20th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[19]) <= startedBy) found.push(pid);
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

  it('deleting a pod releases its sandbox: no process, namespace, mount or cgroup of it remains, nor its directory', async () => {
    const p = pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 600 & sleep 600'], resources: { limits: { memory: '64Mi', cpu: '100m' } } }]);
    const uid = p.metadata.uid!;
    const podDir = join(dir, 'pods', uid);
    const [c] = await syncUntil(p, running, 'running');
    const holder = Number(await readFile(join(podDir, 'pids', 'sandbox'), 'utf8'));
    const uts = await readlink(`/proc/${holder}/ns/uts`);
    const init = await namespaceInit(pidOf(c));
    const mnt = await readlink(`/proc/${init}/ns/mnt`);
    // The container runs in its pod's cgroup, under the agent's.
    expect(await readFile(`/proc/${init}/cgroup`, 'utf8')).toContain(`/pod${uid}/main-c`);
    expect(existsSync(join(cgroups.base, `pod${uid}`))).toBe(true);
    expect(await processesIn(mnt, 'mnt')).toContain(init);

    const removing = await ticksSinceBoot();
    await runtime.removePod(uid);
    expect(await processesIn(uts, 'uts', removing)).toEqual([]);
    expect(await processesIn(mnt, 'mnt', removing)).toEqual([]);
    expect(existsSync(join(cgroups.base, `pod${uid}`))).toBe(false);
    expect(existsSync(podDir)).toBe(false);
    expect((await readFile('/proc/self/mountinfo', 'utf8')).includes(podDir)).toBe(false);
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
    const stopping = await ticksSinceBoot();
    await runtime.shutdown(2000);
    expect(await processesIn(uts, 'uts', stopping)).toEqual([]);
  });
});
