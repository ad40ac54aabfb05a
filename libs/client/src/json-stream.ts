const OPEN_OBJ = 0x7b; // {
const CLOSE_OBJ = 0x7d; // }
const OPEN_ARR = 0x5b; // [
const CLOSE_ARR = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Incremental decoder for a stream of JSON objects (a watch body): newline-separated or
 * back to back, split anywhere across chunks (inside strings, inside multi-byte UTF-8
 * characters). Works on bytes, so a partial character never reaches the UTF-8 decoder.
 * Throws on a byte that cannot start an object and on malformed JSON.
 */
export class JsonStreamDecoder {
  private pending: Buffer[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Feeds one chunk; returns the objects completed by it, in order. */
  push(chunk: Buffer): unknown[] {
    const out: unknown[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (isSpace(c)) continue;
        if (c !== OPEN_OBJ) throw new Error(`malformed JSON stream: unexpected ${JSON.stringify(String.fromCharCode(c))} between objects`);
        start = i;
      }
      if (c === QUOTE) this.inString = true;
      else if (c === OPEN_OBJ || c === OPEN_ARR) this.depth++;
      else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
        this.depth--;
        if (this.depth === 0) {
          this.pending.push(chunk.subarray(start, i + 1));
          const text = (this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending)).toString('utf8');
          this.pending = [];
          out.push(JSON.parse(text));
        }
      }
    }
    if (this.depth > 0) this.pending.push(chunk.subarray(start));
    return out;
  }

  /** True when bytes of an unfinished object are buffered (the stream ended mid-object). */
  hasPartial(): boolean {
    return this.depth > 0;
  }
}
