import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, readlinkSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { formatTime } from '@orch/apimachinery';
import type { Container, ContainerStateTerminated, Probe } from '../../api/types';
import type { ExitStatus, StreamOptions, StreamTarget } from '../../streaming/remote-command';
import type { ContainerKind, ContainerRuntimeState } from '../runtime';
import { ContainerLogWriter, pruneInstanceLogs, type LogWriterOptions } from './logs';
import { ProbeWorker, runProbe, type ProbeKind, type ProbeTarget } from './probes';
import { shq } from '../sandbox/sandbox';
import {
  SHIM,
  SHIM_SCRIPT,
  STDIN_SHIM_SCRIPT,
  firstChild,
  killStdinHolder,
  openFifoForContainer,
  openStdinWriter,
  stdinHolderPid,
  prepareRunDir,
  processStartTicks,
  readExitCode,
  readFifo,
  resolveExecutable,
  runFiles,
  shimAlive,
  signalGroup as signalProcessGroup,
  writeInstanceState,
  type InstanceState,
} from './shim';

/** How to run one instance of a container. */
export interface LaunchSpec {
  /** What is spawned on the host (in the sandbox: the namespace wrapper around the container's command). */
  command: string[];
  env: Record<string, string>;
  /** Working directory of the spawned process, on the host. */
  cwd: string;
  /** The container's root directory (mount points, termination-log). */
  root: string;
  /** Where the termination message is read after an exit (default `<root>/dev/termination-log`). */
  terminationLog?: string;
  /**
   * Why the process ended, when the runtime knows better than the exit code: OOMKilled (from
   * the cgroup), with the exit code to report.
   */
  exitReason?(exitCode: number): Promise<{ reason: string; exitCode: number } | undefined>;
}

/** Who gets a running instance's output (attach sessions). */
type OutputListener = (stream: 'stdout' | 'stderr', data: Buffer) => void;

/** One run of a container's process (see shim.ts). */
interface Instance {
  /** The shim, when this agent started it (an adopted instance has none). */
  child?: ChildProcess;
  /** The agent's end of the container's stdin FIFO (`stdin` or `tty`), until stdinOnce ends it. */
  stdin?: Socket;
  launch?: LaunchSpec;
  /** Attach sessions receiving its output. */
  listeners: Set<OutputListener>;
  /** The shim's pid: leader of the container's process group. */
  pgid?: number;
  /** The container's own process. */
  pid?: number;
  /** Readers of the stdout and stderr FIFOs. */
  output: { ended: Promise<void>; close(): void }[];
  /** An adopted instance's end is noticed by polling (this agent is not the shim's parent). */
  poll?: NodeJS.Timeout;
  startedAt: string;
  /** Set once the process exited (or could not start). */
  exit?: ContainerStateTerminated;
  log: ContainerLogWriter;
  probes: ProbeWorker[];
  /** Startup probe passed (true without one). */
  started: boolean;
  /** Readiness probe passing (true without one, once started). */
  ready: boolean;
  /** Why the agent decided to kill this instance (liveness or startup failure). */
  unhealthy?: string;
  killing: boolean;
  killTimer?: NodeJS.Timeout;
  target: ProbeTarget;
  /** Resolves once `exit` is set. */
  ended: Promise<void>;
  markEnded: () => void;
}

/** A fresh instance record (not started yet). */
function newInstance(startedAt: string, log: ContainerLogWriter, started: boolean, target: ProbeTarget): Instance {
  let markEnded!: () => void;
  const ended = new Promise<void>((r) => (markEnded = r));
  return { startedAt, log, output: [], probes: [], started, ready: false, killing: false, target, ended, markEnded, listeners: new Set() };
}

/** How often an adopted instance is checked for its end. */
const ADOPTED_POLL_MS = 250;

