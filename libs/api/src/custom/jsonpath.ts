// The JSONPath of kubectl and CRD printer columns (client-go util/jsonpath, without the
// `{...}` template braces): `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[1:3]`, `[*]`, `..name`, `.*`
// and filters `[?(@.type=="Ready")]` with ==, !=, <, <=, >, >= or a bare existence test.

type Step =
  | { op: 'field'; name: string }
  | { op: 'wildcard' }
  | { op: 'recursive'; name?: string }
  | { op: 'index'; index: number }
  | { op: 'slice'; start?: number; end?: number }
  | { op: 'filter'; left: string[]; cmp?: string; right?: unknown };

export class JsonPathError extends Error {}

/** A parsed JSONPath; `find` returns every value it selects, in document order. */
export class JsonPath {
  private constructor(
    readonly text: string,
    private readonly steps: readonly Step[],
  ) {}

  /** Parses `text` (a leading `.` or `[` is required, as CRD validation requires); throws JsonPathError. */
  static parse(text: string): JsonPath {
    return new JsonPath(text, parseSteps(text));
  }

  /**
   * A simple field path (`.spec.replicas`, `.metadata.labels['app.io/x']`): the field names,
   * or undefined when the path uses indexes, wildcards or filters.
   */
  fieldNames(): string[] | undefined {
    return this.steps.every((s) => s.op === 'field') ? this.steps.map((s) => (s as { name: string }).name) : undefined;
  }

  find(value: unknown): unknown[] {
    let current: unknown[] = [value];
    for (const step of this.steps) current = current.flatMap((v) => apply(step, v));
    return current;
  }
}

function apply(step: Step, v: unknown): unknown[] {
  const obj = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  switch (step.op) {
    case 'field':
      return obj && Object.hasOwn(obj, step.name) ? [obj[step.name]] : [];
    case 'wildcard':
      return Array.isArray(v) ? v : obj ? Object.values(obj) : [];
    case 'recursive': {
      const out: unknown[] = [];
      const walk = (x: unknown) => {
        if (Array.isArray(x)) x.forEach(walk);
        else if (typeof x === 'object' && x !== null) {
          const o = x as Record<string, unknown>;
          if (step.name === undefined) out.push(...Object.values(o));
          else if (Object.hasOwn(o, step.name)) out.push(o[step.name]);
          Object.values(o).forEach(walk);
        }
      };
      walk(v);
      return out;
    }
    case 'index': {
      if (!Array.isArray(v)) return [];
      const i = step.index < 0 ? v.length + step.index : step.index;
      return i >= 0 && i < v.length ? [v[i]] : [];
    }
    case 'slice': {
      if (!Array.isArray(v)) return [];
      const norm = (n: number | undefined, d: number) => (n === undefined ? d : n < 0 ? Math.max(0, v.length + n) : Math.min(n, v.length));
      return v.slice(norm(step.start, 0), norm(step.end, v.length));
    }
    case 'filter': {
      const items = Array.isArray(v) ? v : obj ? Object.values(obj) : [];
      return items.filter((item) => {
        let cur: unknown = item;
        for (const name of step.left) cur = typeof cur === 'object' && cur !== null && Object.hasOwn(cur, name) ? (cur as Record<string, unknown>)[name] : undefined;
        if (!step.cmp) return cur !== undefined;
        return compare(cur, step.cmp, step.right);
      });
    }
  }
}

function compare(a: unknown, cmp: string, b: unknown): boolean {
  switch (cmp) {
    case '==':
      return a !== undefined && (a === b || String(a) === String(b));
    case '!=':
      return !(a !== undefined && (a === b || String(a) === String(b)));
    default: {
      if (typeof a !== 'number' || typeof b !== 'number') return false;
      return cmp === '<' ? a < b : cmp === '<=' ? a <= b : cmp === '>' ? a > b : a >= b;
    }
  }
}

const IDENT = /^[A-Za-z0-9_\-/$]+/;

function parseSteps(text: string): Step[] {
  if (!text.startsWith('.') && !text.startsWith('[')) throw new JsonPathError(`must be a JSON path starting with "." or "[": ${JSON.stringify(text)}`);
  const steps: Step[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      if (text[i + 1] === '.') {
        i += 2;
        const m = IDENT.exec(text.slice(i));
        if (m) {
          steps.push({ op: 'recursive', name: m[0] });
          i += m[0].length;
        } else if (text[i] === '*') {
          steps.push({ op: 'recursive' });
          i++;
        } else steps.push({ op: 'recursive' });
        continue;
      }
      i++;
      if (i === text.length) {
        if (steps.length === 0) break; // "." alone: the object itself
        throw new JsonPathError(`unexpected end of JSON path ${JSON.stringify(text)}`);
      }
      if (text[i] === '*') {
        steps.push({ op: 'wildcard' });
        i++;
        continue;
      }
      if (text[i] === '[') continue;
      const m = IDENT.exec(text.slice(i));
      if (!m) throw new JsonPathError(`invalid field name at ${i} in JSON path ${JSON.stringify(text)}`);
      steps.push({ op: 'field', name: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === '[') {
      const close = findClose(text, i);
      steps.push(parseBracket(text.slice(i + 1, close), text));
      i = close + 1;
      continue;
    }
    throw new JsonPathError(`unexpected ${JSON.stringify(c)} at ${i} in JSON path ${JSON.stringify(text)}`);
  }
  return steps;
}

function findClose(text: string, open: number): number {
  let quote: string | undefined;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return i;
    }
  }
  throw new JsonPathError(`unclosed bracket in JSON path ${JSON.stringify(text)}`);
}

function parseLiteral(s: string, text: string): unknown {
  const t = s.trim();
  if (/^'.*'$/s.test(t)) return t.slice(1, -1);
  if (/^".*"$/s.test(t)) return JSON.parse(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  throw new JsonPathError(`invalid literal ${JSON.stringify(t)} in JSON path ${JSON.stringify(text)}`);
}

function parseBracket(inner: string, text: string): Step {
  const t = inner.trim();
  if (t === '*') return { op: 'wildcard' };
  if (/^'.*'$/s.test(t) || /^".*"$/s.test(t)) return { op: 'field', name: parseLiteral(t, text) as string };
  if (/^-?\d+$/.test(t)) return { op: 'index', index: Number(t) };
  const slice = /^(-?\d*):(-?\d*)$/.exec(t);
  if (slice) return { op: 'slice', start: slice[1] ? Number(slice[1]) : undefined, end: slice[2] ? Number(slice[2]) : undefined };
  const filter = /^\?\((.*)\)$/s.exec(t);
  if (filter) {
    const m = /^@((?:\.[A-Za-z0-9_\-/$]+|\['[^']*'\])+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/s.exec(filter[1].trim());
    if (!m) throw new JsonPathError(`invalid filter ${JSON.stringify(filter[1])} in JSON path ${JSON.stringify(text)}`);
    const left = [...m[1].matchAll(/\.([A-Za-z0-9_\-/$]+)|\['([^']*)'\]/g)].map((x) => x[1] ?? x[2]);
    return m[2] ? { op: 'filter', left, cmp: m[2], right: parseLiteral(m[3], text) } : { op: 'filter', left };
  }
  throw new JsonPathError(`invalid array index ${JSON.stringify(t)} in JSON path ${JSON.stringify(text)}`);
}
