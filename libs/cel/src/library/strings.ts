// Extended strings (SPEC "Validation expressions": charAt, indexOf, lastIndexOf, lowerAscii,
// upperAscii, replace, split, join, substring, trim; plus format and strings.quote of the same
// upstream library version). The engine already provides indexOf, lastIndexOf, split, join and
// substring; lowerAscii, upperAscii and trim are replaced (see BUILTIN_OVERRIDES) because the
// engine's versions are not ASCII-only / not Unicode White_Space.

import { evalError, isDuration, isUint, type Environment } from '../engine';
import { timestampText } from '../timestamps';
import { durationText } from './compat';

const sync = { async: false };

/** Characters with the Unicode White_Space property (what upstream's trim removes). */
const WHITE_SPACE = '\\u0009-\\u000D\\u0020\\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const TRIM_RE = new RegExp(`^[${WHITE_SPACE}]+|[${WHITE_SPACE}]+$`, 'gu');

export function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

export function upperAscii(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

export function trim(s: string): string {
  return s.replace(TRIM_RE, '');
}

/** `s.charAt(i)`: the code point at i; `''` at i == size. */
export function charAt(s: string, i: bigint): string {
  const chars = [...s];
  if (i < 0n || i > BigInt(chars.length)) throw evalError(`index out of range: ${i}`);
  return chars[Number(i)] ?? '';
}

/** `s.replace(old, new[, n])`: at most n replacements (n < 0: all), as Go's strings.Replace. */
export function replace(s: string, from: string, to: string, n = -1n): string {
  if (n === 0n || from === to) return s;
  const limit = n < 0n ? Infinity : Number(n);
  let out = '';
  let count = 0;
  if (from === '') {
    // Go inserts `to` before every code point and at the end.
    const chars = [...s];
    for (let i = 0; i <= chars.length; i++) {
      if (count < limit) {
        out += to;
        count++;
      }
      if (i < chars.length) out += chars[i];
    }
    return out;
  }
  let pos = 0;
  while (count < limit) {
    const at = s.indexOf(from, pos);
    if (at < 0) break;
    out += s.slice(pos, at) + to;
    pos = at + from.length;
    count++;
  }
  return out + s.slice(pos);
}

/** `strings.quote(s)`: a double-quoted expression-language string literal of s. */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    switch (ch) {
      case '\\': out += '\\\\'; break;
      case '"': out += '\\"'; break;
      case '\x07': out += '\\a'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '\v': out += '\\v'; break;
      default:
        out += ch.codePointAt(0) === 0xfffd ? '\ufffd' : ch;
    }
  }
  return `${out}"`;
}

// ---------------------------------------------------------------------------------------------
// format

function formatString(v: unknown, clause: string): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
    case 'bigint':
      return String(v);
    case 'number':
      return formatDouble(v);
  }
  if (isUint(v)) return String(v.value);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof Date) return timestampText(v);
  if (isDuration(v)) return durationText(v);
  if (Array.isArray(v) || v instanceof Set) return `[${[...v].map((x) => formatNested(x, clause)).join(', ')}]`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${formatNested(k, clause)}: ${formatNested(x, clause)}`).sort().join(', ')}}`;
  if (typeof v === 'object' && v.constructor?.name === 'Type') return String((v as { name?: string }).name ?? v);
  if (typeof v === 'object' && (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype)) {
    const obj = v as Record<string, unknown>;
    return `{${Object.keys(obj)
      .map((k) => `${formatNested(k, clause)}: ${formatNested(obj[k], clause)}`)
      .sort()
      .join(', ')}}`;
  }
  throw evalError(`error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${describe(v)}`);
}

function formatNested(v: unknown, clause: string): string {
  return formatString(v, clause);
}

function formatDouble(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (d === Infinity) return 'Infinity';
  if (d === -Infinity) return '-Infinity';
  return String(d);
}

function describe(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof Uint8Array) return 'bytes';
  if (isUint(v)) return 'uint';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (isDuration(v)) return 'google.protobuf.Duration';
  return 'map';
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (isUint(v)) return Number(v.value);
  return undefined;
}

