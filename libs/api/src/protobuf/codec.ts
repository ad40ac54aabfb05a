import type { KubeObject } from '@orch/apimachinery';
import { parseApiVersion } from '../catalog';
import { shortTypeName, isScalar, type TypeSchema } from '../schemas/model';
import { schemaForKind, typeSchema } from '../schemas/registry';
import { ProtobufError, hasProtobuf, messageDecoder, messageEncoder, setEmbeddedDecoder } from './compile';
import { Reader, WireError, Writer, varintSize, writeVarint } from './wire';

/** The 4 bytes (`k8s\0`) that start every protobuf-encoded object (SPEC "Protobuf envelope"). */
export const PROTOBUF_MAGIC: Readonly<Buffer> = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The object's kind has no protobuf form (custom resources, Table). */
export class ProtobufUnsupportedError extends ProtobufError {
  override readonly name = 'ProtobufUnsupportedError';
}

const PROTOBUF_CONTENT_TYPES = ['', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'];

/**
 * Built-in groups: the core group, the legacy dotless groups (apps, batch, ...) and `*.orch.io`
 * with its `*.k8s.io` aliases. Custom resources live elsewhere (a CRD group has a dot), so a
 * CRD group such as `apps.example.com` never borrows the schema of a built-in kind.
 */
function isBuiltinGroup(group: string): boolean {
  return !group.includes('.') || group.endsWith('.orch.io') || group.endsWith('.k8s.io');
}

function kindSchema(group: string, version: string, kind: string): TypeSchema | undefined {
  if (!isBuiltinGroup(group)) return undefined;
  const schema = schemaForKind(group, version, kind);
  return schema && hasProtobuf(schema) ? schema : undefined;
}

function requireKindSchema(apiVersion: unknown, kind: unknown): TypeSchema {
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
    throw new ProtobufError('a protobuf object needs apiVersion and kind');
  }
  const { group, version } = parseApiVersion(apiVersion);
  const schema = kindSchema(group, version, kind);
  if (!schema) throw new ProtobufUnsupportedError(`${kind} in ${apiVersion} has no protobuf encoding`);
  return schema;
}

/** Whether objects of this kind (built-in kinds, their lists, meta kinds such as Status) have a protobuf form. */
export function hasProtobufSchema(group: string, version: string, kind: string): boolean {
  return kindSchema(group, version, kind) !== undefined;
}

/** The shared scratch writer of the encoders (encoding is synchronous; a nested call gets its own). */
let scratch: Writer | undefined = new Writer();

/** Runs `fn` with a writer and returns what it wrote. */
function written(fn: (w: Writer) => void): Buffer {
  const w = scratch ?? new Writer(1024);
  scratch = undefined;
  try {
    fn(w);
    return w.finish();
  } catch (err) {
    w.reset();
    throw err instanceof WireError ? new ProtobufError(err.message) : err;
  } finally {
    scratch = w;
  }
}

/** The kind's schema and the apiVersion and kind of an object (ProtobufError / ProtobufUnsupportedError when it has no protobuf form). */
function typeOf(obj: object): { schema: TypeSchema; apiVersion: string; kind: string } {
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  return { schema: requireKindSchema(apiVersion, kind), apiVersion: apiVersion as string, kind: kind as string };
}

/** magic + Unknown{typeMeta=1 {apiVersion=1, kind=2}, raw=2 (written by `raw`), contentEncoding=3 "", contentType=4 ""}. */
function writeEnvelope(w: Writer, apiVersion: string, kind: string, raw: (w: Writer) => void): void {
  w.raw(PROTOBUF_MAGIC);
  w.uint32(10);
  w.fork();
  w.uint32(10);
  w.string(apiVersion);
  w.uint32(18);
  w.string(kind);
  w.ldelim();
  w.uint32(18);
  w.fork();
  raw(w);
  w.ldelim();
  w.uint32(26);
  w.uint32(0);
  w.uint32(34);
  w.uint32(0);
}

