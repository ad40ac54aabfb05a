import { StatusError } from './errors';

// Field selectors with the semantics of upstream k8s.io/apimachinery/pkg/fields:
// `f=v`, `f==v`, `f!=v` terms joined by commas; `\` escapes `\`, `,` and `=` in values.

/** One ANDed term; `==` is stored as `=`. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** An immutable field selector: the AND of its terms, in sorted order. */
export class FieldSelector {
  constructor(private readonly terms: readonly FieldRequirement[]) {}

  /** True when every term holds; a field missing from `fields` has the value "". */
  matches(fields: Readonly<Record<string, string>>): boolean {
    return this.terms.every((t) => {
      const have = Object.prototype.hasOwnProperty.call(fields, t.field) ? fields[t.field] : '';
      return t.operator === '=' ? have === t.value : have !== t.value;
    });
  }

  /** True when the selector does not restrict anything. */
  empty(): boolean {
    return this.terms.length === 0;
  }

  /** The terms, so a caller can reject fields it does not support. */
  requirements(): readonly FieldRequirement[] {
    return this.terms;
  }

  /** The value `field` must equal, if some `field=value` term requires one. */
  requiresExactMatch(field: string): string | undefined {
    return this.terms.find((t) => t.field === field && t.operator === '=')?.value;
  }

  /**
   * Throws 400 `field label not supported: X` for the first term whose field is not in
   * `supported` (what upstream's field-label conversion answers).
   */
  checkSupported(supported: ReadonlySet<string>): void {
    const bad = this.terms.find((t) => !supported.has(t.field));
    if (bad) throw StatusError.badRequest(`field label not supported: ${bad.field}`);
  }

  /** Canonical string form with escaped values, e.g. `metadata.name=a\,b,spec.nodeName!=n`. */
  toString(): string {
    return this.terms.map((t) => `${t.field}${t.operator}${escapeFieldValue(t.value)}`).join(',');
  }
}

/** Escapes `\`, `,` and `=` in a value so it can be put into a selector string. */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** upstream UnescapeValue: `\\`, `\,` and `\=` are the only escapes; bare `,` and `=` are errors. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw StatusError.badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      // upstream prints the rune with %v, i.e. its code point.
      throw StatusError.badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw StatusError.badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas that are not escaped; escapes stay in the terms. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** Splits a term at the first operator (no escaping in field names); `==` is tried before `=`. */
function splitTerm(term: string): { field: string; op: (typeof TERM_OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** Parses a field selector (upstream fields.ParseSelector); malformed input is a 400. */
export function parseFieldSelector(s: string): FieldSelector {
  const terms: FieldRequirement[] = [];
  for (const part of splitTerms(s).sort()) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw StatusError.badRequest(`invalid selector: '${s}'; can't understand '${part}'`);
    terms.push({ field: t.field, operator: t.op === '!=' ? '!=' : '=', value: unescapeValue(t.rhs) });
  }
  return new FieldSelector(terms);
}
