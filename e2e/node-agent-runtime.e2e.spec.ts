import { spawn } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, removeDir, tempDir } from '@orch/testing';
import { NODE_AGENT_MAIN } from './support/node-agent';

/**
 * The node agent's choice of pod runtime at start-up: `--runtime=auto` takes the sandbox where
 * the machine allows it and says so, falls back to the process runtime with the reason where
 * it does not (here: util-linux's `unshare` not on PATH); `--runtime=sandbox` refuses to start
 * there. No gateway is needed: the choice is made and logged before the agent registers.
 */
jest.setTimeout(60_000);

let dir: string;
let kubeconfig: string;
/** A PATH with `sh` and nothing else: the sandbox's tools are missing. */
let bareBin: string;

beforeAll(async () => {
  dir = await tempDir('agent-runtime-');
  bareBin = join(dir, 'bin');
  await mkdir(bareBin);
  await symlink('/bin/sh', join(bareBin, 'sh'));
  kubeconfig = join(dir, 'kubeconfig');
  // Nothing listens there: registration retries, which does not matter to what is tested.
  const server = `https://127.0.0.1:${await freePort()}`;
  await writeFile(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`);
});
afterAll(() => removeDir(dir));

/** Starts the agent; resolves with its output once `until` shows or it exits, then stops it. */
async function agentOutput(runtime: string, path: string, until: RegExp): Promise<{ out: string; exitCode: number | null }> {
  const child = spawn(process.execPath, [NODE_AGENT_MAIN, `--kubeconfig=${kubeconfig}`, `--root-dir=${join(dir, `root-${runtime}-${Math.random().toString(36).slice(2)}`)}`, '--hostname-override=runtime-choice', '--node-ip=127.0.0.1', '--address=127.0.0.1', `--port=${await freePort()}`, `--secure-port=${await freePort()}`, `--runtime=${runtime}`], {
    env: { ...process.env, PATH: path, ORCH_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (until.test(out)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => resolve());
  });
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await exited;
    return { out, exitCode: null };
  }
  return { out, exitCode: await exited };
}

it.each<{ name: string; runtime: string; bare: boolean; want: RegExp; exits: boolean }>([
  { name: 'auto where namespaces work: the sandbox', runtime: 'auto', bare: false, want: /sandbox runtime: each pod in its own mount, PID, IPC and UTS namespaces/, exits: false },
  { name: 'auto without unshare: the process runtime, saying why', runtime: 'auto', bare: true, want: /the sandbox runtime is not possible on this machine \([\w-]+ is not installed[^)]*\)\): using the process runtime/, exits: false },
  { name: 'sandbox without unshare: refuses to start', runtime: 'sandbox', bare: true, want: /--runtime=sandbox is not possible on this machine: [\w-]+ is not installed/, exits: true },
])('$name', async ({ runtime, bare, want, exits }) => {
  const { out, exitCode } = await agentOutput(runtime, bare ? bareBin : process.env.PATH ?? '', want);
  expect(out).toMatch(want);
  if (exits) expect(exitCode).not.toBe(0);
  else expect(exitCode).toBeNull(); // still running when stopped
  if (runtime === 'auto') expect(out).not.toMatch(bare ? /sandbox runtime: each pod/ : /not possible on this machine/);
});