/**
 * Encodes an object, list or Status: the magic prefix, then runtime.Unknown{typeMeta{apiVersion,
 * kind}, raw = the object's message with upstream field numbers, contentEncoding "",
 * contentType ""}. Throws ProtobufUnsupportedError for kinds without a built-in schema and
 * ProtobufError for values that do not fit the schema.
 */
export function encodeProtobuf(obj: object): Buffer {
  const { schema, apiVersion, kind } = typeOf(obj);
  const encode = messageEncoder(schema.name);
  return written((w) => writeEnvelope(w, apiVersion, kind, (w) => encode(obj, w)));
}

/**
 * The message of an object of a built-in kind alone, without the envelope: what a list holds
 * for each item (encodeProtobufListPieces), so it can be encoded once and kept. Throws as encodeProtobuf.
 */
export function encodeProtobufMessage(obj: object): Buffer {
  const encode = messageEncoder(typeOf(obj).schema.name);
  return written((w) => encode(obj, w));
}

/** The envelope around an object's message (encodeProtobufMessage): encodeProtobuf of the object, without encoding it again. */
export function encodeProtobufEnvelope(typeMeta: { apiVersion: string; kind: string }, message: Uint8Array): Buffer {
  const head = envelopeHead(typeMeta.apiVersion, typeMeta.kind);
  const out = Buffer.allocUnsafe(head.length + varintSize(message.length) + message.length + ENVELOPE_TAIL.length);
  head.copy(out, 0);
  let pos = writeVarint(out, head.length, message.length);
  out.set(message, pos);
  pos += message.length;
  ENVELOPE_TAIL.copy(out, pos);
  return out;
}

/** Unknown's contentEncoding=3 "" and contentType=4 "", after raw. */
const ENVELOPE_TAIL = Buffer.from([26, 0, 34, 0]);
/** The envelope up to raw's length, by apiVersion and kind. */
const envelopeHeads = new Map<string, Map<string, Buffer>>();

/** magic + Unknown{typeMeta=1 {apiVersion, kind}, and raw=2's tag (its length and bytes follow). */
function envelopeHead(apiVersion: string, kind: string): Buffer {
  let byKind = envelopeHeads.get(apiVersion);
  if (!byKind) envelopeHeads.set(apiVersion, (byKind = new Map()));
  let head = byKind.get(kind);
  if (!head) {
    const w = new Writer(256);
    writeEnvelope(w, apiVersion, kind, () => undefined);
    // Everything before raw's (empty) length byte.
    head = w.finish().subarray(0, -1 - ENVELOPE_TAIL.length);
    if (byKind.size < 1024) byKind.set(kind, head);
  }
  return head;
}

/**
 * Encodes a list whose items are already encoded (encodeProtobufMessage of each), in pieces of
 * about `pieceBytes` (to write a big list as the socket takes it): together the bytes of
 * encodeProtobuf of the list with those items. First the envelope and the list's metadata, then
 * its items in runs, each item's bytes copied once into its piece; the envelope's tail rides with
 * the last piece. The lengths are known before the first piece.
 */
export function* encodeProtobufListPieces(list: { apiVersion: string; kind: string; metadata?: object }, items: readonly Uint8Array[], pieceBytes: number): Generator<Buffer, void, undefined> {
  const { head, meta, tag, size } = listLayout(list, items);
  const tail = (last: boolean) => (last ? ENVELOPE_TAIL.length : 0);
  const first = Buffer.allocUnsafe(head.length + varintSize(size) + meta.length + tail(items.length === 0));
  head.copy(first, 0);
  const pos = writeVarint(first, head.length, size);
  meta.copy(first, pos);
  if (items.length === 0) ENVELOPE_TAIL.copy(first, pos + meta.length);
  yield first;
  const tagBytes = varintSize(tag);
  for (let from = 0; from < items.length; ) {
    let bytes = 0;
    let to = from;
    while (to < items.length && (to === from || bytes < pieceBytes)) bytes += tagBytes + varintSize(items[to].length) + items[to++].length;
    const piece = Buffer.allocUnsafe(bytes + tail(to === items.length));
    const end = writeItems(piece, 0, tag, items, from, to);
    if (to === items.length) ENVELOPE_TAIL.copy(piece, end);
    yield piece;
    from = to;
  }
}

