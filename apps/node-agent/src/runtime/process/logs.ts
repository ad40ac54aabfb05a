import { closeSync, createReadStream, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Container logs in the CRI format upstream runtimes write: one line per output line,
 * `<RFC 3339 time with nanoseconds> <stdout|stderr> <F|P> <content>`, `P` marking a partial
 * line (one without its newline yet, split at 16 KiB or at the end of the output).
 * Files: `<dir>/<restartCount>.log` and, after rotation, `<restartCount>.log.<epoch ms>`.
 */

/** Lines longer than this are split into partial lines (upstream's 16 KiB). */
const MAX_LINE = 16 * 1024;

/** Wall-clock nanoseconds at start-up and the monotonic clock then: now = base + elapsed. */
const BASE_NANOS = BigInt(Date.now()) * 1_000_000n;
const BASE_HRTIME = process.hrtime.bigint();
let lastNanos = 0n;

/** Now as RFC 3339 with nine fraction digits; strictly increasing within the process. */
export function nanoTimestamp(): string {
  let ns = BASE_NANOS + (process.hrtime.bigint() - BASE_HRTIME);
  if (ns <= lastNanos) ns = lastNanos + 1n;
  lastNanos = ns;
  return formatNanos(ns);
}

/** Formats nanoseconds since the epoch as `2024-01-02T03:04:05.123456789Z`. */
export function formatNanos(ns: bigint): string {
  const seconds = ns / 1_000_000_000n;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${frac}Z`;
}

export type LogStream = 'stdout' | 'stderr';

/** One parsed log line. */
export interface LogEntry {
  time: string;
  stream: LogStream;
  partial: boolean;
  content: string;
}

/** Parses a CRI log line; undefined for a malformed one. */
export function parseLogLine(line: string): LogEntry | undefined {
  const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(line);
  if (!m) return undefined;
  return { time: m[1], stream: m[2] as LogStream, partial: m[3] === 'P', content: m[4] };
}

export interface LogWriterOptions {
  /** Rotate the file when it grows beyond this (bytes). */
  maxBytes: number;
  /** Files kept per instance, the current one included (>= 1). */
  maxFiles: number;
}

type Listener = (line: string | null) => void;

/**
 * Writes one container instance's output to its log file. Writes are synchronous, so a
 * reader that subscribes and then reads the file up to `size()` sees every line exactly
 * once. Closing notifies subscribers with `null`.
 */
export class ContainerLogWriter {
  private fd: number;
  private bytes: number;
  private readonly partial: Record<LogStream, string> = { stdout: '', stderr: '' };
  private readonly listeners = new Set<Listener>();
  private closed = false;
  /** Suffix of the newest rotated file: rotated names only ever grow, so they sort by age. */
  private lastStamp: number;

  constructor(
    readonly path: string,
    private readonly opts: LogWriterOptions,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a', 0o640);
    this.bytes = fstatSync(this.fd).size;
    this.lastStamp = Math.max(0, ...rotatedFilesSync(path).map((f) => Number(f.slice(path.length + 1))));
  }

  /** Bytes in the current file. */
  size(): number {
    return this.bytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Receives every line written from now on (formatted), then `null` when the writer closes. */
  subscribe(fn: Listener): () => void {
    if (this.closed) {
      fn(null);
      return () => undefined;
    }
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Appends output of `stream`; complete lines are written at once, the rest is held. */
  write(stream: LogStream, chunk: Buffer | string): void {
    if (this.closed) return;
    let text = this.partial[stream] + chunk.toString();
    let nl: number;
    while ((nl = text.indexOf('\n')) >= 0) {
      this.emit(stream, false, text.slice(0, nl));
      text = text.slice(nl + 1);
    }
    while (text.length >= MAX_LINE) {
      this.emit(stream, true, text.slice(0, MAX_LINE));
      text = text.slice(MAX_LINE);
    }
    this.partial[stream] = text;
  }

  /** Writes held partial lines and closes the file. Idempotent. */
  close(): void {
    if (this.closed) return;
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream]) this.emit(stream, true, this.partial[stream]);
      this.partial[stream] = '';
    }
    this.closed = true;
    closeSync(this.fd);
    for (const l of [...this.listeners]) l(null);
    this.listeners.clear();
  }

  private emit(stream: LogStream, partial: boolean, content: string): void {
    const line = `${nanoTimestamp()} ${stream} ${partial ? 'P' : 'F'} ${content}\n`;
    const buf = Buffer.from(line);
    writeSync(this.fd, buf);
    this.bytes += buf.length;
    for (const l of this.listeners) l(line);
    if (this.bytes > this.opts.maxBytes) this.rotate();
  }

  /** Renames the current file to `<path>.<epoch ms>`, opens a new one, prunes old rotations. */
  private rotate(): void {
    closeSync(this.fd);
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    renameSync(this.path, `${this.path}.${this.lastStamp}`);
    this.fd = openSync(this.path, 'a', 0o640);
    this.bytes = 0;
    const rotated = rotatedFilesSync(this.path);
    for (const old of rotated.slice(0, Math.max(0, rotated.length - (this.opts.maxFiles - 1)))) rmSync(old, { force: true });
  }
}

function rotatedFilesSync(path: string): string[] {
  const base = basename(path);
  return readdirSync(dirname(path))
    .filter((f) => f.startsWith(`${base}.`) && /^\d+$/.test(f.slice(base.length + 1)))
    .sort()
    .map((f) => join(dirname(path), f));
}

/** The files of one instance's log, oldest first: rotated ones, then the current one. */
export async function instanceLogFiles(dir: string, restartCount: number): Promise<string[]> {
  const base = `${restartCount}.log`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const rotated = names.filter((f) => f.startsWith(`${base}.`) && /^\d+$/.test(f.slice(base.length + 1))).sort();
  return [...rotated, ...(names.includes(base) ? [base] : [])].map((f) => join(dir, f));
}

/** Removes the log files of instances older than `keepFrom` (the previous instance is kept by the caller). */
export async function pruneInstanceLogs(dir: string, keepFrom: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names
      .filter((f) => {
        const n = /^(\d+)\.log(\.\d+)?$/.exec(f);
        return n && Number(n[1]) < keepFrom;
      })
      .map((f) => rm(join(dir, f), { force: true })),
  );
}

export interface LogQuery {
  /** Only the last N lines (of the files read; following continues after them). */
  tailLines?: number;
  /** Only lines at or after this time (RFC 3339 nanos form, compared as text). */
  since?: string;
  timestamps?: boolean;
  /** Stop after this many bytes of output. */
  limitBytes?: number;
  follow?: boolean;
}

/** Renders one entry as the API returns it. */
function render(e: LogEntry, timestamps: boolean): string {
  return `${timestamps ? `${e.time} ` : ''}${e.content}${e.partial ? '' : '\n'}`;
}

/**
 * Streams an instance's log to `write` (which returns a promise to apply back-pressure):
 * the rotated and current files, filtered by `since` and `tailLines`, then, with `follow`
 * and a live `writer`, every new line until the writer closes or `signal` aborts.
 * Stops early at `limitBytes`.
 */
export async function streamLog(files: string[], writer: ContainerLogWriter | undefined, q: LogQuery, write: (text: string) => Promise<void>, signal: AbortSignal): Promise<void> {
  let budget = q.limitBytes ?? Infinity;
  const emit = async (e: LogEntry): Promise<boolean> => {
    if (q.since && e.time < q.since) return true;
    let text = render(e, !!q.timestamps);
    if (Buffer.byteLength(text) > budget) text = Buffer.from(text).subarray(0, budget).toString();
    budget -= Buffer.byteLength(text);
    if (text) await write(text);
    return budget > 0 && !signal.aborted;
  };

  // Subscribe before reading so no line falls between the file and the live stream.
  const live: (string | null)[] = [];
  let wake: (() => void) | undefined;
  const following = q.follow && writer && !writer.isClosed;
  const unsubscribe = following
    ? writer!.subscribe((line) => {
        live.push(line);
        wake?.();
      })
    : undefined;
  const currentLimit = writer && files.at(-1) === writer.path ? writer.size() : undefined;
  try {
    const tail: LogEntry[] = [];
    const tailLines = q.tailLines;
    for (const [i, file] of files.entries()) {
      const end = i === files.length - 1 && currentLimit !== undefined ? currentLimit : undefined;
      for await (const e of readEntries(file, end)) {
        if (signal.aborted) return;
        if (tailLines !== undefined) {
          if (q.since && e.time < q.since) continue;
          tail.push(e);
          if (tail.length > tailLines) tail.shift();
        } else if (!(await emit(e))) return;
      }
    }
    for (const e of tail) if (!(await emit(e))) return;
    if (!following) return;
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        while (live.length) {
          const line = live.shift()!;
          if (line === null) return;
          const e = parseLogLine(line.slice(0, -1));
          if (e && !(await emit(e))) return;
        }
        if (signal.aborted) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  } finally {
    unsubscribe?.();
  }
}

/** Parsed lines of a log file, up to byte `end` (exclusive) when given; lines end at `\n` only. */
async function* readEntries(file: string, end?: number): AsyncGenerator<LogEntry> {
  if (end === 0) return;
  try {
    await stat(file);
  } catch {
    return;
  }
  const input = createReadStream(file, { encoding: 'utf8', ...(end !== undefined ? { end: end - 1 } : {}) });
  let rest = '';
  try {
    for await (const chunk of input as AsyncIterable<string>) {
      rest += chunk;
      let nl: number;
      let start = 0;
      while ((nl = rest.indexOf('\n', start)) >= 0) {
        const e = parseLogLine(rest.slice(start, nl));
        start = nl + 1;
        if (e) yield e;
      }
      rest = rest.slice(start);
    }
  } finally {
    input.destroy();
  }
}
