import { ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';

/** Polled until it resolves true; false or a rejection means "not ready yet". */
export type ReadyProbe = () => Promise<boolean>;

export interface StartProcessOptions {
  cmd: string;
  args?: string[];
  /** Added to (and overriding) the parent's environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Default: ready as soon as the process is spawned. */
  readyProbe?: ReadyProbe;
  /** How long to wait for readiness before killing the process and failing (default 15 s). */
  timeoutMs?: number;
  /** How long stop() waits after SIGTERM before sending SIGKILL (default 5 s). */
  stopGraceMs?: number;
  /** Size of the output ring buffer kept for failure messages (default 64 KiB). */
  outputLimit?: number;
  /** Called for every complete output line, in order per stream. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProcess {
  pid: number;
  /** Resolves when the process has exited (also when it exits on its own). */
  exited: Promise<ProcessExit>;
  /** Sends signal (default SIGTERM), then SIGKILL after the grace period; resolves on exit. */
  stop(signal?: NodeJS.Signals): Promise<ProcessExit>;
  /** Sends SIGKILL; resolves on exit. */
  kill9(): Promise<ProcessExit>;
  /** The last outputLimit characters of stdout and stderr, interleaved as received. */
  output(): string;
}

/** Children still running; killed when this process exits so no test leaks a server. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

class RingBuffer {
  private chunks: string[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  /** Appends text, then drops the oldest characters beyond the limit. */
  push(text: string): void {
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.limit) {
      const excess = this.size - this.limit;
      if (this.chunks[0].length <= excess) {
        this.size -= this.chunks.shift()!.length;
      } else {
        this.chunks[0] = this.chunks[0].slice(excess);
        this.size = this.limit;
      }
    }
  }

  toString(): string {
    return this.chunks.join('');
  }
}

function lineSplitter(emit: (line: string) => void): { push(text: string): void; flush(): void } {
  let partial = '';
  return {
    push(text) {
      const parts = (partial + text).split('\n');
      partial = parts.pop()!;
      for (const line of parts) emit(line);
    },
    flush() {
      if (partial !== '') emit(partial);
      partial = '';
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns a real child process and waits until readyProbe reports true. Fails (after
 * killing the child) when the child exits first or the timeout passes; the error message
 * carries the command line and the captured output.
 */
export async function startProcess(opts: StartProcessOptions): Promise<RunningProcess> {
  const args = opts.args ?? [];
  const commandLine = [opts.cmd, ...args].join(' ');
  const ring = new RingBuffer(opts.outputLimit ?? 64 * 1024);
  installExitHook();

  const child = spawn(opts.cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);

  for (const stream of ['stdout', 'stderr'] as const) {
    const lines = lineSplitter((line) => opts.onLine?.(line, stream));
    const source = child[stream]!;
    source.setEncoding('utf8');
    source.on('data', (text: string) => {
      ring.push(text);
      if (opts.onLine) lines.push(text);
    });
    source.on('end', () => lines.flush());
  }

  // Exit is known at 'exit'; `exited` waits for 'close' too (all output read) unless a
  // grandchild keeps the pipes open longer than a second.
  let exitInfo: ProcessExit | undefined;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      const info = { code, signal };
      exitInfo = info;
      const timer = setTimeout(() => resolve(info), 1000);
      child.once('close', () => {
        clearTimeout(timer);
        resolve(info);
      });
    });
  });
  const spawnError = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (err) => resolve(err));
  });
  if (spawnError) {
    live.delete(child);
    throw new Error(`cannot start ${commandLine}: ${spawnError.message}`);
  }

  const kill = async (signal: NodeJS.Signals): Promise<ProcessExit> => {
    if (!exitInfo) child.kill(signal);
    return exited;
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<ProcessExit> => {
    if (exitInfo) return exitInfo;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.stopGraceMs ?? 5000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const running: RunningProcess = {
    pid: child.pid!,
    exited,
    stop,
    kill9: () => kill('SIGKILL'),
    output: () => ring.toString(),
  };

  const fail = async (why: string): Promise<never> => {
    await kill('SIGKILL');
    throw new Error(`${commandLine}: ${why}\n--- output ---\n${ring.toString()}`);
  };
  if (!opts.readyProbe) return running;
  const timeoutMs = opts.timeoutMs ?? 15000;
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (true) {
    if (exitInfo) return fail(`exited before it was ready (code ${exitInfo.code}, signal ${exitInfo.signal})`);
    if (await opts.readyProbe().catch(() => false)) return running;
    if (Date.now() >= deadline) return fail(`not ready after ${timeoutMs} ms`);
    await Promise.race([sleep(delay), exited]);
    delay = Math.min(delay * 2, 200);
  }
}

/**
 * Ready when a TCP connection to 127.0.0.1:port succeeds and, when `expect` is given, the
 * first bytes received (after writing `send`) start with it.
 */
export function tcpProbe(port: number, opts: { send?: string; expect?: string } = {}): ReadyProbe {
  return () =>
    new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      let received = '';
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1000, () => done(false));
      socket.once('error', () => done(false));
      socket.once('connect', () => {
        if (opts.expect === undefined) return done(true);
        if (opts.send !== undefined) socket.write(opts.send);
      });
      socket.setEncoding('utf8');
      socket.on('data', (text: string) => {
        received += text;
        if (received.length >= opts.expect!.length) done(received.startsWith(opts.expect!));
      });
    });
}

/** Ready when GET url answers 200 and, when `expect` is given, the body contains it. */
export function httpProbe(url: string, expect?: string): ReadyProbe {
  return () =>
    new Promise((resolve) => {
      const req = request(url, { timeout: 1000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => (body += text));
        res.on('end', () => resolve(res.statusCode === 200 && (expect === undefined || body.includes(expect))));
        res.on('error', () => resolve(false));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
}
