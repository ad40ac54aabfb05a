import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import type { Container, Pod, RestartPolicy } from '../../api/types';
import type { ContainerRuntimeState } from '../runtime';
import { instanceLogFiles } from './logs';
import { ProcessRuntime } from './process-runtime';
import { testRuntimeOptions } from './testing';

let dir: string;
let runtime: ProcessRuntime;
let events: string[];

beforeEach(async () => {
  dir = await tempDir('process-runtime-');
  events = [];
  runtime = new ProcessRuntime(
    testRuntimeOptions(dir, '127.77.0.0/24', {
      // An image that runs `node -e <script>` as its entrypoint when the container names no command.
      entrypoints: new Map([['example/node-script', { entrypoint: [process.execPath, '-e'], cmd: ['console.log("image default")'] }]]),
      event: (pod, container, _init, type, reason) => events.push(`${pod.metadata.name}/${container} ${type} ${reason}`),
    }),
  );
});
afterEach(async () => {
  await runtime.shutdown(1000);
  await removeDir(dir);
});

const node = (script: string): string[] => [process.execPath, '-e', script];
let seq = 0;
function pod(containers: Container[], opts: { policy?: RestartPolicy; inits?: Container[]; grace?: number } = {}): Pod {
  seq++;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${seq}`, namespace: 'ns', uid: `uid-${seq}` },
    spec: { restartPolicy: opts.policy ?? 'Always', containers, initContainers: opts.inits, terminationGracePeriodSeconds: opts.grace, automountServiceAccountToken: false },
  };
}

/** Syncs the pod (as the pod worker would) until `want` holds for its container states. */
async function syncUntil(p: Pod, want: (cs: ContainerRuntimeState[]) => boolean, timeoutMs = 8000): Promise<ContainerRuntimeState[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await runtime.syncPod(p);
    const cs = runtime.podState(p.metadata.uid!)?.containers ?? [];
    if (want(cs)) return cs;
    if (Date.now() > deadline) throw new Error(`condition not reached; states: ${JSON.stringify(cs)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const main = (cs: ContainerRuntimeState[], name: string) => cs.find((c) => c.name === name && !c.init);

describe('ProcessRuntime with real processes', () => {
  it('runs init containers in order, then the containers, with the pod env and its own IP', async () => {
    const p = pod([{ name: 'app', command: node('console.log(`ip=${process.env.POD_IP} ns=${process.env.POD_NAMESPACE} node=${process.env.NODE_NAME}`); setInterval(() => {}, 1000)') }], {
      inits: [
        { name: 'first', command: node("require('fs').appendFileSync(process.env.ORCH_CONTAINER_ROOT + '/../../../order', 'first\\n')") },
        { name: 'second', command: node("require('fs').appendFileSync(process.env.ORCH_CONTAINER_ROOT + '/../../../order', 'second\\n')") },
      ],
    });
    const cs = await syncUntil(p, (c) => !!main(c, 'app')?.running);
    expect(cs.filter((c) => c.init).map((c) => [c.name, c.terminated?.exitCode])).toEqual([
      ['first', 0],
      ['second', 0],
    ]);
    const podDir = join(dir, 'pods', p.metadata.uid!);
    expect(await readFile(join(podDir, 'order'), 'utf8')).toBe('first\nsecond\n');
    const cr = runtime.container(p.metadata.uid!, 'app')!;
    await new Promise((r) => setTimeout(r, 200));
    const log = await readFile((await instanceLogFiles(cr.logDirectory, 0))[0], 'utf8');
    expect(log).toMatch(/ stdout F ip=127\.77\.0\.\d+ ns=ns node=n1\n$/);
  });

  it('restarts a crashing container with back-off and counts restarts', async () => {
    const p = pod([{ name: 'crash', command: node('process.exit(3)') }]);
    const first = await syncUntil(p, (c) => (main(c, 'crash')?.restartCount ?? 0) >= 1);
    expect(main(first, 'crash')?.lastTerminated?.exitCode).toBe(3);
    const backingOff = await syncUntil(p, (c) => main(c, 'crash')?.waiting?.reason === 'CrashLoopBackOff');
    expect(main(backingOff, 'crash')?.waiting?.message).toMatch(/^back-off 300ms restarting failed container=crash pod=p\d+_ns\(uid-\d+\)$/);
    const later = await syncUntil(p, (c) => (main(c, 'crash')?.restartCount ?? 0) >= 3);
    expect(main(later, 'crash')?.lastTerminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(events).toEqual(expect.arrayContaining([`${p.metadata.name}/crash Normal Started`, `${p.metadata.name}/crash Warning BackOff`]));
  });

  it.each<{ name: string; policy: RestartPolicy; script: string; want: { exitCode: number; reason: string } }>([
    { name: 'Never keeps a failure', policy: 'Never', script: 'process.exit(7)', want: { exitCode: 7, reason: 'Error' } },
    { name: 'OnFailure keeps a success', policy: 'OnFailure', script: 'process.exit(0)', want: { exitCode: 0, reason: 'Completed' } },
  ])('$name', async ({ policy, script, want }) => {
    const p = pod([{ name: 'once', command: node(script) }], { policy });
    const cs = await syncUntil(p, (c) => !!main(c, 'once')?.terminated);
    await new Promise((r) => setTimeout(r, 400));
    await runtime.syncPod(p);
    const again = main(runtime.podState(p.metadata.uid!)!.containers, 'once')!;
    expect(again.terminated).toMatchObject(want);
    expect(again.restartCount).toBe(0);
    expect(main(cs, 'once')?.terminated).toMatchObject(want);
  });

  it.each<{ name: string; container: Container; want: { state: string; reason: string; message?: RegExp } }>([
    { name: 'no command', container: { name: 'img', image: 'example/unknown' }, want: { state: 'waiting', reason: 'CreateContainerConfigError', message: /has no command and no args, and image "example\/unknown" is not in the node agent's image entrypoint table/ } },
    { name: 'missing binary', container: { name: 'bin', command: ['no-such-binary-xyz'] }, want: { state: 'lastTerminated', reason: 'StartError', message: /executable file not found/ } },
  ])('reports $name', async ({ container, want }) => {
    const p = pod([container], { policy: 'Always' });
    const cs = await syncUntil(p, (c) => {
      const s = main(c, container.name);
      return want.state === 'waiting' ? !!s?.waiting?.message : !!s?.lastTerminated || !!s?.terminated;
    });
    const s = main(cs, container.name)!;
    const got = want.state === 'waiting' ? s.waiting : (s.lastTerminated ?? s.terminated);
    expect(got?.reason).toBe(want.reason);
    if (want.message) expect(got?.message).toMatch(want.message);
  });

  // Containers without `command` (upstream: command replaces the image ENTRYPOINT, args its CMD).
  it.each<{ name: string; container: Container; want: string }>([
    { name: 'args alone are the command line', container: { name: 'c', image: 'example/unknown', args: [process.execPath, '-e', 'console.log("from args")'] }, want: 'from args' },
    { name: 'an image in the table runs its entrypoint and cmd', container: { name: 'c', image: 'registry.example.com:5000/example/node-script:1.0' }, want: 'image default' },
    { name: "args replace the table's cmd, its entrypoint stays", container: { name: 'c', image: 'example/node-script', args: ['console.log("own args")'] }, want: 'own args' },
  ])('runs a container without command: $name', async ({ container, want }) => {
    const p = pod([container], { policy: 'Never' });
    await syncUntil(p, (cs) => main(cs, 'c')?.terminated?.exitCode === 0);
    // The exit may be seen before the output pipe is drained into the log.
    const logDir = runtime.container(p.metadata.uid!, 'c')!.logDirectory;
    const log = async () => readFile((await instanceLogFiles(logDir, 0))[0], 'utf8');
    for (let i = 0; i < 100 && !(await log()).includes(want); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await log()).toContain(want);
  });

  it('stops gracefully: SIGTERM first, SIGKILL after the grace period', async () => {
    const polite = pod([{ name: 'c', command: node("process.on('SIGTERM', () => { console.log('bye'); process.exit(0); }); setInterval(() => {}, 1000)") }]);
    const stubborn = pod([{ name: 'c', command: node("process.on('SIGTERM', () => console.log('ignoring')); setInterval(() => {}, 1000)") }]);
    for (const p of [polite, stubborn]) await syncUntil(p, (c) => !!main(c, 'c')?.running);
    await new Promise((r) => setTimeout(r, 300)); // let the processes install their handlers
    const started = Date.now();
    expect(await runtime.killPod(polite.metadata.uid!, 1)).toBe(false);
    expect(await runtime.killPod(stubborn.metadata.uid!, 1)).toBe(false);
    const politeEnd = await syncUntil(polite, (c) => !!main(c, 'c')?.terminated);
    const stubbornEnd = await syncUntil(stubborn, (c) => !!main(c, 'c')?.terminated);
    expect(main(politeEnd, 'c')?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(main(stubbornEnd, 'c')?.terminated).toMatchObject({ exitCode: 137, signal: 9, reason: 'Error' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(events).toContain(`${stubborn.metadata.name}/c Normal Killing`);
    expect(await runtime.killPod(stubborn.metadata.uid!, 1)).toBe(true);
    await runtime.removePod(stubborn.metadata.uid!);
    expect(runtime.podState(stubborn.metadata.uid!)).toBeUndefined();
  });
});

describe('a process runtime started over the pods of an earlier one (the agent was killed)', () => {
  it('keeps a running pod\'s address for it, even when a new pod syncs first', async () => {
    const kept = pod([{ name: 'c', command: node('setInterval(() => {}, 1000)') }]);
    await syncUntil(kept, (c) => !!main(c, 'c')?.running);
    const address = runtime.podState(kept.metadata.uid!)!.podIP;
    // A second runtime on the same directory, as a restarted agent: the first one's processes run on.
    const next = new ProcessRuntime(testRuntimeOptions(dir, '127.77.0.0/24'));
    try {
      expect(await next.findLeftovers()).toBe(1);
      const created = pod([{ name: 'c', command: node('setInterval(() => {}, 1000)') }]);
      await next.syncPod(created);
      await next.syncPod(kept);
      expect({ created: next.podState(created.metadata.uid!)?.podIP === address, kept: next.podState(kept.metadata.uid!)?.podIP }).toEqual({ created: false, kept: address });
    } finally {
      await next.shutdown(1000);
    }
  });
});
