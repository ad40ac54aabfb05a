import YAML, { isMap, isScalar, isSeq, type Node as YamlNode, type Tags } from 'yaml';
import { StatusError } from './errors';

// Request body decoding with duplicate-key reporting, and response body encoding.

/** A decoded body and every key given more than once, as paths like `.metadata.labels.a`. */
export interface Decoded {
  value: unknown;
  /** One entry per repeated occurrence, in document order; the last occurrence wins in `value`. */
  duplicates: string[];
}

/**
 * Nesting limit of objects and arrays in request bodies. Go's encoding/json allows 10000; here
 * every layer after decoding (schema walk, merge patches, managed fields, encoding) recurses
 * once per level, so the limit sits far below the JavaScript stack while far above any real
 * object (the deepest CRD schemas nest about 60 levels).
 */
export const MAX_BODY_DEPTH = 256;
const MAX_DEPTH = MAX_BODY_DEPTH;
/** Values (objects, arrays, scalars) one request body may hold, so one body cannot occupy the gateway for long. */
export const MAX_BODY_VALUES = 200_000;

/**
 * Parses a JSON body. Native JSON.parse builds the value; a validating scanner then finds
 * duplicate keys, and on malformed input reports the problem (in Go's encoding/json wording)
 * with its line and column as a 400.
 */
export function decodeJson(buf: Buffer | string): Decoded {
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    scanJson(text); // throws the positioned error
    throw StatusError.badRequest(`json parse error: ${(e as Error).message}`);
  }
  // Every object key in the text is followed by a ':', so as many ':' as keys parsed means no key
  // was given twice (JSON.parse keeps the last): the scan, which finds duplicates and the nesting
  // error, runs only when a ':' is in a string or the value is too deep.
  const shape = bodyShape(value);
  const duplicates = shape.tooDeep || colonsIn(text) !== shape.keys ? scanJson(text) : [];
  if (shape.values > MAX_BODY_VALUES) throw tooManyValues();
  return { value, duplicates };
}

/**
 * The values and object keys of a decoded body, and whether a container has MAX_DEPTH
 * containers around it (where the JSON scanner stops with its depth error). Counted without
 * recursion and only up to one past MAX_BODY_VALUES: a YAML document's aliases may repeat a
 * value many times, so the walk must stop there.
 */
function bodyShape(value: unknown): { values: number; keys: number; tooDeep: boolean } {
  const pending: unknown[] = [value];
  const depths: number[] = [0];
  let values = 0;
  let keys = 0;
  let tooDeep = false;
  while (pending.length && values <= MAX_BODY_VALUES) {
    const v = pending.pop();
    const depth = depths.pop()!;
    values++;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) tooDeep = true;
    const children = Array.isArray(v) ? v : Object.values(v);
    if (!Array.isArray(v)) keys += children.length;
    for (const x of children) {
      pending.push(x);
      depths.push(depth + 1);
    }
  }
  return { values, keys, tooDeep };
}

/** How many ':' a text holds. */
function colonsIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) n++;
  return n;
}

function tooManyValues(): StatusError {
  return StatusError.badRequest(`the body holds more than ${MAX_BODY_VALUES} values (objects, lists and scalars); split it or make it smaller`);
}

/** A 400 when a decoded body holds more than MAX_BODY_VALUES values. */
function checkValueCount(value: unknown): void {
  if (bodyShape(value).values > MAX_BODY_VALUES) throw tooManyValues();
}

/**
 * An upper bound of a YAML text's nesting depth, found without parsing it (the yaml library
 * recurses once per level and overflows the stack a few hundred levels down): per line, the
 * open indentation levels, the block indicators opening levels within the line (`- `, `? `,
 * `key: `) and the flow collections (`[`, `{`) open outside quoted scalars.
 */