function fixedPoint(v: unknown, precision: number): string {
  const n = toNumber(v);
  if (typeof v !== 'number' && !(typeof v === 'bigint' || isUint(v))) {
    throw evalError(`error during formatting: fixed-point clause can only be used on doubles, was given ${describe(v)}`);
  }
  if (n === undefined) throw evalError('error during formatting: fixed-point clause can only be used on doubles');
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  // Go rounds a value exactly halfway to the nearest even digit; toFixed rounds it away from
  // zero. A tie is exact only when the binary value's full decimal expansion ends in 5 there.
  const expansion = Math.abs(n).toFixed(Math.min(100, precision + 40));
  const rest = expansion.slice(expansion.indexOf('.') + 1 + precision);
  if (/^50*$/.test(rest)) {
    const truncated = expansion.slice(0, expansion.indexOf('.') + (precision ? 1 + precision : 0));
    const lastDigit = Number(truncated.replace('.', '').slice(-1));
    const down = (n < 0 ? '-' : '') + truncated;
    if (lastDigit % 2 === 0) return down;
  }
  return n.toFixed(precision);
}

function scientific(v: unknown, precision: number): string {
  const n = toNumber(v);
  if (typeof v !== 'number' || n === undefined) throw evalError(`error during formatting: scientific clause can only be used on doubles, was given ${describe(v)}`);
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  // Go prints at least two exponent digits: 1.000000e+03
  return n.toExponential(precision).replace(/e([+-])(\d)$/, 'e$10$2');
}

function integerClause(v: unknown, radix: number, clause: string, upper = false): string {
  if (typeof v === 'bigint' || isUint(v)) {
    const b = typeof v === 'bigint' ? v : v.value;
    const text = (b < 0n ? '-' + (-b).toString(radix) : b.toString(radix));
    return upper ? text.toUpperCase() : text;
  }
  if (clause === 'x' || clause === 'X') {
    let hex: string | undefined;
    if (typeof v === 'string') hex = Buffer.from(v, 'utf8').toString('hex');
    else if (v instanceof Uint8Array) hex = Buffer.from(v).toString('hex');
    if (hex !== undefined) return upper ? hex.toUpperCase() : hex;
    throw evalError(`error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${describe(v)}`);
  }
  if (clause === 'd' && typeof v === 'number' && !Number.isFinite(v)) return formatDouble(v);
  if (clause === 'd') throw evalError(`error during formatting: decimal clause can only be used on integers, was given ${describe(v)}`);
  if (clause === 'b' && typeof v === 'boolean') return v ? '1' : '0';
  const name = clause === 'b' ? 'binary' : 'octal';
  throw evalError(`error during formatting: only integers${clause === 'b' ? ' and bools' : ''} can be formatted as ${name}, was given ${describe(v)}`);
}

/** `"...".format([args])` with the clauses %s %d %f %e %b %o %x %X %% (upstream strings library). */
export function format(template: string, args: readonly unknown[]): string {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch !== '%') {
      out += ch;
      continue;
    }
    i++;
    if (i >= template.length) throw evalError('error during formatting: unexpected end of string');
    if (template[i] === '%') {
      out += '%';
      continue;
    }
    let precision: number | undefined;
    if (template[i] === '.') {
      let digits = '';
      i++;
      while (i < template.length && /[0-9]/.test(template[i])) digits += template[i++];
      precision = digits === '' ? 0 : Number(digits);
      if (i >= template.length) throw evalError('error during formatting: unexpected end of string');
    }
    const clause = template[i];
    if (argIndex >= args.length) throw evalError(`index ${argIndex} out of range`);
    const arg = args[argIndex++];
    switch (clause) {
      case 's':
        out += formatString(arg, clause);
        break;
      case 'd':
        out += integerClause(arg, 10, clause);
        break;
      case 'f':
        out += fixedPoint(arg, precision ?? 6);
        break;
      case 'e':
        out += scientific(arg, precision ?? 6);
        break;
      case 'b':
        out += integerClause(arg, 2, clause);
        break;
      case 'o':
        out += integerClause(arg, 8, clause);
        break;
      case 'x':
        out += integerClause(arg, 16, clause);
        break;
      case 'X':
        out += integerClause(arg, 16, clause, true);
        break;
      default:
        throw evalError(`could not parse formatting clause: unrecognized formatting clause "${clause}"`);
    }
  }
  if (argIndex < args.length) throw evalError(`too many arguments supplied to string.format (expected ${argIndex}, got ${args.length})`);
  return out;
}

class StringsNamespace {}

export function registerStrings(env: Environment): void {
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => charAt(s, i), sync);
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b), sync);
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => replace(s, a, b, n), sync);
  env.registerFunction('string.format(list<dyn>): string', (s: string, args: readonly unknown[] | Set<unknown>) => format(s, [...args]), sync);
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  env.registerFunction('StringsNamespace.quote(string): string', (_ns: unknown, s: string) => quote(s), sync);
}
