import { execFile } from 'node:child_process';
import { accessSync, constants, openSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * What lets a container outlive its node agent (upstream: containerd-shim), so that an agent
 * killed with -9 and started again adopts its running pods instead of restarting them:
 *
 * - the **shim**: every container runs as the child of `/bin/sh -c SHIM_SCRIPT <exit file>
 *   <command...>`, which waits for it and writes its exit code to the exit file, so the code
 *   survives the agent. The shim leads the container's process group (signals go to the group);
 *   it catches termination signals only to outlive the container and record its end (exec
 *   resets caught signals, so the container gets default dispositions); its own messages
 *   (sh reports a child killed by a signal) go to /dev/null, not into the container's log;
 * - **FIFOs** for stdout and stderr in the container's run directory: the container holds them
 *   open read-write, so it never gets SIGPIPE while no agent reads, and the kernel keeps what
 *   it wrote (up to the pipe size, 64 KiB; then its writes block) until an agent reads again;
 * - **state.json**: shim and container pids, the shim's start time (a reused pid is told
 *   apart), startedAt and restartCount of the instance, the pod IP.
 *
 * - a **stdin FIFO** for a container with `stdin: true` (not a terminal): the container reads
 *   it; a holder process of the shim (`sleep`, in the container's process group, started
 *   before the container, its pid in `stdin.holder`) keeps it open for writing, so the container sees no end of input while no agent runs; the agent writes
 *   what attach sessions send, and ends the input (stdinOnce) by killing the holder (its pid
 *   is in `stdin.holder`) and closing its own end.
 *
 * Files of one container: `<pod dir>/run/<init|main>-<name>/{state.json,exit,stdout,stderr,stdin,stdin.holder}`.
 * A container in a terminal (`tty: true`) is not run through the shim (see container.ts).
 */
export const SHIM_SCRIPT = 'trap : TERM INT HUP QUIT USR1 USR2; exec 3>&2 2>/dev/null; (exec "$@" 2>&3 3>&-); rc=$?; echo $rc > "$0"; exit $rc';

/** SHIM_SCRIPT for a container with stdin: `$1` is the stdin FIFO, the command follows. */
export const STDIN_SHIM_SCRIPT =
  'trap : TERM INT HUP QUIT USR1 USR2; exec 3>&2 2>/dev/null; f=$1; shift; sleep 2147483647 0<>"$f" >/dev/null 3>&- & echo $! > "$f.holder"; (exec "$@" <"$f" 2>&3 3>&-); rc=$?; kill $! 2>/dev/null; echo $rc > "$0"; exit $rc';
export const SHIM = '/bin/sh';

/** The on-disk record of a running instance (state.json). */
export interface InstanceState {
  /** The shim: leader of the container's process group. */
  shimPid: number;
  /** The shim's start time in clock ticks after boot (/proc/<pid>/stat field 22). */
  shimStartTicks: number;
  /** The container's own process (its containerID). */
  pid: number;
  startedAt: string;
  restartCount: number;
  podIP: string;
}

/** The files of one container's run directory. */
export function runFiles(runDir: string): { state: string; exit: string; stdout: string; stderr: string; stdin: string; stdinHolder: string } {
  return { state: join(runDir, 'state.json'), exit: join(runDir, 'exit'), stdout: join(runDir, 'stdout'), stderr: join(runDir, 'stderr'), stdin: join(runDir, 'stdin'), stdinHolder: join(runDir, 'stdin.holder') };
}

const execFileAsync = promisify(execFile);

/** A fresh run directory with new stdout and stderr FIFOs (and a stdin FIFO when asked) and no exit file. */
export async function prepareRunDir(runDir: string, withStdin = false): Promise<void> {
  const f = runFiles(runDir);
  await mkdir(runDir, { recursive: true });
  await Promise.all([f.exit, f.state, f.stdout, f.stderr, f.stdin, f.stdinHolder].map((p) => rm(p, { force: true })));
  await execFileAsync('mkfifo', ['-m', '600', f.stdout, f.stderr, ...(withStdin ? [f.stdin] : [])]);
}

/**
 * The agent's end of a container's stdin FIFO (opened read-write, so it never blocks and never
 * fails for want of a reader); undefined when the FIFO is gone.
 */
