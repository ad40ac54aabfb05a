import { spawn as spawnChild } from 'node:child_process';
import { constants } from 'node:os';
import { PassThrough, Writable, type Readable } from 'node:stream';
import * as pty from 'node-pty';

/** How a process ended: an exit code, or the signal that killed it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A started host process (a container's or an exec'd command), whether it has pipes or a
 * pseudo-terminal. The process leads its own process group (its own session with a
 * terminal), so signals reach everything it started.
 */
export interface ProcessHandle {
  readonly pid: number;
  /** Present when stdin was asked for. */
  readonly stdin?: Writable;
  /** Standard output (with a terminal: everything the terminal shows). */
  readonly stdout: Readable;
  /** Standard error (absent with a terminal). */
  readonly stderr?: Readable;
  /** Resizes the terminal (no-op without one). */
  resize(columns: number, rows: number): void;
  /** Resolves once the process exited. */
  readonly exited: Promise<ProcessExit>;
  /** Signals the process group (the process alone if the group is gone). */
  signal(sig: NodeJS.Signals): void;
}

export interface SpawnOptions {
  env: Record<string, string>;
  cwd: string;
  /** Keep a pipe (or the terminal's input) open for stdin. */
  stdin: boolean;
  /** Run in a pseudo-terminal of this size. */
  tty?: { columns: number; rows: number };
}

/** The executable could not be started (not found, not executable...). */
export class SpawnError extends Error {
  override name = 'SpawnError';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const DEFAULT_TERMINAL = { columns: 80, rows: 24 };

/**
 * Starts `argv` as a new process group, with pipes or in a pseudo-terminal (node-pty).
 * Rejects with {@link SpawnError} when the executable cannot be started.
 */
export function spawnProcess(argv: string[], opts: SpawnOptions): Promise<ProcessHandle> {
  return opts.tty ? spawnInTerminal(argv, opts, opts.tty) : spawnWithPipes(argv, opts);
}

function spawnWithPipes(argv: string[], opts: SpawnOptions): Promise<ProcessHandle> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawnChild(argv[0], argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      reject(new SpawnError((err as Error).message, (err as NodeJS.ErrnoException).code));
      return;
    }
    const exited = new Promise<ProcessExit>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) reject(new SpawnError(err.code === 'ENOENT' ? `exec: "${argv[0]}": executable file not found in $PATH` : err.message, err.code));
    });
    child.stdin?.on('error', () => undefined);
    child.once('spawn', () => {
      const pid = child.pid!;
      resolve({
        pid,
        stdin: child.stdin ?? undefined,
        stdout: child.stdout!,
        stderr: child.stderr!,
        resize: () => undefined,
        exited,
        signal: (sig) => signalGroup(pid, sig),
      });
    });
  });
}

async function spawnInTerminal(argv: string[], opts: SpawnOptions, size: { columns: number; rows: number }): Promise<ProcessHandle> {
  let term: pty.IPty;
  try {
    term = pty.spawn(argv[0], argv.slice(1), {
      name: opts.env.TERM || 'xterm',
      cols: size.columns || DEFAULT_TERMINAL.columns,
      rows: size.rows || DEFAULT_TERMINAL.rows,
      cwd: opts.cwd,
      env: opts.env,
      encoding: null,
    });
  } catch (err) {
    throw new SpawnError((err as Error).message);
  }
  const stdout = new PassThrough();
  term.onData((d: string | Buffer) => stdout.write(typeof d === 'string' ? Buffer.from(d) : d));
  const exited = new Promise<ProcessExit>((resolve) =>
    term.onExit(({ exitCode, signal }) => {
      stdout.end();
      resolve(signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null });
    }),
  );
  const stdin = opts.stdin
    ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          try {
            term.write(chunk);
          } catch {
            // the terminal is gone
          }
          cb();
        },
        final(cb) {
          // End of input on a terminal is the EOF character (as a terminal user types it).
          try {
            term.write('\x04');
          } catch {
            // gone
          }
          cb();
        },
      })
    : undefined;
  return {
    pid: term.pid,
    stdin,
    stdout,
    resize: (columns, rows) => {
      try {
        if (columns > 0 && rows > 0) term.resize(columns, rows);
      } catch {
        // the terminal is gone
      }
    },
    exited,
    signal: (sig) => {
      signalGroup(term.pid, sig);
      // Processes that lead sessions of their own (setsid in a namespace) go with the terminal.
      if (sig === 'SIGKILL') (term as pty.IPty & { destroy?: () => void }).destroy?.();
    },
  };
}

function signalName(n: number): NodeJS.Signals | null {
  const names = Object.entries(constants.signals as Record<string, number>);
  return (names.find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined) ?? 'SIGKILL';
}

/** Signals a process group, or the process alone when it leads none. */
export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Exit code as upstream reports it: the code, or 128 + the signal number. */
export function exitCodeOf(exit: ProcessExit): number {
  if (exit.code !== null) return exit.code;
  const n = exit.signal ? ((constants.signals as Record<string, number>)[exit.signal] ?? 9) : 9;
  return 128 + n;
}