/** The container's end as the shim reports it: its exit code, 128+n for signal n. */
function shimEnd(code: number | null, signal: NodeJS.Signals | null): { exitCode: number; signal?: number } {
  if (signal) {
    const n = constants.signals[signal] ?? 0;
    return { exitCode: 128 + n, ...(n ? { signal: n } : {}) };
  }
  const exitCode = code ?? 0;
  return exitCode > 128 && exitCode < 160 ? { exitCode, signal: exitCode - 128 } : { exitCode };
}

export interface ContainerHooks {
  /** Something changed that the pod's status or sync depends on. */
  changed(): void;
  /** Records an Event about the container (upstream kubelet reasons: Started, Unhealthy, BackOff, ...). */
  event(type: 'Normal' | 'Warning', reason: string, action: string, note: string): void;
  /** The container's run directory (shim.ts): FIFOs, exit file, state.json. */
  runDir: string;
}

/** Back-off state of restarts (upstream flowcontrol.Backoff entry). */
interface Backoff {
  lastUpdate: number;
  delayMs: number;
}

/** The result of asking to (re)start: started, or waiting for `waitMs` more. */
export type StartDecision = { started: true } | { started: false; waitMs: number };

/**
 * One container of a pod and its successive instances: starts the process in its own process
 * group with its env, working dir and log file; runs its probes; kills it gracefully
 * (preStop hook, SIGTERM, SIGKILL after the grace period); keeps restartCount, the last
 * termination and the restart back-off. Exits and probe flips are reported through
 * `hooks.changed()`; deciding what to do about them is the pod sync's job.
 */
export class ContainerRecord {
  restartCount = 0;
  lastTerminated?: ContainerStateTerminated;
  /** Why the container cannot start now (no instance, or before the next restart). */
  waiting?: { reason: string; message?: string };
  private instance?: Instance;
  private backoff?: Backoff;