export function yamlNestingBound(text: string): number {
  let max = 0;
  let flow = 0;
  const indents: number[] = [];
  for (const line of text.split('\n')) {
    const content = line.trimStart();
    if (!content || content.startsWith('#')) continue;
    const indent = line.length - content.length;
    while (indents.length && indents[indents.length - 1] >= indent) indents.pop();
    indents.push(indent);
    let inline = 0;
    let quote = '';
    for (let i = 0; i < content.length; i++) {
      const c = content[i];
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '"' || c === "'") {
        quote = c;
      } else if (c === '#' && content[i - 1] === ' ') {
        break;
      } else if (c === '[' || c === '{') {
        flow++;
      } else if ((c === ']' || c === '}') && flow > 0) {
        flow--;
      } else if ((c === '-' || c === '?' || c === ':') && (i + 1 === content.length || content[i + 1] === ' ')) {
        inline++;
      }
      max = Math.max(max, indents.length + inline + flow);
    }
  }
  return max;
}

class JsonProblem extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

interface Frame {
  array: boolean;
  /** Index of the current element (arrays). */
  index: number;
  /** Current key (objects). */
  key: string;
  keys: Set<string> | undefined;
}

/** Go's quoteChar: the offending character as it appears in encoding/json errors. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const q = JSON.stringify(c).slice(1, -1);
  return `'${q.replace(/\\u00([0-9a-f]{2})/g, '\\x$1')}'`;
}

function scanJson(text: string): string[] {
  try {
    return new JsonScanner(text).scan();
  } catch (e) {
    if (!(e instanceof JsonProblem)) throw e;
    const before = text.slice(0, e.offset);
    const line = before.split('\n').length;
    const column = e.offset - before.lastIndexOf('\n');
    throw StatusError.badRequest(`json parse error at line ${line}, column ${column}: ${e.message}`);
  }
}

/** An iterative (stack-based) validating JSON scanner that records duplicate keys. */
class JsonScanner {
  private i = 0;
  private readonly stack: Frame[] = [];
  private readonly duplicates: string[] = [];

  constructor(private readonly text: string) {}

  scan(): string[] {
    const t = this.text;
    for (;;) {
      // A value is expected at this point.
      this.skipWs();
      const c = this.peek();
      if (c === '{' || c === '[') {
        if (this.stack.length >= MAX_DEPTH) throw new JsonProblem(`exceeded max depth of ${MAX_DEPTH}`, this.i);
        this.i++;
        this.skipWs();
        const close = c === '{' ? '}' : ']';
        if (this.peek() === close) {
          this.i++;
        } else {
          const frame: Frame = { array: c === '[', index: 0, key: '', keys: c === '{' ? new Set() : undefined };
          this.stack.push(frame);
          if (!frame.array) this.readKey(frame);
          continue;
        }
      } else if (c === '"') {
        this.scanString();
      } else if (c === '-' || (c >= '0' && c <= '9')) {
        this.scanNumber();
      } else if (c === 't' || c === 'f' || c === 'n') {
        this.scanLiteral(c === 't' ? 'true' : c === 'f' ? 'false' : 'null');
      } else {
        throw new JsonProblem(`invalid character ${quoteChar(c)} looking for beginning of value`, this.i);
      }
      // After a complete value: close containers or move to the next element.
      for (;;) {
        this.skipWs();
        const top = this.stack[this.stack.length - 1];
        if (!top) {
          if (this.i < t.length) throw new JsonProblem(`invalid character ${quoteChar(t[this.i])} after top-level value`, this.i);
          return this.duplicates;
        }
        const d = this.peek();
        if (d === ',') {
          this.i++;
          if (top.array) {
            top.index++;
          } else {
            this.skipWs();
            this.readKey(top);
          }
          break;
        }
        if (d === (top.array ? ']' : '}')) {
          this.i++;
          this.stack.pop();
          continue;
        }
        throw new JsonProblem(`invalid character ${quoteChar(d)} ${top.array ? 'after array element' : 'after object key:value pair'}`, this.i);
      }
    }
  }

  /** The next character; end of input is an error wherever a character is required. */
  private peek(): string {
    if (this.i >= this.text.length) throw new JsonProblem('unexpected end of JSON input', this.i);
    return this.text[this.i];
  }

  private skipWs(): void {
    const t = this.text;
    let i = this.i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.i = i;
  }

