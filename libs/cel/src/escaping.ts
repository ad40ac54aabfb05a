// Property names of schema objects as CEL identifiers (SPEC "Validation expressions", escaping;
// upstream apiserver/pkg/cel/escaping.go). A declared property is reachable from an expression
// under its escaped name, e.g. `self.x__dash__y` for `x-y`; a name that cannot be escaped is not
// reachable at all. Keys of maps (additionalProperties) are never escaped: `self.labels['a.b/c']`.

/** Reserved words of the expression language: such a property is reachable as `__<word>__`. */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);

const ESCAPES: Readonly<Record<string, string>> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };
const ESCAPE_RE = /__|[-./]/g;
const UNESCAPE_RE = /__(underscores|dot|dash|slash)__/g;
const UNESCAPES: Readonly<Record<string, string>> = { underscores: '__', dot: '.', dash: '-', slash: '/' };
const ESCAPABLE_RE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/**
 * The identifier under which a property is reachable, or undefined when it is not
 * (a name must match `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*`).
 */
export function escapePropertyName(name: string): string | undefined {
  if (!ESCAPABLE_RE.test(name)) return undefined;
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  return name.replace(ESCAPE_RE, (s) => ESCAPES[s]);
}

/** The property name an escaped identifier stands for (inverse of {@link escapePropertyName}). */
export function unescapePropertyName(ident: string): string {
  const word = /^__([a-z]+)__$/.exec(ident);
  if (word && CEL_RESERVED_WORDS.has(word[1])) return word[1];
  return ident.replace(UNESCAPE_RE, (_s, w: string) => UNESCAPES[w]);
}
