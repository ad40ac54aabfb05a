import type { FieldSelector, LabelSelector } from '@orch/apimachinery';

// Watch events from the stored text (issue 16 item 4, issue 12 item 6): an event's object as the
// resource serves it, and what a watcher's selectors ask of it, read off the stored JSON text
// without parsing the object.

const METADATA_HEAD = '"metadata":{';
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;

/**
 * Where the top-level metadata of a stored text ends, and the values of the members a watch
 * selects on: [xAt, xEnd) of each, -1 when absent (numbers, not tuples: no allocation per text).
 */
interface MetadataSpans {
  /** Index of the metadata object's closing brace. */
  end: number;
  /** The metadata object has no members. */
  empty: boolean;
  nameAt: number;
  nameEnd: number;
  namespaceAt: number;
  namespaceEnd: number;
  labelsAt: number;
  labelsEnd: number;
}

/** Index just after the JSON string that starts at `i` (an opening quote), or -1. */
function skipString(json: string, i: number): number {
  for (let from = i + 1; ; ) {
    const q = json.indexOf('"', from);
    if (q < 0) return -1;
    if (json.charCodeAt(q - 1) !== BACKSLASH) return q + 1;
    let b = q - 2;
    while (json.charCodeAt(b) === BACKSLASH) b--;
    // An even number of backslashes before the quote: it closes the string.
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just after the JSON value that starts at `i` (compact JSON: no whitespace), or -1. */
function skipValue(json: string, i: number): number {
  const c = json.charCodeAt(i);
  if (c === QUOTE) return skipString(json, i);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 1;
    for (let j = i + 1; j < json.length; j++) {
      const d = json.charCodeAt(j);
      if (d === QUOTE) {
        j = skipString(json, j) - 1;
        if (j < 0) return -1;
      } else if (d === LBRACE || d === LBRACKET) depth++;
      else if ((d === RBRACE || d === RBRACKET) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  for (let d = c; j < json.length && d !== COMMA && d !== RBRACE && d !== RBRACKET; d = json.charCodeAt(++j));
  return j > i ? j : -1;
}

/** Whether the member name at `at` (its opening quote) is `"<name>":`. */
const memberIs = (json: string, at: number, nameEnd: number, name: string) => nameEnd - at === name.length + 2 && json.startsWith(name, at + 1);

/**
 * The spans of a stored text's top-level metadata, read without parsing: stored objects are
 * compact JSON (JSON.stringify) beginning with apiVersion and kind (validated strings) and then
 * metadata, so the first `"metadata":{` is the top-level one. Undefined when the text does not
 * have that shape, when it already carries a resourceVersion, or when a member name is escaped
 * (the caller parses such a text instead).
 */
function scanMetadata(json: string): MetadataSpans | undefined {
  if (!json.startsWith('{"apiVersion":"')) return undefined;
  const at = json.indexOf(METADATA_HEAD);
  if (at < 0 || at > 512) return undefined;
  const spans: MetadataSpans = { end: -1, empty: true, nameAt: -1, nameEnd: -1, namespaceAt: -1, namespaceEnd: -1, labelsAt: -1, labelsEnd: -1 };
  let i = at + METADATA_HEAD.length;
  if (json.charCodeAt(i) === RBRACE) {
    spans.end = i;
    return spans;
  }
  spans.empty = false;
  for (;;) {
    if (json.charCodeAt(i) !== QUOTE) return undefined;
    const nameEnd = skipString(json, i);
    if (nameEnd < 0 || json.charCodeAt(nameEnd) !== COLON) return undefined;
    for (let k = i + 1; k < nameEnd - 1; k++) if (json.charCodeAt(k) === BACKSLASH) return undefined;
    if (memberIs(json, i, nameEnd, 'resourceVersion')) return undefined;
    const valueAt = nameEnd + 1;
    const valueEnd = skipValue(json, valueAt);
    if (valueEnd < 0) return undefined;
    if (memberIs(json, i, nameEnd, 'name')) [spans.nameAt, spans.nameEnd] = [valueAt, valueEnd];
    else if (memberIs(json, i, nameEnd, 'namespace')) [spans.namespaceAt, spans.namespaceEnd] = [valueAt, valueEnd];
    else if (memberIs(json, i, nameEnd, 'labels')) [spans.labelsAt, spans.labelsEnd] = [valueAt, valueEnd];
    const next = json.charCodeAt(valueEnd);
    if (next === RBRACE) {
      spans.end = valueEnd;
      return spans;
    }
    if (next !== COMMA) return undefined;
    i = valueEnd + 1;
  }
}

/**
 * One stored object as a watch serves it, as JSON text, shared by every watcher sent it (the
 * pipeline keeps its encoded frames by this object): the stored text with
 * `"resourceVersion":"<revision>"` as the last member of metadata, byte for byte what
 * JSON.stringify writes for the parsed object with its resourceVersion set (the object path).
 * It holds the stored string itself (the one the watch cache and the history hold), not a copy.
 */
export class StoredText {
  private parsedLabels?: Record<string, string>;
  /** What goes in before metadata's closing brace. */
  private readonly member: string;

  private constructor(
    private readonly stored: string,
    private readonly spans: MetadataSpans,
    revision: number,
  ) {
    this.member = `${spans.empty ? '' : ','}"resourceVersion":"${revision}"`;
  }

  /**
   * `stored` served at `revision`, or undefined when it is not in the stored shape the
   * splice relies on (see scanMetadata): the caller parses it instead.
   */
  static of(stored: string, revision: number): StoredText | undefined {
    const spans = scanMetadata(stored);
    return spans && new StoredText(stored, spans, revision);
  }

  /** The JSON text (made when asked: the pipeline writes it once per event for every watcher). */
  get text(): string {
    return `${this.stored.slice(0, this.spans.end)}${this.member}${this.stored.slice(this.spans.end)}`;
  }

  /** Whether the object is in the selection (labels, and field selectors on metadata.name / metadata.namespace only: see selectsOnMetadata). */
  matches(labels: LabelSelector, fields: FieldSelector, namespaced: boolean): boolean {
    if (!labels.empty() && !labels.matches(this.labels())) return false;
    if (fields.empty()) return true;
    const attrs: Record<string, string> = { 'metadata.name': this.stringAt(this.spans.nameAt, this.spans.nameEnd) };
    if (namespaced) attrs['metadata.namespace'] = this.stringAt(this.spans.namespaceAt, this.spans.namespaceEnd);
    return fields.matches(attrs);
  }

  private labels(): Record<string, string> {
    const { labelsAt, labelsEnd } = this.spans;
    return (this.parsedLabels ??= (labelsAt >= 0 ? (JSON.parse(this.stored.slice(labelsAt, labelsEnd)) as Record<string, string> | null) : null) ?? {});
  }

  private stringAt(at: number, end: number): string {
    const value: unknown = at >= 0 ? JSON.parse(this.stored.slice(at, end)) : undefined;
    return typeof value === 'string' ? value : '';
  }
}

/** Whether a field selector uses only fields StoredText.matches reads off the stored text. */
export function selectsOnMetadata(fields: FieldSelector): boolean {
  return fields.requirements().every((t) => t.field === 'metadata.name' || t.field === 'metadata.namespace');
}
