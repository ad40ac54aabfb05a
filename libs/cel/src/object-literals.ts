// Message construction (`Object{spec: Object.spec{replicas: 1}}`, `JSONPatch{op: "add", ...}`)
// for expressions that build objects (mutating admission policies). The engine has no message
// literals, so such an expression is rewritten, before it is compiled, into the map literal
// of the same fields (`{"spec": {"replicas": 1}}`): the values the expression builds are then
// maps with the fields as keys, which is what a JSON object of the type would convert to.

const KEYWORDS = new Set(['in', 'true', 'false', 'null']);

interface Token {
  kind: 'ident' | 'string' | 'space' | 'punct' | 'other';
  text: string;
}

/** Splits an expression into identifiers, string literals (with their prefixes), blanks and single characters. */
function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const prefix = /^[rRbB]{0,2}/.exec(src.slice(i, i + 2))![0];
    const q = src[i + prefix.length];
    if ((q === '"' || q === "'") && (prefix === '' || /^(?:[rR]|[bB]|[rR][bB]|[bB][rR])$/.test(prefix))) {
      const raw = /[rR]/.test(prefix);
      const start = i;
      i += prefix.length;
      const triple = src.startsWith(q.repeat(3), i);
      const close = triple ? q.repeat(3) : q;
      i += close.length;
      while (i < src.length && !src.startsWith(close, i)) i += !raw && src[i] === '\\' ? 2 : 1;
      i += close.length;
      out.push({ kind: 'string', text: src.slice(start, i) });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))![0];
      out.push({ kind: 'ident', text: m });
      i += m.length;
    } else if (/\s/.test(c)) {
      const m = /^\s+/.exec(src.slice(i))![0];
      out.push({ kind: 'space', text: m });
      i += m.length;
    } else {
      out.push({ kind: '{}()[],:.?'.includes(c) ? 'punct' : 'other', text: c });
      i++;
    }
  }
  return out;
}

/** What the rewrite learnt of an expression's message constructions. */
export interface ObjectLiterals {
  /** The expression with every construction `T{f: v}` written as `dyn({"f": v})`. */
  source: string;
  /** The type name of the construction that is the whole expression, if it is one. */
  root?: string;
  /**
   * The first construction whose type name is not its field's path from its enclosing `Object`
   * type (`Object.spec{template: Object.spec.templatex{}}`), in upstream's words.
   */
  typeMismatch?: string;
}

/** The type names of an object's fields are the field path from the root type `Object` (upstream's dynamic object types). */
const isObjectType = (name: string) => name === 'Object' || name.startsWith('Object.');

/**
 * Rewrites message construction into map literals: `T{f: v}` (T a type name such as `Object`,
 * `Object.spec.template` or `JSONPatch`) becomes `dyn({"f": v})`, `T{?f: v}` becomes
 * `dyn({?"f": v})` (dynamic, as upstream's object types are to the checker, so a construction
 * is never taken for a map literal). Everything else, string literals included, is left as
 * written. Checks on the way that a construction given directly as the value of field `f` of an
 * `Object...` construction `P`, or as an item of a list literal given so, is named `P.f`.
 */
export function analyseObjectLiterals(expression: string): ObjectLiterals {
  const tokens = tokenize(expression);
  const out: Token[] = [];
  /** Open brackets: for `{`, whether it is a message (its field names are quoted) and its type name. */
  const stack: { open: string; message: boolean; name?: string; itemType?: string }[] = [];
  let expectField = false;
  /** Where (an index into `out`) a value starts whose construction must be named `expected.name`. */
  let expected: { at: number; name: string } | undefined;
  let typeMismatch: string | undefined;
  let root: { name: string; closedAt?: number } | undefined;
  const last = (from: number) => {
    let j = from;
    while (j >= 0 && out[j].kind === 'space') j--;
    return j;
  };
  const firstFrom = (from: number) => {
    let j = from;
    while (j < out.length && out[j].kind === 'space') j++;
    return j;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'punct' && t.text === '{') {
      // A type name right before `{`: an identifier chain that is not a member of an expression.
      const j = last(out.length - 1);
      let name: string | undefined;
      if (j >= 0 && out[j].kind === 'ident' && !KEYWORDS.has(out[j].text)) {
        let start = j;
        while (start >= 2 && out[start - 1].text === '.' && out[start - 2].kind === 'ident') start -= 2;
        const before = last(start - 1);
        if (before < 0 || !(out[before].text === '.' || (out[before].kind === 'ident' && !KEYWORDS.has(out[before].text)) || out[before].text === ')' || out[before].text === ']' || out[before].kind === 'string')) {
          name = out.slice(start, j + 1).map((x) => x.text).join('');
          if (expected && firstFrom(expected.at) === start && name !== expected.name && !typeMismatch) {
            typeMismatch = `type mismatch: unexpected type name ${JSON.stringify(name)}, expected ${JSON.stringify(expected.name)}, which matches field name path from root Object type`;
          }
          if (stack.length === 0 && before < 0) root = { name };
          out.length = start;
          out.push({ kind: 'ident', text: 'dyn' }, { kind: 'punct', text: '(' });
        }
      }
      expected = undefined;
      out.push(t);
      stack.push({ open: '{', message: name !== undefined, name });
      expectField = name !== undefined;
      continue;
    }
    if (t.kind === 'punct' && (t.text === '(' || t.text === '[')) {
      const itemType = t.text === '[' && expected && firstFrom(expected.at) === out.length ? expected.name : undefined;
      stack.push({ open: t.text, message: false, itemType });
      expectField = false;
      out.push(t);
      expected = itemType ? { at: out.length, name: itemType } : undefined;
      continue;
    } else if (t.kind === 'punct' && (t.text === ')' || t.text === ']' || t.text === '}')) {
      const closed = stack.pop();
      expectField = false;
      expected = undefined;
      if (closed?.message) {
        out.push(t, { kind: 'punct', text: ')' });
        if (stack.length === 0 && root && root.closedAt === undefined) root.closedAt = out.length;
        continue;
      }
    } else if (t.kind === 'punct' && t.text === ',') {
      const top = stack.at(-1);
      expectField = top?.message ?? false;
      out.push(t);
      expected = top?.itemType ? { at: out.length, name: top.itemType } : undefined;
      continue;
    } else if (expectField && t.kind === 'ident') {
      let k = i + 1;
      while (tokens[k]?.kind === 'space') k++;
      if (tokens[k]?.text === ':') {
        out.push({ kind: 'string', text: JSON.stringify(t.text) });
        expectField = false;
        const parent = stack.at(-1)?.name;
        // The value after the colon: a construction there is this field's type.
        if (parent && isObjectType(parent)) {
          for (i++; i < k; i++) out.push(tokens[i]);
          out.push(tokens[k]);
          i = k;
          expected = { at: out.length, name: `${parent}.${t.text}` };
        }
        continue;
      }
      expectField = false;
    } else if (expectField && !(t.kind === 'space' || t.text === '?')) {
      expectField = false;
    }
    out.push(t);
  }
  const source = out.map((t) => t.text).join('');
  const isRoot = root?.closedAt !== undefined && firstFrom(root.closedAt) === out.length;
  return { source, ...(isRoot ? { root: root!.name } : {}), ...(typeMismatch ? { typeMismatch } : {}) };
}

/** The expression with message constructions written as map literals (see {@link analyseObjectLiterals}). */
export function rewriteObjectLiterals(expression: string): string {
  return analyseObjectLiterals(expression).source;
}
