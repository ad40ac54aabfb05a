import type { KubeObject } from '@orch/apimachinery';
import { parseApiVersion } from '../catalog';
import { shortTypeName, isScalar, type TypeSchema } from '../schemas/model';
import { schemaForKind, typeSchema } from '../schemas/registry';
import { ProtobufError, fromProtoMessage, setEmbeddedDecoder, toProtoObject } from './convert';
import { hasProtobuf, messageType } from './types';

/** The 4 bytes (`k8s\0`) that start every protobuf-encoded object (SPEC "Protobuf envelope"). */
export const PROTOBUF_MAGIC: Readonly<Buffer> = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The object's kind has no protobuf form (custom resources, Table). */
export class ProtobufUnsupportedError extends ProtobufError {
  override readonly name = 'ProtobufUnsupportedError';
}

const UNKNOWN = 'io.orch.apimachinery.pkg.runtime.Unknown';
const WATCH_EVENT = 'io.orch.apimachinery.pkg.apis.meta.v1.WatchEvent';
const PROTOBUF_CONTENT_TYPES = ['', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'];

interface UnknownMessage {
  typeMeta?: { apiVersion?: string; kind?: string };
  raw?: Uint8Array;
  contentEncoding?: string;
  contentType?: string;
}

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

/**
 * Encodes an object, list or Status: the magic prefix, then runtime.Unknown{typeMeta{apiVersion,
 * kind}, raw = the object's message with upstream field numbers, contentEncoding "",
 * contentType ""}. Throws ProtobufUnsupportedError for kinds without a built-in schema and
 * ProtobufError for values that do not fit the schema.
 */
export function encodeProtobuf(obj: object): Buffer {
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  const schema = requireKindSchema(apiVersion, kind);
  const raw = messageType(schema).encode(toProtoObject(schema.name, obj)).finish();
  const unknown: UnknownMessage = {
    typeMeta: { apiVersion: apiVersion as string, kind: kind as string },
    raw,
    contentEncoding: '',
    contentType: '',
  };
  const body = messageType(typeSchema(UNKNOWN)!).encode(unknown).finish();
  return Buffer.concat([PROTOBUF_MAGIC, body]);
}

/**
 * Decodes a protobuf body (`application/vnd.orch.protobuf` or `application/vnd.kubernetes.protobuf`)
 * to the object's JSON form: apiVersion and kind from the envelope, fields as the JSON form
 * writes them, list items with their apiVersion and kind. Throws ProtobufError when the bytes
 * are malformed and ProtobufUnsupportedError when the kind has no built-in schema.
 */
export function decodeProtobuf(buf: Uint8Array): KubeObject {
  if (buf.length < PROTOBUF_MAGIC.length || !PROTOBUF_MAGIC.every((b, i) => buf[i] === b)) {
    throw new ProtobufError('the protobuf body does not start with the magic prefix "k8s\\x00"');
  }
  let unknown: UnknownMessage;
  try {
    unknown = messageType(typeSchema(UNKNOWN)!).decode(buf.subarray(PROTOBUF_MAGIC.length)) as UnknownMessage;
  } catch (err) {
    throw new ProtobufError(`invalid protobuf envelope: ${(err as Error).message}`);
  }
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  if (unknown.contentEncoding) throw new ProtobufError(`unsupported protobuf content encoding ${JSON.stringify(unknown.contentEncoding)}`);
  if (!PROTOBUF_CONTENT_TYPES.includes(unknown.contentType ?? '')) {
    throw new ProtobufError(`unsupported content type ${JSON.stringify(unknown.contentType)} inside the protobuf envelope`);
  }
  const schema = requireKindSchema(apiVersion, kind);
  let message: unknown;
  try {
    message = messageType(schema).decode(unknown.raw ?? new Uint8Array(0));
  } catch (err) {
    throw new ProtobufError(`invalid protobuf ${kind}: ${(err as Error).message}`);
  }
  const obj = { apiVersion, kind, ...fromProtoMessage(schema.name, message) } as KubeObject;
  const itemKind = listItemKind(schema);
  if (itemKind) {
    const items = (obj as unknown as { items: Record<string, unknown>[] }).items;
    (obj as unknown as { items: unknown[] }).items = items.map((item) => ({ apiVersion, kind: itemKind, ...item }));
  }
  return obj;
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
  const event = messageType(typeSchema(WATCH_EVENT)!).encode({ type, object: { raw: encodeProtobuf(obj) } }).finish();
  const frame = Buffer.allocUnsafe(4 + event.length);
  frame.writeUInt32BE(event.length, 0);
  frame.set(event, 4);
  return frame;
}

/** Decodes one watch event frame (without its length prefix). */
export function decodeWatchEventProtobuf(frame: Uint8Array): { type: string; object: KubeObject } {
  let event: { type?: string; object?: { raw?: Uint8Array } };
  try {
    event = messageType(typeSchema(WATCH_EVENT)!).decode(frame) as typeof event;
  } catch (err) {
    throw new ProtobufError(`invalid protobuf watch event: ${(err as Error).message}`);
  }
  return { type: event.type ?? '', object: decodeProtobuf(event.object?.raw ?? new Uint8Array(0)) };
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