/** The parts of a list's protobuf around its items: the envelope's head, the ListMeta field, the items' tag, the list message's size. */
function listLayout(list: { apiVersion: string; kind: string; metadata?: object }, items: readonly Uint8Array[]): { head: Buffer; meta: Buffer; tag: number; size: number } {
  const { schema, apiVersion, kind } = typeOf(list);
  const fields = listFields(schema);
  const encodeMeta = messageEncoder(fields.metadata.ref);
  // The list message's ListMeta field, then each item with its tag and length, sized exactly.
  const meta = written((w) => {
    w.uint32((fields.metadata.proto << 3) | 2);
    w.fork();
    encodeMeta(list.metadata ?? {}, w);
    w.ldelim();
  });
  const tag = (fields.items.proto << 3) | 2;
  const tagBytes = varintSize(tag);
  let size = meta.length;
  for (const item of items) size += tagBytes + varintSize(item.length) + item.length;
  return { head: envelopeHead(apiVersion, kind), meta, tag, size };
}

/** Writes items[from, to) with their tag and length at `pos`; returns the position after them. */
function writeItems(out: Buffer, pos: number, tag: number, items: readonly Uint8Array[], from: number, to: number): number {
  for (let i = from; i < to; i++) {
    pos = writeVarint(out, pos, tag);
    pos = writeVarint(out, pos, items[i].length);
    out.set(items[i], pos);
    pos += items[i].length;
  }
  return pos;
}

/** The metadata (ListMeta) and items fields of a list kind. */
function listFields(schema: TypeSchema): { metadata: { proto: number; ref: string }; items: { proto: number } } {
  const metadata = schema.fields.find((f) => f.name === 'metadata');
  const items = schema.fields.find((f) => f.name === 'items');
  if (!metadata || !items || isScalar(metadata.type) || !('ref' in metadata.type) || isScalar(items.type) || !('array' in items.type)) {
    throw new ProtobufError(`${shortTypeName(schema.name)} is not a list kind`);
  }
  return { metadata: { proto: metadata.proto, ref: metadata.type.ref }, items: { proto: items.proto } };
}

/**
 * Decodes a protobuf body (`application/vnd.orch.protobuf` or `application/vnd.kubernetes.protobuf`)
 * to the object's JSON form: apiVersion and kind from the envelope, fields as the JSON form
 * writes them, list items with their apiVersion and kind. Throws ProtobufError when the bytes
 * are malformed and ProtobufUnsupportedError when the kind has no built-in schema.
 */
export function decodeProtobuf(bytes: Uint8Array): KubeObject {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < PROTOBUF_MAGIC.length || !PROTOBUF_MAGIC.every((b, i) => buf[i] === b)) {
    throw new ProtobufError('the protobuf body does not start with the magic prefix "k8s\\x00"');
  }
  const r = new Reader(buf, PROTOBUF_MAGIC.length);
  let unknown: UnknownMessage;
  try {
    unknown = readUnknown(r);
  } catch (err) {
    throw new ProtobufError(`invalid protobuf envelope: ${(err as Error).message}`);
  }
  const { apiVersion, kind } = unknown;
  if (unknown.contentEncoding) throw new ProtobufError(`unsupported protobuf content encoding ${JSON.stringify(unknown.contentEncoding)}`);
  if (!PROTOBUF_CONTENT_TYPES.includes(unknown.contentType)) {
    throw new ProtobufError(`unsupported content type ${JSON.stringify(unknown.contentType)} inside the protobuf envelope`);
  }
  const schema = requireKindSchema(apiVersion, kind);
  const decode = messageDecoder(schema.name);
  let message: Record<string, unknown>;
  try {
    r.pos = unknown.rawStart;
    message = decode(r, unknown.rawEnd) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ProtobufError) throw err;
    throw new ProtobufError(`invalid protobuf ${kind}: ${(err as Error).message}`);
  }
  const obj = { apiVersion, kind, ...message } as KubeObject;
  const itemKind = listItemKind(schema);
  if (itemKind) {
    const items = (obj as unknown as { items: Record<string, unknown>[] }).items;
    (obj as unknown as { items: unknown[] }).items = items.map((item) => ({ apiVersion, kind: itemKind, ...item }));
  }
  return obj;
}

