import { createHook } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Preloaded into a bench gateway (`node --require gateway-macrotasks.js`, bench apf with
 * --apf-tasks): the gateway's macrotasks — a top-level callback with the ticks and microtasks
 * that run after it — timed in CPU (process.cpuUsage, all threads: the GC's helpers count) and
 * wall time, by the kind of async resource that began it (WRITEWRAP: a socket write completed;
 * Immediate: setImmediate; HTTPINCOMINGMESSAGE: a request read; TLSWRAP: TLS data). Once a
 * second it appends one JSON line of {@link MacrotaskSecond} to `<--data-dir>/macrotasks.jsonl`.
 * The hooks slow the gateway (every promise is tracked): its figures name the long pieces a
 * request waits behind, not the gateway's speed.
 */

/** Tasks of one kind over a second. */
export interface MacrotaskKind {
  n: number;
  cpuUs: number;
  /** Tasks over 0.5, 1 and 2 ms of CPU. */
  over: [number, number, number];
  /** Wall time spent in tasks over 1 ms of CPU. */
  longWallUs: number;
  maxCpuUs: number;
}

export interface MacrotaskSecond {
  /** Date.now() when the second ended. */
  at: number;
  kinds: Record<string, MacrotaskKind>;
}

/** Continuations of the task before them, not tasks of their own. */
const CONTINUATIONS = new Set(['PROMISE', 'TickObject', 'Microtask']);

function watch(out: string): void {
  const types = new Map<number, string>();
  let depth = 0;
  let task: { type: string; wall: number; cpu: number } | undefined;
  let ended: { wall: number; cpu: number } | undefined;
  let kinds: Record<string, MacrotaskKind> = {};
  const cpuNow = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const wallNow = () => performance.now() * 1000;
  const close = () => {
    if (!task || !ended) return;
    const cpu = ended.cpu - task.cpu;
    const k = (kinds[task.type] ??= { n: 0, cpuUs: 0, over: [0, 0, 0], longWallUs: 0, maxCpuUs: 0 });
    k.n++;
    k.cpuUs += cpu;
    [500, 1000, 2000].forEach((limit, i) => cpu > limit && k.over[i]++);
    if (cpu > 1000) k.longWallUs += ended.wall - task.wall;
    k.maxCpuUs = Math.max(k.maxCpuUs, cpu);
  };
  createHook({
    init: (id, type) => void types.set(id, type),
    destroy: (id) => void types.delete(id),
    before: (id) => {
      if (depth++ !== 0) return;
      const type = types.get(id) ?? 'unknown';
      if (CONTINUATIONS.has(type)) return;
      close();
      task = { type, wall: wallNow(), cpu: cpuNow() };
      ended = undefined;
    },
    after: () => {
      if (--depth === 0 && task) ended = { wall: wallNow(), cpu: cpuNow() };
    },
  }).enable();
  setInterval(() => {
    const second: MacrotaskSecond = { at: Date.now(), kinds };
    kinds = {};
    appendFileSync(out, `${JSON.stringify(second)}\n`);
  }, 1000).unref();
}

const dataDir = process.argv.find((a) => a.startsWith('--data-dir='))?.slice('--data-dir='.length);
if (dataDir) watch(join(dataDir, 'macrotasks.jsonl'));
