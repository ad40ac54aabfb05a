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

/**
 * Top functions by self time in the .cpuprofile files of a directory, as shares of the busy
 * (non-idle) time; with `window` only samples taken inside it (or one of them) count; `mainThreadOnly` leaves
 * worker threads' profiles out (e.g. the SQLite writer's: the event loop serving requests is what counts).
 */
export async function profileSummary(dir: string, window?: ProfileWindow | readonly ProfileWindow[], top = 12, mainThreadOnly = false): Promise<string[]> {
  const windows = window === undefined ? undefined : 'from' in window ? [window] : window;
  const self = new Map<string, number>();
  let total = 0;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile') && (!mainThreadOnly || MAIN_THREAD_PROFILE.test(n)))) {
    const prof = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile;
    const names = new Map<number, string>();
    for (const n of prof.nodes) {
      const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
      names.set(n.id, `${n.callFrame.functionName || '(anonymous)'} ${where}`.trim());
    }
    let at = prof.startTime;
    prof.samples.forEach((id, i) => {
      at += prof.timeDeltas[i];
      if (windows && !windows.some((w) => at >= w.from && at <= w.to)) return;
      const key = names.get(id)!;
      if (key === '(idle)') return;
      total++;
      self.set(key, (self.get(key) ?? 0) + 1);
    });
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${((100 * v) / Math.max(1, total)).toFixed(1)}% ${k}`);
}

/**
 * Shares of the busy (non-idle) time spent under each labelled kind of work: a sample counts for
 * a label when a frame of its stack (`<function> <url>`) matches the label's pattern (inclusive
 * time, so shares may overlap). Same files and window as profileSummary.
 */
export async function inclusiveShares(dir: string, labels: Record<string, RegExp>, window?: ProfileWindow, mainThreadOnly = false): Promise<string[]> {
  const hits = new Map<string, number>(Object.keys(labels).map((l) => [l, 0]));
  let total = 0;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile') && (!mainThreadOnly || MAIN_THREAD_PROFILE.test(n)))) {
    const prof = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile;
    const parent = new Map<number, number>();
    const matched = new Map<number, string[]>();
    for (const n of prof.nodes) {
      for (const c of n.children ?? []) parent.set(c, n.id);
      const frame = `${n.callFrame.functionName} ${n.callFrame.url}`;
      matched.set(n.id, Object.keys(labels).filter((l) => labels[l].test(frame)));
    }
    const idle = new Set(prof.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
    let at = prof.startTime;
    prof.samples.forEach((id, i) => {
      at += prof.timeDeltas[i];
      if ((window && (at < window.from || at > window.to)) || idle.has(id)) return;
      total++;
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) for (const l of matched.get(n)!) seen.add(l);
      for (const l of seen) hits.set(l, hits.get(l)! + 1);
    });
  }
  return [...hits].map(([l, v]) => `${((100 * v) / Math.max(1, total)).toFixed(1)}% ${l}`);
}
