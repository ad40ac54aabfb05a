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

/**
 * Rewrites message construction into map literals: `T{f: v}` (T a type name such as `Object`,
 * `Object.spec.template` or `JSONPatch`) becomes `{"f": v}`, `T{?f: v}` becomes `{?"f": v}`.
 * Everything else, string literals included, is left as written.
 */
export function rewriteObjectLiterals(expression: string): string {
  const tokens = tokenize(expression);
  const out: Token[] = [];
  /** Open brackets: for `{`, whether it is a message (its field names are quoted). */
  const stack: { open: string; message: boolean }[] = [];
  let expectField = false;
  const last = (from: number) => {
    let j = from;
    while (j >= 0 && out[j].kind === 'space') j--;
    return j;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'punct' && t.text === '{') {
      // A type name right before `{`: an identifier chain that is not a member of an expression.
      const j = last(out.length - 1);
      let message = false;
      if (j >= 0 && out[j].kind === 'ident' && !KEYWORDS.has(out[j].text)) {
        let start = j;
        while (start >= 2 && out[start - 1].text === '.' && out[start - 2].kind === 'ident') start -= 2;
        const before = last(start - 1);
        if (before < 0 || !(out[before].text === '.' || (out[before].kind === 'ident' && !KEYWORDS.has(out[before].text)) || out[before].text === ')' || out[before].text === ']' || out[before].kind === 'string')) {
          out.length = start;
          message = true;
        }
      }
      out.push(t);
      stack.push({ open: '{', message });
      expectField = message;
      continue;
    }
    if (t.kind === 'punct' && (t.text === '(' || t.text === '[')) {
      stack.push({ open: t.text, message: false });
      expectField = false;
    } else if (t.kind === 'punct' && (t.text === ')' || t.text === ']' || t.text === '}')) {
      stack.pop();
      expectField = false;
    } else if (t.kind === 'punct' && t.text === ',') {
      expectField = stack.at(-1)?.message ?? false;
    } else if (expectField && t.kind === 'ident') {
      let k = i + 1;
      while (tokens[k]?.kind === 'space') k++;
      if (tokens[k]?.text === ':') {
        out.push({ kind: 'string', text: JSON.stringify(t.text) });
        expectField = false;
        continue;
      }
      expectField = false;
    } else if (expectField && !(t.kind === 'space' || t.text === '?')) {
      expectField = false;
    }
    out.push(t);
  }
  return out.map((t) => t.text).join('');
}