interface UnknownMessage {
  apiVersion: string;
  kind: string;
  /** Where the object's message (raw) lies in the buffer. */
  rawStart: number;
  rawEnd: number;
  contentEncoding: string;
  contentType: string;
}

/** runtime.Unknown, its raw bytes left in place. */
function readUnknown(r: Reader): UnknownMessage {
  const out: UnknownMessage = { apiVersion: '', kind: '', rawStart: r.pos, rawEnd: r.pos, contentEncoding: '', contentType: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag) {
      case 10: {
        const end = r.sub();
        while (r.pos < end) {
          const t = r.uint32();
          if (t === 10) out.apiVersion = r.string();
          else if (t === 18) out.kind = r.string();
          else r.skip(t & 7);
        }
        r.expectEnd(end);
        break;
      }
      case 18:
        out.rawEnd = r.sub();
        out.rawStart = r.pos;
        r.pos = out.rawEnd;
        break;
      case 26:
        out.contentEncoding = r.string();
        break;
      case 34:
        out.contentType = r.string();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return out;
}

setEmbeddedDecoder(decodeProtobuf);

/** The kind of a list's items when they carry apiVersion and kind in JSON (`PodList` → `Pod`). */
function listItemKind(schema: TypeSchema): string | undefined {
  const items = schema.kind ? schema.fields.find((f) => f.name === 'items') : undefined;
  if (!items || isScalar(items.type) || !('array' in items.type)) return undefined;
  const item = items.type.array;
  if (isScalar(item) || !('ref' in item)) return undefined;
  const itemSchema = typeSchema(item.ref);
  return itemSchema?.kind && itemSchema.fields.some((f) => f.name === 'apiVersion') ? shortTypeName(itemSchema.name) : undefined;
}

/**
 * One frame of a protobuf watch stream: a 4-byte big-endian length, then
 * WatchEvent{type=1, object=2 RawExtension{raw=1: the object encoded by encodeProtobuf}}
 * (upstream's length-delimited framer around the raw, unwrapped WatchEvent).
 */
export function encodeWatchEventProtobuf(type: string, obj: object): Buffer {
  const { schema, apiVersion, kind } = typeOf(obj);
  const encode = messageEncoder(schema.name);
  const frame = written((w) => {
    w.raw(FRAME_LENGTH_PLACEHOLDER);
    w.uint32(10);
    w.string(type);
    w.uint32(18);
    w.fork();
    w.uint32(10);
    w.fork();
    writeEnvelope(w, apiVersion, kind, (w) => encode(obj, w));
    w.ldelim();
    w.ldelim();
  });
  frame.writeUInt32BE(frame.length - 4, 0);
  return frame;
}

const FRAME_LENGTH_PLACEHOLDER = Buffer.alloc(4);

/** Decodes one watch event frame (without its length prefix). */
export function decodeWatchEventProtobuf(frame: Uint8Array): { type: string; object: KubeObject } {
  const buf = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  let type = '';
  let raw: Buffer = Buffer.alloc(0);
  try {
    const r = new Reader(buf);
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag === 10) type = r.string();
      else if (tag === 18) {
        const end = r.sub();
        while (r.pos < end) {
          const t = r.uint32();
          if (t === 10) raw = r.bytes();
          else r.skip(t & 7);
        }
        r.expectEnd(end);
      } else r.skip(tag & 7);
    }
  } catch (err) {
    throw new ProtobufError(`invalid protobuf watch event: ${(err as Error).message}`);
  }
  return { type, object: decodeProtobuf(raw) };
}

/** Splits a protobuf watch stream into frames (without length prefixes); `rest` is an incomplete tail. */
export function splitProtobufFrames(buf: Buffer): { frames: Buffer[]; rest: Buffer } {
  const frames: Buffer[] = [];
  let at = 0;
  while (buf.length - at >= 4) {
    const len = buf.readUInt32BE(at);
    if (buf.length - at - 4 < len) break;
    frames.push(buf.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return { frames, rest: buf.subarray(at) };
}