  /** Reads `"key" :` into the frame, recording the key if the object already had it. */
  private readKey(frame: Frame): void {
    const c = this.peek();
    if (c !== '"') throw new JsonProblem(`invalid character ${quoteChar(c)} looking for beginning of object key string`, this.i);
    const start = this.i;
    const hasEscape = this.scanString();
    const key = hasEscape ? (JSON.parse(this.text.slice(start, this.i)) as string) : this.text.slice(start + 1, this.i - 1);
    frame.key = key;
    if (frame.keys!.has(key)) this.duplicates.push(this.path());
    else frame.keys!.add(key);
    this.skipWs();
    const d = this.peek();
    if (d !== ':') throw new JsonProblem(`invalid character ${quoteChar(d)} after object key`, this.i);
    this.i++;
  }

  private path(): string {
    return this.stack.map((f) => (f.array ? `[${f.index}]` : `.${f.key}`)).join('');
  }

  /** Scans a string starting at its opening quote; returns whether it contained escapes. */
  private scanString(): boolean {
    const t = this.text;
    let i = this.i + 1;
    let escaped = false;
    for (;;) {
      if (i >= t.length) {
        this.i = i;
        throw new JsonProblem('unexpected end of JSON input', i);
      }
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.i = i + 1;
        return escaped;
      }
      if (c === 0x5c) {
        escaped = true;
        i++;
        if (i >= t.length) throw new JsonProblem('unexpected end of JSON input', i);
        const e = t[i];
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (i + k >= t.length) throw new JsonProblem('unexpected end of JSON input', i + k);
            if (!/[0-9a-fA-F]/.test(t[i + k])) throw new JsonProblem(`invalid character ${quoteChar(t[i + k])} in \\u hexadecimal character escape`, i + k);
          }
          i += 5;
        } else if ('"\\/bfnrt'.includes(e)) {
          i++;
        } else {
          throw new JsonProblem(`invalid character ${quoteChar(e)} in string escape code`, i);
        }
      } else if (c < 0x20) {
        throw new JsonProblem(`invalid character ${quoteChar(t[i])} in string literal`, i);
      } else {
        i++;
      }
    }
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  private scanNumber(): void {
    const t = this.text;
    const digit = (k: number): boolean => k < t.length && t.charCodeAt(k) >= 0x30 && t.charCodeAt(k) <= 0x39;
    const need = (k: number): void => {
      if (k >= t.length) throw new JsonProblem('unexpected end of JSON input', k);
      if (!digit(k)) throw new JsonProblem(`invalid character ${quoteChar(t[k])} in numeric literal`, k);
    };
    let i = this.i;
    if (t[i] === '-') i++;
    need(i);
    if (t[i] === '0') i++;
    else while (digit(i)) i++;
    if (t[i] === '.') {
      need(++i);
      while (digit(i)) i++;
    }
    if (t[i] === 'e' || t[i] === 'E') {
      i++;
      if (t[i] === '+' || t[i] === '-') i++;
      need(i);
      while (digit(i)) i++;
    }
    this.i = i;
  }

  private scanLiteral(word: 'true' | 'false' | 'null'): void {
    for (let k = 1; k < word.length; k++) {
      const at = this.i + k;
      if (at >= this.text.length) throw new JsonProblem('unexpected end of JSON input', at);
      if (this.text[at] !== word[k]) throw new JsonProblem(`invalid character ${quoteChar(this.text[at])} in literal ${word} (expecting '${word[k]}')`, at);
    }
    this.i += word.length;
  }
}

// ---------------------------------------------------------------- YAML

/** Tags whose values are not JSON (dates, sets, binary) or surprising (sexagesimal numbers). */
const NON_JSON_TAGS = new Set(['tag:yaml.org,2002:timestamp', 'tag:yaml.org,2002:binary', 'tag:yaml.org,2002:set', 'tag:yaml.org,2002:omap', 'tag:yaml.org,2002:pairs']);

