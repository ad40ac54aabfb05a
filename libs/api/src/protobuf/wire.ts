// The protobuf wire format (varints, length-delimited fields) over one growable Buffer: the
// primitives the compiled per-type codecs (compile.ts) write and read. protobufjs's Writer
// keeps one operation object per value and a second pass to run them, and its Reader returns
// int64 as Long objects; both cost more than the whole JSON.stringify of an object did.

/** The bytes are not a well-formed protobuf message. */
export class WireError extends Error {
  override readonly name = 'WireError';
}

const TWO_32 = 4294967296;
/** Scratch space kept between encodes; a writer that grew past this gives its buffer back. */
const KEEP_BYTES = 1024 * 1024;

/**
 * Writes protobuf values into one Buffer. A length-delimited field is written in place: fork()
 * reserves one length byte, ldelim() fills it in, moving the body along when its length needs
 * more than one byte (rare and a memmove). finish() returns a copy and resets the writer.
 */
export class Writer {
  private buf: Buffer;
  pos = 0;
  /** Where the length byte of each open fork() is, innermost last. */
  private forks = new Int32Array(64);
  private depth = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Forgets what was written (after an encode threw half-way). */
  reset(): void {
    this.pos = 0;
    this.depth = 0;
  }

  private ensure(n: number): void {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
  }

