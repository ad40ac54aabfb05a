import { randomUUID } from 'node:crypto';
import { formatTime, type KubeObject } from '@orch/apimachinery';

/** The second nowTime() last formatted, and its text (a create asks several times a second). */
let lastSecond = NaN;
let lastSecondText = '';

/** metav1.Time: RFC 3339 with second precision; now when `date` is not given. */
export function nowTime(date?: Date): string {
  if (date) return formatTime(date);
  const second = Math.floor(Date.now() / 1000);
  if (second !== lastSecond) {
    lastSecondText = formatTime(second * 1000);
    lastSecond = second;
  }
  return lastSecondText;
}

export function newUid(): string {
  return randomUUID();
}

/** Deep copy of a JSON object (cached objects are never mutated). */
export function deepCopy<T>(obj: T): T {
  return structuredClone(obj);
}

/** The parts of an object other than metadata and status, compared to bump metadata.generation. */
export function specPart(obj: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj as KubeObject & { status?: unknown };
  return JSON.stringify(rest);
}

/** Stable JSON for equality checks (key order as stored). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