export function openStdinWriter(path: string): Socket | undefined {
  try {
    const socket = new Socket({ fd: openSync(path, constants.O_RDWR | constants.O_NONBLOCK), readable: false, writable: true });
    socket.on('error', () => socket.destroy());
    return socket;
  } catch {
    return undefined;
  }
}

/**
 * Ends a shim container's input (stdinOnce): kills the holder that keeps the stdin FIFO open;
 * the container reads to the end once the agent's own end is closed too.
 */
export function killStdinHolder(runDir: string): void {
  const pid = stdinHolderPid(runDir);
  try {
    if (pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0')) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Opens a FIFO read-write: the end the container's stdout or stderr is (open never blocks). */
export function openFifoForContainer(path: string): number {
  return openSync(path, constants.O_RDWR);
}

/**
 * Reads a FIFO without blocking a thread; `onData` gets every chunk, `ended` resolves at EOF
 * (every writer closed: the container and what it started are gone) or after `close()`.
 */
export function readFifo(path: string, onData: (chunk: Buffer) => void): { ended: Promise<void>; close(): void } {
  const socket = new Socket({ fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', onData);
  socket.on('error', () => socket.destroy());
  socket.on('end', () => socket.destroy());
  return { ended, close: () => socket.destroy() };
}

/** The start time of a process in clock ticks after boot; undefined when it does not exist. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: count fields after its closing ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined; // a zombie has ended
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** The first child of a process (the shim's container) other than `except`, if it has one yet. */
export function firstChild(pid: number, except?: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    return children.find((c) => c !== except);
  } catch {
    return undefined;
  }
}

/** The pid of the stdin holder the shim started (once it wrote it). */
export function stdinHolderPid(runDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(runFiles(runDir).stdinHolder, 'utf8').trim());
    return pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the shim recorded in `state` is still the process with that pid. */
export function shimAlive(state: InstanceState): boolean {
  return processStartTicks(state.shimPid) === state.shimStartTicks;
}

/** The exit code the shim wrote, if it has. */
export function readExitCode(runDir: string): number | undefined {
  try {
    const text = readFileSync(runFiles(runDir).exit, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

export async function writeInstanceState(runDir: string, state: InstanceState): Promise<void> {
  await writeFile(runFiles(runDir).state, JSON.stringify(state));
}

export async function readInstanceState(runDir: string): Promise<InstanceState | undefined> {
  try {
    const s = JSON.parse(await readFile(runFiles(runDir).state, 'utf8')) as InstanceState;
    return Number.isInteger(s.shimPid) && s.shimPid > 1 && Number.isInteger(s.shimStartTicks) ? s : undefined;
  } catch {
    return undefined; // none, or cut short by a crash while it was written: nothing to adopt
  }
}

/** What an earlier agent left in a pod's run directories, by container key (`init/x`, `main/y`). */
export async function leftoverInstances(podDir: string): Promise<Map<string, { runDir: string; state: InstanceState }>> {
  const out = new Map<string, { runDir: string; state: InstanceState }>();
  const runRoot = join(podDir, 'run');
  for (const entry of await readdir(runRoot).catch(() => [] as string[])) {
    const m = /^(init|main)-(.+)$/.exec(entry);
    if (!m) continue;
    const runDir = join(runRoot, entry);
    const state = await readInstanceState(runDir);
    if (state) out.set(`${m[1]}/${m[2]}`, { runDir, state });
  }
  return out;
}

/** Sends a signal to a process group; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the executable the shim will run, as exec would (a path, or a search of PATH), so a
 * missing binary is a StartError before anything starts, not exit code 127 from sh.
 */
export function resolveExecutable(cmd: string, path: string | undefined, cwd: string): { ok: true } | { ok: false; reason: string } {
  const usable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return usable(cmd.startsWith('/') ? cmd : join(cwd, cmd)) ? { ok: true } : { ok: false, reason: `exec: "${cmd}": no such file or not executable` };
  for (const dir of (path ?? '').split(delimiter)) if (dir && usable(join(dir, cmd))) return { ok: true };
  return { ok: false, reason: `exec: "${cmd}": executable file not found in $PATH` };
}