  uint32(v: number): void {
    this.ensure(5);
    const buf = this.buf;
    let pos = this.pos;
    while (v > 127) {
      buf[pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** A varint of the 64-bit two's complement `hi:lo` (both unsigned 32-bit). */
  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (hi !== 0) {
      buf[pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      buf[pos++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    buf[pos++] = lo;
    this.pos = pos;
  }

  /** int32: negative values sign-extended to ten bytes, as every protobuf encoder writes them. */
  int32(v: number): void {
    if (v >= 0) this.uint32(v);
    else this.varint64(v >>> 0, 0xffffffff);
  }

  /** int64 from a safe integer. */
  int64(v: number): void {
    if (v >= 0 && v < TWO_32) return this.uint32(v);
    const abs = Math.abs(v);
    let lo = abs % TWO_32 >>> 0;
    let hi = Math.floor(abs / TWO_32) >>> 0;
    if (v < 0) {
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
      if (++lo > 0xffffffff) {
        lo = 0;
        if (++hi > 0xffffffff) hi = 0;
      }
    }
    this.varint64(lo, hi);
  }

  /** int64 from a bigint (Go durations in nanoseconds exceed 2^53). */
  bigint64(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.varint64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string; short ASCII strings are copied here, the rest by Buffer.write. */
  string(s: string): void {
    const n = s.length;
    if (n < 43) {
      // At most 126 UTF-8 bytes: the length takes one byte, whatever the characters.
      this.ensure(1 + 3 * n);
      const buf = this.buf;
      const start = this.pos;
      let pos = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 128) {
          pos = start + 1 + buf.write(s, start + 1, 'utf8');
          break;
        }
        buf[pos++] = c;
      }
      buf[start] = pos - start - 1;
      this.pos = pos;
      return;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Length-prefixed bytes. */
  bytes(b: Uint8Array): void {
    this.uint32(b.length);
    this.raw(b);
  }

  /** Bytes as they are (an already encoded field or message). */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Starts a length-delimited value: the bytes written until the matching ldelim() are its body. */
  fork(): void {
    this.ensure(1);
    if (this.depth === this.forks.length) {
      const deeper = new Int32Array(this.forks.length * 2);
      deeper.set(this.forks);
      this.forks = deeper;
    }
    this.forks[this.depth++] = this.pos++;
  }

  /** Ends the value fork() started, writing its length before it. */
  ldelim(): void {
    const at = this.forks[--this.depth];
    const len = this.pos - at - 1;
    if (len < 128) {
      this.buf[at] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let p = at;
    let v = len;
    while (v > 127) {
      buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[p] = v;
  }

  /** A copy of what was written; the writer is reset for the next message. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    this.reset();
    if (this.buf.length > KEEP_BYTES) this.buf = Buffer.allocUnsafe(KEEP_BYTES);
    return out;
  }
}

/** Writes the varint of a uint32 at `pos` of `buf` (which has room); returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, v: number): number {
  while (v > 127) {
    buf[pos++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Bytes of the varint of a uint32. */
export function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Reads protobuf values from a Buffer; `pos` moves past what was read. Reading past `len` throws WireError. */
export class Reader {
  pos: number;
  readonly len: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.len = end;
  }

  private outOfRange(): never {
    throw new WireError(`index out of range: ${this.pos} of ${this.len}`);
  }

  /** A varint as uint32 (the low 32 bits of a longer one). */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos + 10 > this.len) return this.uint32Slow();
    let b = buf[pos++];
    let v = b & 127;
    if (b >= 128) {
      b = buf[pos++];
      v |= (b & 127) << 7;
      if (b >= 128) {
        b = buf[pos++];
        v |= (b & 127) << 14;
        if (b >= 128) {
          b = buf[pos++];
          v |= (b & 127) << 21;
          if (b >= 128) {
            b = buf[pos++];
            v |= (b & 15) << 28;
            // Up to five more bytes of a 64-bit varint carry bits beyond 32.
            for (let i = 0; b >= 128 && i < 5; i++) b = buf[pos++];
            if (b >= 128) throw new WireError('invalid varint encoding');
          }
        }
      }
    }
    this.pos = pos;
    return v >>> 0;
  }

  private uint32Slow(): number {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.pos >= this.len) this.outOfRange();
      const b = this.buf[this.pos++];
      if (shift < 32) v |= (b & 127) << shift;
      if (b < 128) return v >>> 0;
      if (shift >= 63) throw new WireError('invalid varint encoding');
    }
  }

  int32(): number {
    return this.uint32() | 0;
  }

  /** int64 as a number (exact up to 2^53). */
  int64(): number {
    const { lo, hi } = this.varint64();
    return hi >= 0x80000000 ? -((~hi >>> 0) * TWO_32 + (~lo >>> 0) + 1) : hi * TWO_32 + lo;
  }

  /** int64 as a bigint (exact). */
  bigint64(): bigint {
    const { lo, hi } = this.varint64();
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }

  private varint64(): { lo: number; hi: number } {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.pos >= this.len) this.outOfRange();
      const b = this.buf[this.pos++];
      if (shift < 28) lo |= (b & 127) << shift;
      else if (shift === 28) {
        lo |= (b & 15) << 28;
        hi |= (b & 127) >> 4;
      } else hi |= (b & 127) << (shift - 32);
      if (b < 128) return { lo: lo >>> 0, hi: hi >>> 0 };
      if (shift >= 63) throw new WireError('invalid varint encoding');
    }
  }

  bool(): boolean {
    return this.uint32() !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.len) this.outOfRange();
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** The end of a length-delimited value that starts here. */
  sub(): number {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.len) this.outOfRange();
    return end;
  }

  /** A length-delimited UTF-8 string. */
  string(): string {
    const end = this.sub();
    const buf = this.buf;
    const start = this.pos;
    this.pos = end;
    if (end - start < 16) {
      // Short ASCII strings are cheaper built here than through a native call.
      let s = '';
      for (let i = start; i < end; i++) {
        const c = buf[i];
        if (c >= 128) return buf.toString('utf8', start, end);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return buf.toString('utf8', start, end);
  }

  /** Length-delimited bytes, in base64 (their JSON form). */
  base64(): string {
    const end = this.sub();
    const start = this.pos;
    this.pos = end;
    return this.buf.toString('base64', start, end);
  }

  /** Length-delimited bytes (a view of the buffer, not a copy). */
  bytes(): Buffer {
    const end = this.sub();
    const start = this.pos;
    this.pos = end;
    return this.buf.subarray(start, end);
  }

  /** Skips a value of wire type `wireType`. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint64();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.sub();
        return;
      case 3:
        // A group: skip its fields until the matching end-group tag.
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === 4) return;
          this.skip(tag & 7);
        }
      case 5:
        this.pos += 4;
        break;
      default:
        throw new WireError(`invalid wire type ${wireType} at offset ${this.pos}`);
    }
    if (this.pos > this.len) this.outOfRange();
  }

  /** Throws unless a message that should end at `end` did. */
  expectEnd(end: number): void {
    if (this.pos !== end) throw new WireError(`a field runs past the end of its message at offset ${end}`);
  }
}