const YAML_PARSE_OPTIONS = {
  // YAML 1.1 scalars (yes/no booleans, 0777 octal, merge keys) as Go's yaml.v2 resolves them,
  // minus types JSON cannot carry: timestamps stay strings, explicit !!binary/!!set are plain.
  version: '1.1' as const,
  uniqueKeys: false,
  customTags: (tags: Tags) => tags.filter((t) => typeof t === 'string' || (!NON_JSON_TAGS.has(t.tag) && t.format !== 'TIME')),
};

function yamlError(message: string, line?: number): StatusError {
  return StatusError.badRequest(`error converting YAML to JSON: yaml: ${line ? `line ${line}: ` : ''}${message}`);
}

/**
 * Parses a YAML (or JSON) body holding one object. Duplicate keys are reported in
 * `duplicates` (not thrown). More than one non-empty document, a syntax error or a
 * non-object document is a 400.
 */
export function decodeYaml(buf: Buffer | string): Decoded {
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  if (/^\s*\{/.test(text)) {
    // JSON (the common case, e.g. kubectl apply --server-side) takes the fast exact path;
    // flow-style YAML that is not JSON falls through to the YAML parser.
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined) {
      const duplicates = scanJson(text);
      checkValueCount(value);
      return { value, duplicates };
    }
  }
  if (yamlNestingBound(text) > MAX_DEPTH) throw yamlError(`exceeded max depth of ${MAX_DEPTH}`);
  const docs = YAML.parseAllDocuments(text, YAML_PARSE_OPTIONS);
  for (const doc of docs) {
    const err = doc.errors[0];
    if (err) throw yamlError(err.message.split(' at line ')[0].split('\n')[0], err.linePos?.[0].line);
  }
  const nonEmpty = docs.filter((d) => d.contents !== null && !(isScalar(d.contents) && d.contents.value === null));
  if (nonEmpty.length > 1) throw StatusError.badRequest(`the body contains ${nonEmpty.length} YAML documents; exactly one object is expected`);
  const doc = nonEmpty[0];
  if (!doc || !isMap(doc.contents)) {
    const got = !doc ? 'nothing' : isSeq(doc.contents) ? 'a list' : 'a scalar';
    throw StatusError.badRequest(`the YAML body must decode to an object, got ${got}`);
  }
  const duplicates: string[] = [];
  yamlDuplicates(doc.contents, '', duplicates, text);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw yamlError((e as Error).message);
  }
  checkValueCount(value);
  return { value, duplicates };
}

function lineOf(text: string, offset: number | undefined): number | undefined {
  return offset === undefined ? undefined : text.slice(0, offset).split('\n').length;
}

function yamlDuplicates(node: YamlNode | null, path: string, out: string[], text: string): void {
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const k = pair.key as YamlNode | null;
      if (!isScalar(k)) throw yamlError('mapping keys must be strings, numbers or booleans', lineOf(text, (k as YamlNode | null)?.range?.[0]));
      if (typeof k.value === 'symbol') continue; // `<<` merge key
      const key = k.value === null ? '' : String(k.value);
      if (seen.has(key)) out.push(`${path}.${key}`);
      seen.add(key);
      yamlDuplicates(pair.value as YamlNode | null, `${path}.${key}`, out, text);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => yamlDuplicates(item as YamlNode | null, `${path}[${i}]`, out, text));
  }
}

// ---------------------------------------------------------------- encoding

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;

/**
 * JSON as the upstream apiserver writes it: HTML-sensitive characters escaped (`\u003c`),
 * a trailing newline, two-space indentation when `pretty`.
 */
export function encodeJson(obj: unknown, pretty = false): string {
  const text = JSON.stringify(obj, null, pretty ? 2 : undefined) ?? 'null';
  return `${text.replace(HTML_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/**
 * YAML as upstream (Go yaml.v2) writes it: keys sorted, sequences not indented under their
 * key, strings quoted where a YAML 1.1 reader would see another type (`"yes"`, timestamps).
 */
export function encodeYaml(obj: unknown): string {
  return YAML.stringify(obj, { version: '1.1', sortMapEntries: true, indentSeq: false, lineWidth: 0, aliasDuplicateObjects: false });
}
