// Regular expressions with RE2 semantics and linear-time matching (re2js): the standard
// `matches` (replacing the engine's JavaScript RegExp, which backtracks) and the SPEC regex
// library `find` and `findAll` (upstream apiserver/pkg/cel/library/regex.go).

import { RE2JS } from 're2js';
import { evalError, type Environment } from '../engine';

const sync = { async: false };
const CACHE_LIMIT = 500;
const compiled = new Map<string, RE2JS>();

/** Compiles an RE2 pattern (cached); throws the engine's evaluation error when invalid. */
export function compileRegex(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re) return re;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    throw evalError(`invalid regular expression '${pattern}': ${(e as Error).message}`);
  }
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value!);
  compiled.set(pattern, re);
  return re;
}

/** The reason a pattern is not valid RE2, or undefined when it is. */
export function regexError(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * The shape of pattern a JavaScript RegExp matches exactly as RE2 does, in time linear in the
 * input: anchored at the start (`^`, so one starting position), then ASCII letters, digits and
 * `_` or positive classes of them (single characters and ranges, `-` literal first or last),
 * optionally `$` (end of text in both without the m flag); at most one item quantified (`+`,
 * `*` or `?`: see plainRegex). No flag, group, alternation, escape, `.` or negated class: they
 * differ between the two or backtrack.
 */
const PLAIN_PATTERN = /^\^(?:(?:[A-Za-z0-9_]|\[-?(?:[A-Za-z0-9_](?:-[A-Za-z0-9_])?)+-?\])[+*?]?)*\$?$/;
const plainRegexes = new WeakMap<RE2JS, RegExp | null>();

/** A JavaScript RegExp of `pattern` (compiled by RE2 as `re`) when it has PLAIN_PATTERN's shape (null otherwise; decided once per compiled pattern). */
function plainRegex(re: RE2JS, pattern: string): RegExp | null {
  let plain = plainRegexes.get(re);
  if (plain === undefined) {
    // One quantifier at most: with more (`^a?a?a?...`) a backtracking engine can take exponential time.
    plain = PLAIN_PATTERN.test(pattern) && (pattern.match(/[+*?]/g)?.length ?? 0) <= 1 ? new RegExp(pattern) : null;
    plainRegexes.set(re, plain);
  }
  return plain;
}

/** `s.matches(re)`: whether re matches any substring of s (re2js `test`: `matcher(s).find()`'s answer without a Matcher or its groups; a JavaScript RegExp for the plainest patterns, see PLAIN_PATTERN). */
export function matches(s: string, pattern: string): boolean {
  const re = compileRegex(pattern);
  const plain = plainRegex(re, pattern);
  return plain ? plain.test(s) : re.test(s);
}

/** `s.find(re)`: the first match, or `''`. */
export function find(s: string, pattern: string): string {
  const m = compileRegex(pattern).matcher(s);
  return m.find() ? (m.group() ?? '') : '';
}

/** `s.findAll(re[, limit])`: every non-overlapping match (at most limit; limit < 0: all). */
export function findAll(s: string, pattern: string, limit = -1n): string[] {
  if (limit === 0n) return [];
  const m = compileRegex(pattern).matcher(s);
  const out: string[] = [];
  while ((limit < 0n || BigInt(out.length) < limit) && m.find()) out.push(m.group() ?? '');
  return out;
}

export function registerRegex(env: Environment): void {
  env.registerFunction('string.find(string): string', find, sync);
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p), sync);
  env.registerFunction('string.findAll(string, int): list<string>', findAll, sync);
}
