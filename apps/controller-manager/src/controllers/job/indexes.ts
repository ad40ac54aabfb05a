import { readWellKnown } from '@orch/api';
import type { Container, Pod } from '../../framework/api';

/** SPEC: index of a pod in an Indexed job (annotation, and label since upstream 1.28). */
export const JOB_COMPLETION_INDEX = 'batch.orch.io/job-completion-index';
/** The environment variable that gives each container of an Indexed job's pod its index. */
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/**
 * upstream addCompletionIndexEnvVariables (mutates `containers`): `JOB_COMPLETION_INDEX` from
 * the pod's completion-index label (downward API), unless the container already sets it.
 */
export function addCompletionIndexEnv(containers: Container[] | undefined): void {
  for (const c of containers ?? []) {
    const env = (Array.isArray(c.env) ? c.env : []) as { name: string }[];
    if (env.some((e) => e.name === JOB_COMPLETION_INDEX_ENV)) continue;
    c.env = [...env, { name: JOB_COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JOB_COMPLETION_INDEX}']` } } }];
  }
}

/** A closed range of completion indexes. */
export interface Interval {
  first: number;
  last: number;
}

/**
 * Parses `status.completedIndexes` (`1,3-5,7`) into sorted, merged intervals, dropping
 * malformed parts and indexes at or beyond `completions` (upstream parseIndexesFromString).
 */
export function parseIndexes(text: string | undefined, completions: number): Interval[] {
  const out: Interval[] = [];
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const first = Number(m[1]);
    const last = Math.min(Number(m[2] ?? m[1]), completions - 1);
    if (first > last) continue;
    out.push({ first, last });
  }
  return merge(out);
}

function merge(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.first - b.first);
  const out: Interval[] = [];
  for (const iv of sorted) {
    const prev = out[out.length - 1];
    if (prev && iv.first <= prev.last + 1) prev.last = Math.max(prev.last, iv.last);
    else out.push({ ...iv });
  }
  return out;
}

/** Adds indexes to intervals (upstream orderedIntervals.withOrderedIndexes). */
export function withIndexes(intervals: readonly Interval[], indexes: readonly number[]): Interval[] {
  return merge([...intervals, ...indexes.map((i) => ({ first: i, last: i }))]);
}

/** `1,3-5,7` (upstream orderedIntervals.String). */
export function formatIndexes(intervals: readonly Interval[]): string {
  return intervals.map((iv) => (iv.first === iv.last ? String(iv.first) : `${iv.first}-${iv.last}`)).join(',');
}

/** How many indexes the intervals hold. */
export function countIndexes(intervals: readonly Interval[]): number {
  return intervals.reduce((n, iv) => n + iv.last - iv.first + 1, 0);
}

export function hasIndex(intervals: readonly Interval[], index: number): boolean {
  return intervals.some((iv) => index >= iv.first && index <= iv.last);
}

/** The pod's completion index (annotation, else label); undefined when absent or invalid. */
export function completionIndexOf(pod: Pod): number | undefined {
  const raw = readWellKnown(pod.metadata.annotations, JOB_COMPLETION_INDEX) ?? readWellKnown(pod.metadata.labels, JOB_COMPLETION_INDEX);
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
}

/**
 * upstream firstPendingIndexes: the lowest `count` indexes below `completions` that neither
 * succeeded nor have an active pod.
 */
export function firstPendingIndexes(activePods: readonly Pod[], succeeded: readonly Interval[], count: number, completions: number): number[] {
  const busy = new Set(activePods.map(completionIndexOf).filter((i): i is number => i !== undefined));
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < count; i++) {
    if (!busy.has(i) && !hasIndex(succeeded, i)) out.push(i);
  }
  return out;
}
