import { humanDuration, parseTime, type LabelSelectorObject } from '@orch/apimachinery';

// Cell formats shared by the kinds' tables (upstream's printers).

/** Age as upstream prints it (`5m`, `3h2m`, `<unknown>`). */
export function age(ts: string | undefined, now = Date.now()): string {
  if (!ts) return '<unknown>';
  const t = parseTime(ts);
  return t === undefined || Number.isNaN(t) ? '<unknown>' : humanDuration(Math.max(0, now - t));
}

/** `<none>` for an absent or empty value. */
export const orNone = (v: unknown): unknown => (v === undefined || v === null || v === '' ? '<none>' : v);

interface Named {
  name?: string;
  image?: string;
}

/** The Containers and Images columns of a pod template's spec. */
export function containerCells(spec: { containers?: Named[] } | undefined): [string, string] {
  const cs = Array.isArray(spec?.containers) ? spec.containers : [];
  return [cs.map((c) => c.name).join(','), cs.map((c) => c.image).join(',')];
}

/** A label selector (or a plain label map) as kubectl prints it. */
export function selectorText(sel: LabelSelectorObject | Record<string, string> | undefined): string {
  if (!sel) return '<none>';
  const s = sel as LabelSelectorObject;
  const parts = Object.entries(s.matchLabels ?? (s.matchExpressions ? {} : (sel as Record<string, string>))).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const vals = (e.values ?? []).join(',');
    parts.push(e.operator === 'Exists' ? e.key : e.operator === 'DoesNotExist' ? `!${e.key}` : `${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${vals})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

/** At most three items, then `+ N more...`. */
export function firstThree(items: string[], none: string): string {
  if (!items.length) return none;
  return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
}
