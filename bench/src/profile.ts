/**
 * CPU profiles of benchmark processes: started with `node --cpu-prof --cpu-prof-dir=<dir>`, written
 * when the process exits cleanly (SIGINT), summarised here as the top functions by self time.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Microseconds on CLOCK_MONOTONIC: the clock of V8's CPU profile timestamps, shared by every process. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** A stretch of a run in monotonicMicros() bounds. */
export interface ProfileWindow {
  from: number;
  to: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Node names profiles `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`; the main thread is 0. */
const MAIN_THREAD_PROFILE = /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/;

/** One busy (non-idle) sample: its node, the node's parent links and names. */
interface Sample {
  id: number;
  /** Node id → caller's node id. */
  parent: ReadonlyMap<number, number>;
  /** Node id → `<function> <file>:<line>` (paths from node_modules/ or dist/). */
  names: ReadonlyMap<number, string>;
  /** Node id → `<function> <url>`, the text inclusiveShares' patterns match. */
  frames: ReadonlyMap<number, string>;
}

/** Visits the busy samples of the .cpuprofile files of a directory taken inside `window` (or one of them; all when absent). */
async function eachBusySample(dir: string, window: ProfileWindow | readonly ProfileWindow[] | undefined, mainThreadOnly: boolean, visit: (s: Sample) => void): Promise<void> {
  const windows = window === undefined ? undefined : 'from' in window ? [window] : window;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile') && (!mainThreadOnly || MAIN_THREAD_PROFILE.test(n)))) {
    const prof = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile;
    const parent = new Map<number, number>();
    const names = new Map<number, string>();
    const frames = new Map<number, string>();
    const idle = new Set<number>();
    for (const n of prof.nodes) {
      for (const c of n.children ?? []) parent.set(c, n.id);
      const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
      names.set(n.id, `${n.callFrame.functionName || '(anonymous)'} ${where}`.trim());
      frames.set(n.id, `${n.callFrame.functionName} ${n.callFrame.url}`);
      if (n.callFrame.functionName === '(idle)') idle.add(n.id);
    }
    let at = prof.startTime;
    prof.samples.forEach((id, i) => {
      at += prof.timeDeltas[i];
      if ((windows && !windows.some((w) => at >= w.from && at <= w.to)) || idle.has(id)) return;
      visit({ id, parent, names, frames });
    });
  }
}

/** The sample's stack, innermost node first. */
function* stack(s: Sample): Generator<number> {
  for (let n: number | undefined = s.id; n !== undefined; n = s.parent.get(n)) yield n;
}

/** Top entries of a count map as `<share>% <name>` lines. */
function shares(counts: Map<string, number>, total: number, top: number): string[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${((100 * v) / Math.max(1, total)).toFixed(1)}% ${k}`);
}

/**
 * Top functions by self time in the .cpuprofile files of a directory, as shares of the busy
 * (non-idle) time; with `window` only samples taken inside it (or one of them) count; `mainThreadOnly` leaves
 * worker threads' profiles out (e.g. the SQLite writer's: the event loop serving requests is what counts).
 */
export async function profileSummary(dir: string, window?: ProfileWindow | readonly ProfileWindow[], top = 12, mainThreadOnly = false): Promise<string[]> {
  const self = new Map<string, number>();
  let total = 0;
  await eachBusySample(dir, window, mainThreadOnly, (s) => {
    total++;
    const key = s.names.get(s.id)!;
    self.set(key, (self.get(key) ?? 0) + 1);
  });
  return shares(self, total, top);
}

/**
 * Top functions by inclusive time (a sample counts once for every function on its stack), as
 * shares of the busy time; same files, window and threads as profileSummary. Program roots
 * and the runtime's own frames are left out.
 */
export async function inclusiveSummary(dir: string, window?: ProfileWindow | readonly ProfileWindow[], top = 30, mainThreadOnly = false): Promise<string[]> {
  const counts = new Map<string, number>();
  let total = 0;
  await eachBusySample(dir, window, mainThreadOnly, (s) => {
    total++;
    const seen = new Set<string>();
    for (const n of stack(s)) seen.add(s.names.get(n)!);
    for (const k of seen) if (!k.startsWith('(') && !k.startsWith('processTicksAndRejections') && !k.startsWith('listOnTimeout')) counts.set(k, (counts.get(k) ?? 0) + 1);
  });
  return shares(counts, total, top);
}

/**
 * Shares of the busy (non-idle) time spent under each labelled kind of work: a sample counts for
 * a label when a frame of its stack (`<function> <url>`) matches the label's pattern (inclusive
 * time, so shares may overlap). Same files and window as profileSummary.
 */
export async function inclusiveShares(dir: string, labels: Record<string, RegExp>, window?: ProfileWindow, mainThreadOnly = false): Promise<string[]> {
  const hits = new Map<string, number>(Object.keys(labels).map((l) => [l, 0]));
  let total = 0;
  await eachBusySample(dir, window, mainThreadOnly, (s) => {
    total++;
    const seen = new Set<string>();
    for (const n of stack(s)) {
      const frame = s.frames.get(n)!;
      for (const l of Object.keys(labels)) if (labels[l].test(frame)) seen.add(l);
    }
    for (const l of seen) hits.set(l, hits.get(l)! + 1);
  });
  return [...hits].map(([l, v]) => `${((100 * v) / Math.max(1, total)).toFixed(1)}% ${l}`);
}