  constructor(
    readonly spec: Container,
    readonly kind: ContainerKind,
    private readonly logDir: string,
    private readonly logOptions: LogWriterOptions,
    private readonly hooks: ContainerHooks,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  get init(): boolean {
    return this.kind === 'init';
  }

  get running(): boolean {
    return !!this.instance && !this.instance.exit;
  }

  get exited(): ContainerStateTerminated | undefined {
    return this.instance?.exit;
  }

  /** True once an instance was started in this agent's life or restored as done. */
  get everStarted(): boolean {
    return !!this.instance;
  }

  /** The live instance's log writer (for following), if running. */
  get logWriter(): ContainerLogWriter | undefined {
    return this.instance && !this.instance.log.isClosed ? this.instance.log : undefined;
  }

  get pid(): number | undefined {
    return this.running ? this.instance?.pid : undefined;
  }

  /** The live instance's process id and how it was launched (exec runs beside it), if running. */
  get live(): { pid: number; launch: LaunchSpec } | undefined {
    const inst = this.instance;
    return inst && !inst.exit && inst.pid !== undefined && inst.launch ? { pid: inst.pid, launch: inst.launch } : undefined;
  }

  /**
   * Attaches a session to the live instance's standard streams (upstream attach): its output
   * from now on, stdin when the container keeps one open (`stdin: true`), terminal resizes.
   * The session is done when the instance ends; aborting detaches. With `stdinOnce` the
   * container's stdin closes when the first session's input ends or it detaches.
   */
  attach(opts: StreamOptions): StreamTarget {
    const inst = this.instance;
    if (!inst || inst.exit || inst.pid === undefined) throw new Error(`container ${this.name} is not running`);
    const stdout = opts.stdout ? new PassThrough() : undefined;
    const stderr = opts.stderr ? new PassThrough() : undefined;
    const listener: OutputListener = (stream, data) => (stream === 'stdout' ? stdout : (stderr ?? (this.spec.tty ? stdout : undefined)))?.write(data);
    inst.listeners.add(listener);
    const closeStdinOnce = () => {
      if (!this.spec.stdinOnce) return;
      if (inst.stdin) {
        inst.stdin.end();
        inst.stdin = undefined;
        killStdinHolder(this.hooks.runDir);
      }
    };
    let detached = false;
    const detach = () => {
      if (detached) return;
      detached = true;
      inst.listeners.delete(listener);
      stdout?.end();
      stderr?.end();
    };
    // Input typed after a resize reaches the terminal after it: writes wait for pending resizes.
    let resized: Promise<void> = Promise.resolve();
    const stdin = opts.stdin && inst.stdin ? new PassThrough().on('data', (d: Buffer) => void resized.then(() => inst.stdin?.write(d))).on('end', () => void resized.then(closeStdinOnce)) : undefined;
    const done: Promise<ExitStatus> = inst.ended.then(() => {
      detach();
      return { exitCode: 0 };
    });
    return {
      stdin,
      stdout,
      stderr,
      resize: (size) => {
        if (this.spec.tty && inst.pid !== undefined && !inst.exit) resized = resized.then(() => resizeTerminal(inst.pid!, size.width, size.height));
      },
      done,
      abort: () => {
        detach();
        closeStdinOnce();
      },
    };
  }

  /** A kill of the live instance is under way. */
  get stopping(): boolean {
    return this.running && this.instance!.killing;
  }

  /** Why the live instance must be killed (liveness/startup failure), if it must. */
  get unhealthy(): string | undefined {
    return this.running && !this.instance!.killing ? this.instance!.unhealthy : undefined;
  }

  /** Restores what an earlier agent reported (restart after an agent restart). */
  restore(restartCount: number, last: ContainerStateTerminated | undefined, done?: ContainerStateTerminated): void {
    this.restartCount = restartCount;
    this.lastTerminated = last;
    if (done) {
      const inst = newInstance(done.startedAt ?? formatTime(new Date()), closedLog(this.logPath(restartCount), this.logOptions), false, { podIP: '', env: {}, cwd: '', ports: [] });
      inst.exit = done;
      inst.markEnded();
      this.instance = inst;
    }
  }

  /**
   * Starts the next instance unless the restart back-off says to wait (upstream: the first
   * restart is immediate, then 10 s doubling to 5 min; an entry idle for twice the maximum is
   * forgotten). A restart moves the previous end to lastTerminated and counts it.
   */
  tryStart(launch: () => Promise<LaunchSpec>, target: Omit<ProbeTarget, 'env' | 'cwd'>, backoff: { initialMs: number; maxMs: number }, podRef: string): Promise<StartDecision> | StartDecision {
    const now = Date.now();
    let b = this.backoff;
    if (b && now - b.lastUpdate > 2 * backoff.maxMs) b = undefined;
    if (this.instance) {
      if (b && now < b.lastUpdate + b.delayMs) {
        const waitMs = b.lastUpdate + b.delayMs - now;
        this.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${goDuration(b.delayMs)} restarting failed container=${this.name} pod=${podRef}` };
        this.hooks.event('Warning', 'BackOff', 'StartContainer', `Back-off restarting failed container ${this.name} in pod ${podRef}`);
        return { started: false, waitMs };
      }
      this.backoff = { lastUpdate: now, delayMs: b ? Math.min(b.delayMs * 2, backoff.maxMs) : backoff.initialMs };
    }
    return this.start(launch, target);
  }

  private async start(launch: () => Promise<LaunchSpec>, target: Omit<ProbeTarget, 'env' | 'cwd'>): Promise<StartDecision> {
    const spec = await launch();
    const previous = this.instance;
    if (previous) {
      this.lastTerminated = previous.exit;
      this.restartCount++;
      this.stopProbes(previous);
    }
    this.waiting = undefined;
    await pruneInstanceLogs(this.logDir, this.restartCount - 1);
    // A runtime that names its own termination log writes it fresh for the instance.
    if (!spec.terminationLog) await rm(join(spec.root, 'dev', 'termination-log'), { force: true });
    const log = new ContainerLogWriter(this.logPath(this.restartCount), this.logOptions);
    const startedAt = formatTime(new Date());
    const probeTarget: ProbeTarget = { ...target, env: spec.env, cwd: spec.cwd };
    const inst = newInstance(startedAt, log, !this.spec.startupProbe, probeTarget);
    inst.ready = inst.started && !this.spec.readinessProbe;
    this.instance = inst;
    await mkdir(spec.cwd, { recursive: true });
    // The kubelet's container lifecycle events (the process runtime has no image to pull).
    this.hooks.event('Normal', 'Pulled', 'PullImage', `Container image "${this.spec.image ?? ''}" already present on machine`);
    this.hooks.event('Normal', 'Created', 'CreateContainer', `Created container ${this.name}`);
    inst.launch = spec;
    const found = resolveExecutable(spec.command[0], spec.env.PATH, spec.cwd);
    if (!found.ok) {
      this.failedToStart(inst, found.reason);
      return { started: true };
    }
    const files = runFiles(this.hooks.runDir);
    // A terminal gets a stdin FIFO too: it is the terminal's input.
    const withStdin = !!(this.spec.stdin || this.spec.tty);
    await prepareRunDir(this.hooks.runDir, withStdin);
    this.readOutput(inst, files);
    const stdout = openFifoForContainer(files.stdout);
    const stderr = openFifoForContainer(files.stderr);
    let child: ChildProcess;
    try {
      const shim = withStdin ? ['-c', STDIN_SHIM_SCRIPT, files.exit, files.stdin] : ['-c', SHIM_SCRIPT, files.exit];
      const command = this.spec.tty ? inTerminal(spec.command) : spec.command;
      child = spawn(SHIM, [...shim, ...command], { cwd: spec.cwd, env: spec.env, stdio: ['ignore', stdout, stderr], detached: true });
    } catch (err) {
      this.failedToStart(inst, (err as Error).message);
      return { started: true };
    } finally {
      // The child has its copies (spawn forks synchronously): EOF comes once the container's close.
      closeSync(stdout);
      closeSync(stderr);
    }
    inst.child = child;
    inst.pgid = child.pid;
    if (withStdin) inst.stdin = openStdinWriter(files.stdin);
    child.once('error', (err) => {
      if (inst.pid === undefined) this.failedToStart(inst, err.message);
    });
    child.once('spawn', () => void this.onSpawn(inst, child.pid!));
    child.once('exit', (code, signal) => void this.onExit(inst, spec, shimEnd(code, signal)));
    return { started: true };
  }

  /** The shim runs: find the container under it, record the instance for a later agent, start probes. */
  private async onSpawn(inst: Instance, shimPid: number): Promise<void> {
    // With stdin the shim starts its stdin holder first (and writes its pid): the container is its other child;
    // in a terminal, the child of `script` under it.
    const withStdin = !!(this.spec.stdin || this.spec.tty);
    const holder = () => (withStdin ? stdinHolderPid(this.hooks.runDir) : undefined);
    const container = () => {
      if (withStdin && holder() === undefined) return undefined;
      const child = firstChild(shimPid, holder());
      return this.spec.tty && child !== undefined ? firstChild(child) : child;
    };
    let pid = container();
    for (let i = 0; pid === undefined && i < 50 && !inst.exit; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pid = container();
    }
    if (inst.exit) return;
    inst.pid = pid ?? shimPid;
    const shimStartTicks = processStartTicks(shimPid);
    if (shimStartTicks !== undefined) {
      const state: InstanceState = { shimPid, shimStartTicks, pid: inst.pid, startedAt: inst.startedAt, restartCount: this.restartCount, podIP: inst.target.podIP };
      await writeInstanceState(this.hooks.runDir, state).catch(() => undefined);
      if (inst.exit) await rm(runFiles(this.hooks.runDir).state, { force: true }); // it ended meanwhile
    }
    this.startProbes(inst);
    this.hooks.event('Normal', 'Started', 'StartContainer', `Started container ${this.name}`);
    this.hooks.changed();
  }

  /** Copies what the container writes to its stdout and stderr FIFOs into the instance's log. */
  private readOutput(inst: Instance, files: ReturnType<typeof runFiles>): void {
    const output = (stream: 'stdout' | 'stderr') => (d: Buffer) => {
      inst.log.write(stream, d);
      for (const l of inst.listeners) l(stream, d);
    };
    inst.output = [readFifo(files.stdout, output('stdout')), readFifo(files.stderr, output('stderr'))];
    void Promise.all(inst.output.map((o) => o.ended)).then(() => inst.log.close());
  }

  /**
   * Takes over an instance an earlier agent started that is still running (shim.ts): no new
   * process, restartCount and startedAt as they were, no Started event. Output is read again
   * from its FIFOs (what it wrote meanwhile included), probes start over, and its end is
   * noticed by polling, with the exit code the shim wrote.
   */
  adopt(state: InstanceState, spec: LaunchSpec, target: Omit<ProbeTarget, 'env' | 'cwd'>): void {
    this.restartCount = state.restartCount;
    this.waiting = undefined;
    const log = new ContainerLogWriter(this.logPath(state.restartCount), this.logOptions);
    const inst = newInstance(state.startedAt, log, !this.spec.startupProbe, { ...target, env: spec.env, cwd: spec.cwd });
    inst.ready = inst.started && !this.spec.readinessProbe;
    inst.pgid = state.shimPid;
    inst.pid = state.pid;
    // exec and attach need it too: an adopted container is as live as one this agent started.
    inst.launch = spec;
    this.instance = inst;
    this.readOutput(inst, runFiles(this.hooks.runDir));
    if (this.spec.stdin || this.spec.tty) inst.stdin = openStdinWriter(runFiles(this.hooks.runDir).stdin);
    inst.poll = setInterval(() => {
      if (shimAlive(state)) return;
      clearInterval(inst.poll);
      const code = readExitCode(this.hooks.runDir);
      void this.onExit(inst, spec, code === undefined ? { exitCode: 137, signal: 9 } : shimEnd(code, null));
    }, ADOPTED_POLL_MS);
    inst.poll.unref();
    this.startProbes(inst);
  }

  private failedToStart(inst: Instance, reason: string): void {
    inst.exit = { exitCode: 128, reason: 'StartError', message: `failed to start container "${this.name}": ${reason}`, startedAt: inst.startedAt, finishedAt: formatTime(new Date()) };
    for (const o of inst.output) o.close();
    inst.log.close();
    inst.markEnded();
    this.hooks.event('Warning', 'Failed', 'StartContainer', `Error: ${inst.exit.message}`);
    this.hooks.changed();
  }

  private async onExit(inst: Instance, spec: LaunchSpec, end: { exitCode: number; signal?: number }): Promise<void> {
    if (inst.exit) return;
    this.stopProbes(inst);
    if (inst.killTimer) clearTimeout(inst.killTimer);
    if (inst.poll) clearInterval(inst.poll);
    inst.stdin?.destroy();
    // What the container started dies with it (upstream: its PID namespace ends).
    if (inst.pgid !== undefined) signalProcessGroup(inst.pgid, 'SIGKILL');
    const logPath = spec.terminationLog ?? join(spec.root, 'dev', 'termination-log');
    const [message, why] = await Promise.all([readFile(logPath, 'utf8').then((t) => t.slice(0, 4096), () => undefined), spec.exitReason?.(end.exitCode).catch(() => undefined)]);
    const exitCode = why?.exitCode ?? end.exitCode;
    const signo = why && exitCode > 128 ? exitCode - 128 : end.signal;
    inst.exit = {
      exitCode,
      ...(signo ? { signal: signo } : {}),
      reason: why?.reason ?? (exitCode === 0 ? 'Completed' : 'Error'),
      ...(message ? { message } : {}),
      startedAt: inst.startedAt,
      finishedAt: formatTime(new Date()),
      ...(inst.pid ? { containerID: `process://${inst.pid}` } : {}),
    };
    inst.markEnded();
    await rm(runFiles(this.hooks.runDir).state, { force: true });
    // Output ends at EOF; a grandchild holding the FIFOs must not keep the log open forever.
    setTimeout(() => {
      for (const o of inst.output) o.close();
      inst.log.close();
    }, 2000).unref();
    this.hooks.changed();
  }

  private startProbes(inst: Instance): void {
    if (this.spec.startupProbe) this.addProbe(inst, 'startup', this.spec.startupProbe);
    else this.startRunningProbes(inst);
  }

  private startRunningProbes(inst: Instance): void {
    if (this.spec.livenessProbe) this.addProbe(inst, 'liveness', this.spec.livenessProbe);
    if (this.spec.readinessProbe) this.addProbe(inst, 'readiness', this.spec.readinessProbe);
    else inst.ready = true;
  }

  private addProbe(inst: Instance, kind: ProbeKind, probe: Probe): void {
    const w = new ProbeWorker(kind, probe, inst.target, (k, ok, message) => this.onProbe(inst, k, ok, message));
    inst.probes.push(w);
    w.start();
  }

  /** A probe result flipped: startup success starts the other probes; failures mark the instance unhealthy. */
  private onProbe(inst: Instance, kind: ProbeKind, ok: boolean, message?: string): void {
    if (inst.exit || inst.killing) return;
    if (!ok) this.hooks.event('Warning', 'Unhealthy', 'ProbeContainer', `${kind[0].toUpperCase()}${kind.slice(1)} probe failed: ${message ?? ''}`.trim());
    if (kind === 'startup') {
      if (ok) {
        inst.started = true;
        for (const p of inst.probes) if (p.kind === 'startup') p.stop();
        inst.probes = inst.probes.filter((p) => p.kind !== 'startup');
        this.startRunningProbes(inst);
      } else inst.unhealthy = `Startup probe failed: ${message ?? ''}`.trim();
    } else if (kind === 'liveness') {
      if (!ok) inst.unhealthy = `Liveness probe failed: ${message ?? ''}`.trim();
    } else {
      inst.ready = ok;
    }
    this.hooks.changed();
  }

  private stopProbes(inst: Instance): void {
    for (const p of inst.probes) p.stop();
    inst.probes = [];
  }

  /**
   * Stops the live instance: the preStop hook (bounded by the grace period), SIGTERM to the
   * process group, SIGKILL when `graceSeconds` have passed. Idempotent; the exit is reported
   * through `changed()`. A shorter grace period given later shortens a kill under way.
   */
  kill(graceSeconds: number): void {
    const inst = this.instance;
    if (!inst || inst.exit || inst.pgid === undefined) return;
    const graceMs = Math.max(0, graceSeconds) * 1000;
    if (inst.killing) {
      if (graceMs === 0) signalGroup(inst, 'SIGKILL');
      return;
    }
    inst.killing = true;
    inst.ready = false;
    this.stopProbes(inst);
    inst.killTimer = setTimeout(() => signalGroup(inst, 'SIGKILL'), graceMs);
    inst.killTimer.unref?.();
    void this.preStop(inst, graceMs).then(() => {
      if (!inst.exit) signalGroup(inst, graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
    });
  }

  private async preStop(inst: Instance, graceMs: number): Promise<void> {
    const hook = this.spec.lifecycle?.preStop;
    if (!hook || graceMs === 0) return;
    const bounded = <T>(p: Promise<T>) => Promise.race([p, new Promise<void>((r) => setTimeout(r, graceMs).unref())]);
    if (hook.sleep) await bounded(new Promise<void>((r) => setTimeout(r, hook.sleep!.seconds * 1000)));
    else if (hook.exec || hook.httpGet) await bounded(runProbe({ exec: hook.exec, httpGet: hook.httpGet, timeoutSeconds: Math.ceil(graceMs / 1000) }, inst.target));
  }

  /** The container as the status needs it. */
  state(podRestartPolicyAllows: boolean): ContainerRuntimeState {
    const inst = this.instance;
    const base = { name: this.name, init: this.init, ...(this.kind === 'ephemeral' ? { ephemeral: true } : {}), restartCount: this.restartCount, ...(this.lastTerminated ? { lastTerminated: this.lastTerminated } : {}) };
    if (!inst) return { ...base, waiting: this.waiting ?? { reason: 'ContainerCreating' }, ready: false, started: false };
    const containerID = inst.pid ? `process://${inst.pid}` : undefined;
    if (!inst.exit) {
      if (inst.pid === undefined) return { ...base, waiting: { reason: 'ContainerCreating' }, ready: false, started: false };
      return { ...base, running: { startedAt: inst.startedAt }, ready: inst.ready, started: inst.started, containerID };
    }
    if (this.waiting && podRestartPolicyAllows) {
      return { ...base, waiting: this.waiting, lastTerminated: inst.exit, ready: false, started: false, containerID };
    }
    return { ...base, terminated: inst.exit, ready: false, started: false, containerID };
  }

  /** Stops probes and timers without touching the process (used after it exited). */
  dispose(): void {
    if (this.instance) {
      this.stopProbes(this.instance);
      if (this.instance.killTimer) clearTimeout(this.instance.killTimer);
      if (this.instance.poll) clearInterval(this.instance.poll);
      this.instance.stdin?.destroy();
      for (const o of this.instance.output) o.close();
      this.instance.log.close();
    }
  }

  /** Resolves when the current instance has ended (at once when there is none). */
  async waitExit(): Promise<void> {
    await this.instance?.ended;
  }

  private logPath(restartCount: number): string {
    return join(this.logDir, `${restartCount}.log`);
  }

  get logDirectory(): string {
    return this.logDir;
  }
}

/**
 * A command in a terminal of its own: util-linux `script` holds the pseudo-terminal (its
 * input is the container's stdin FIFO, its output the stdout FIFO), so the terminal outlives
 * the agent like the shim does; echo on, 80x24 until the first resize.
 */
export function inTerminal(command: string[]): string[] {
  return ['script', '-q', '-e', '-E', 'always', '-c', `stty rows 24 cols 80 2>/dev/null; exec ${command.map(shq).join(' ')}`, '/dev/null'];
}

/** Sets the size of the terminal a container's process reads (its stdin); the kernel sends SIGWINCH. Resolves when done. */
function resizeTerminal(pid: number, columns: number, rows: number): Promise<void> {
  let tty: string;
  try {
    tty = readlinkSync(`/proc/${pid}/fd/0`);
  } catch {
    return Promise.resolve();
  }
  if (!tty.startsWith('/dev/pts/')) return Promise.resolve();
  return new Promise((resolve) => {
    const stty = spawn('stty', ['-F', tty, 'rows', String(rows), 'cols', String(columns)], { stdio: 'ignore' });
    stty.once('error', () => resolve());
    stty.once('exit', () => resolve());
  });
}

/** A duration as Go prints it (300ms, 10s, 1m20s), for messages users know from upstream. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m${+(s - m * 60).toFixed(3)}s`;
}

function signalGroup(inst: Instance, signal: NodeJS.Signals): void {
  if (inst.exit || inst.pgid === undefined) return;
  if (signalProcessGroup(inst.pgid, signal)) return;
  try {
    inst.child?.kill(signal);
  } catch {
    // already gone
  }
}

/** A writer that is already closed, standing for the log of a restored, finished instance. */
function closedLog(path: string, opts: LogWriterOptions): ContainerLogWriter {
  const w = new ContainerLogWriter(path, opts);
  w.close();
  return w;
}
