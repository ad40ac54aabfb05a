import { finished, pipeline, type Readable } from 'node:stream';
import { createGzip, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProtobufError, encodeProtobuf, type ResourceDef } from '@orch/api';
import { StatusError, encodeYaml, negotiate, type KubeObject } from '@orch/apimachinery';
import { overHttp2 } from '@orch/server-common';
import { StorageFullError } from '@orch/storage';
import { errorRepresentation, serializationOf, toPartialObjectMetadata, toTable, type Representation } from '../server/representation';
import type { ApiRequest } from './api-request';
import { BODY_CHUNK_BYTES, ChunkedBody, jsonListChunks, slices } from './body-stream';
import { queryBool } from './query';
import { StoredProtobuf } from './stored-protobuf';

const gzipAsync = promisify(gzip);
const asIs = (text: string): string => text;

/** `Warning` header values (RFC 7234, code 299, as upstream sends them). */
export function warningHeader(warnings: readonly string[]): string[] {
  return warnings.map((w) => `299 - ${JSON.stringify(w)}`);
}

/**
 * Writes response bodies in the negotiated representation (JSON, YAML, Table, protobuf),
 * gzip when the client asks and the APIResponseCompression gate allows; errors as Status.
 */
export class Encoder {
  /** Protobuf messages of stored objects, encoded once per revision (protobuf GETs and lists). */
  private readonly storedProtobuf: StoredProtobuf;

  constructor(private readonly opts: { compression: boolean; storedProtobufBytes?: number }) {
    this.storedProtobuf = new StoredProtobuf(opts.storedProtobufBytes);
  }

  /**
   * The encode stage: writes the invoke stage's result (resource requests) unless a stage already
   * answered. Without a promise when the body is text written at once (sendText without gzip).
   */
  readonly stage = (r: ApiRequest): void | Promise<void> => {
    // Answered already: by a stage, or with 504 when --request-timeout passed first.
    if (r.done || !r.result || r.reply.sent) return;
    const t = r.target!;
    const { status, rawJson, stored } = r.result;
    if (t.ctx.warnings.length) r.reply.header('warning', warningHeader(t.ctx.warnings));
    const encoded = rawJson ?? (stored && this.storedBody(stored, t.repr, t.def.group, r.info.apiGroup));
    let sent: number | Promise<number>;
    if (encoded === undefined) sent = this.send(r.req, r.reply, status, inRequestedGroup(bodyOf(r.result), t.def.group, r.info.apiGroup), t.repr, r.query, t.def);
    else if (typeof encoded === 'string' || Buffer.isBuffer(encoded)) sent = this.sendText(r.req, r.reply, status, encoded, t.repr.contentType);
    else sent = this.sendChunks(r.req, r.reply, status, encoded, t.repr.contentType);
    if (sent instanceof Promise) return sent.then((code) => void ((r.status = code), (r.done = true)));
    r.status = sent;
    r.done = true;
  };

  /**
   * The body of stored values (GenericStore.getVerbatim / listVerbatim; the invoke stage hands them
   * over only for a representation that may be written from them): a list page in JSON from the
   * stored texts, or protobuf from their messages encoded once, a list in pieces; undefined when a
   * value does not fit its protobuf schema (send() answers as for any body).
   */
  private storedBody(stored: NonNullable<NonNullable<ApiRequest['result']>['stored']>, repr: Representation, servedGroup: string, requestedGroup: string): Buffer | Iterator<Buffer, void, undefined> | undefined {
    if ('list' in stored && repr.kind === 'json') return jsonListChunks(stored.list);
    try {
      if ('object' in stored) return this.storedProtobuf.object(stored.object, (apiVersion) => (inRequestedGroup({ apiVersion }, servedGroup, requestedGroup) as { apiVersion: string }).apiVersion);
      const { items, ...head } = stored.list;
      return this.storedProtobuf.list({ ...(inRequestedGroup(head, servedGroup, requestedGroup) as typeof head), items }, BODY_CHUNK_BYTES);
    } catch (err) {
      if (err instanceof ProtobufError) return undefined;
      throw err;
    }
  }

  /** Writes a body in the negotiated representation (a metadata-only view when asked: PartialObjectMetadata[List]). */
  async send(req: FastifyRequest, reply: FastifyReply, status: number, body: unknown, repr: Representation, query: URLSearchParams, def?: ResourceDef): Promise<number> {
    let text: string | Buffer;
    let contentType: string;
    const pretty = queryBool(query, 'pretty') ?? false;
    const view = repr.kind === 'partial' ? toPartialObjectMetadata(body, repr) : body;
    const serialization = serializationOf(repr);
    const protobuf = serialization === 'protobuf' ? encodeProtobufBody(view, req.headers.accept) : undefined;
    if (protobuf) {
      text = protobuf;
      contentType = repr.contentType;
    } else if (repr.kind === 'table' && def && isObjectOrList(body)) {
      const table = toTable(body as KubeObject, def, repr, false, query.get('includeObject') ?? undefined);
      text = repr.encoding === 'yaml' ? encodeYaml(table) : JSON.stringify(table, null, pretty ? 2 : undefined);
      contentType = repr.contentType;
    } else if (serialization === 'yaml') {
      text = encodeYaml(view);
      contentType = 'application/yaml';
    } else {
      text = pretty ? JSON.stringify(view, null, 2) : JSON.stringify(view);
      contentType = 'application/json';
    }
    return this.sendText(req, reply, status, text, contentType);
  }

  /**
   * Writes an encoded body, gzip when the client asks and the gate allows. A body of more than
   * one chunk (BODY_CHUNK_BYTES) is written as sendChunks writes it, in slices. Returns the status
   * without a promise when the body is written at once (not gzip, one chunk).
   */
  sendText(req: FastifyRequest, reply: FastifyReply, status: number, text: string | Buffer, contentType: string): number | Promise<number> {
    const length = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (length > BODY_CHUNK_BYTES) return this.sendChunks(req, reply, status, slices(typeof text === 'string' ? Buffer.from(text) : text), contentType);
    reply.code(status).header('content-type', contentType);
    if (this.gzips(req) && length > 0) return this.sendGzip(reply, status, text);
    if (typeof text === 'string') {
      // Text is written as it is, no Buffer made: Node sends head and body as one string (one
      // write; a Buffer body is a second chunk of a writev). The identity serializer keeps
      // Fastify from adding `; charset=utf-8` to a JSON content type, as it does for strings.
      reply.serializer(asIs).send(text);
    } else {
      reply.send(text);
    }
    return status;
  }

  /** sendText's gzip answer (its status code and content type set already). */
  private async sendGzip(reply: FastifyReply, status: number, text: string | Buffer): Promise<number> {
    const zipped = await gzipAsync(text);
    reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding').send(zipped);
    return status;
  }

  /**
   * Writes a body made chunk by chunk: a single chunk as sendText writes it (with its
   * Content-Length), more as a stream (chunked transfer encoding) whose chunks are made as the
   * socket takes them (ChunkedBody), gzip as a stream too. The first two chunks are made here,
   * before anything is sent: what fails there is answered as an error (a Status); later the
   * response is cut off (a broken body).
   */
  async sendChunks(req: FastifyRequest, reply: FastifyReply, status: number, chunks: Iterator<Buffer, void, undefined>, contentType: string): Promise<number> {
    const first = chunks.next();
    const second = first.done ? first : chunks.next();
    if (second.done) return this.sendText(req, reply, status, first.done ? Buffer.alloc(0) : first.value, contentType);
    reply.code(status).header('content-type', contentType);
    let body: Readable = new ChunkedBody(prepend([first.value as Buffer, second.value], chunks));
    if (this.gzips(req)) {
      reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding');
      // An error of either stream destroys both; Fastify then destroys the response.
      body = pipeline(body, createGzip(), () => undefined);
    }
    reply.send(body);
    // The stage lasts as long as the body (Fastify answers a handler that resolves before a stream's headers are out with an empty body).
    await new Promise<void>((resolve) => finished(reply.raw, () => resolve()));
    return status;
  }

  private gzips(req: FastifyRequest): boolean {
    return this.opts.compression && acceptsGzip(req.headers['accept-encoding']);
  }

  /** Writes `err` as a Status (protobuf when the client accepts only that). 5xx are logged. */
  async sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): Promise<number> {
    const se = toStatusError(err);
    if (se.code >= 500) req.log.error({ err }, 'request failed');
    if (reply.sent || reply.raw.headersSent) {
      // Part of the body is out: the client must see it broken (no clean end), never a complete-looking truncated one.
      if (!reply.raw.writableEnded) reply.raw.destroy();
      return se.code;
    }
    const http2 = overHttp2(req.raw);
    for (const [k, v] of Object.entries(se.headers)) if (!(http2 && k.toLowerCase() === 'connection')) reply.header(k, v);
    const accept = req.headers.accept;
    if (errorRepresentation(accept) === 'protobuf') {
      const contentType = negotiate(accept, { encodings: ['protobuf'] }).contentType;
      reply.code(se.code).header('content-type', contentType).send(encodeProtobuf(se.toStatus()));
      return se.code;
    }
    reply.code(se.code).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(se.toStatus())));
    return se.code;
  }
}

/** Maps anything thrown in the request path to a StatusError (500 for the unexpected). */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  if (err instanceof StorageFullError) return StatusError.insufficientStorage(err.message);
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return StatusError.tooLarge(3 * 1024 * 1024);
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return StatusError.unsupportedMediaType('', ['application/json', 'application/yaml']);
  if (e?.statusCode && e.statusCode >= 400 && e.statusCode < 500) return StatusError.badRequest(e.message ?? 'bad request');
  return StatusError.internal(e?.message ?? String(err));
}

/**
 * A response to a `*.k8s.io` alias path names the group the client asked for (typed clients
 * reject an apiVersion their scheme does not know): the apiVersion of the object, or of a
 * list and its items, is rewritten from the served group, and so is the group of a Status's
 * details. Other bodies are returned as they are.
 */
export function inRequestedGroup(body: unknown, servedGroup: string, requestedGroup: string): unknown {
  if (servedGroup === requestedGroup || !requestedGroup.endsWith('.k8s.io') || typeof body !== 'object' || body === null) return body;
  const from = `${servedGroup}/`;
  const rewrite = (o: unknown): unknown => {
    const apiVersion = (o as { apiVersion?: unknown })?.apiVersion;
    return typeof apiVersion === 'string' && apiVersion.startsWith(from) ? { ...(o as object), apiVersion: `${requestedGroup}/${apiVersion.slice(from.length)}` } : o;
  };
  const out = rewrite(body) as { kind?: string; items?: unknown; details?: { group?: string } };
  if (out.kind === 'Status' && out.details?.group === servedGroup) return { ...out, details: { ...out.details, group: requestedGroup } };
  return Array.isArray(out.items) ? { ...out, items: out.items.map(rewrite) } : out;
}

/**
 * An error of a request to a `*.k8s.io` alias path, as the client asked (`roles.rbac.authorization.k8s.io
 * "x" not found`): the served group in the message and in the details becomes the requested one.
 */
export function errorInRequestedGroup(err: unknown, servedGroup: string, requestedGroup: string): unknown {
  if (!(err instanceof StatusError) || servedGroup === requestedGroup || !requestedGroup.endsWith('.k8s.io') || !servedGroup) return err;
  const details = err.details && err.details.group === servedGroup ? { ...err.details, group: requestedGroup } : err.details;
  return new StatusError(err.code, err.reason, err.message.split(servedGroup).join(requestedGroup), details, err.headers);
}

/**
 * A response body in protobuf, or undefined to answer JSON instead: a body without a
 * protobuf form (no built-in kind) falls back to JSON when the client accepts it (406 otherwise).
 */
function encodeProtobufBody(body: unknown, accept: string | undefined): Buffer | undefined {
  try {
    return encodeProtobuf(body as object);
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    if (errorRepresentation(accept) === 'json') return undefined;
    throw StatusError.notAcceptable(['application/json', 'application/yaml']);
  }
}

/** The body of a result: stored values parsed when they were not sent as they are. */
function bodyOf(result: NonNullable<ApiRequest['result']>): unknown {
  const stored = result.stored;
  if (!stored) return result.body;
  if ('object' in stored) return StoredProtobuf.objects([stored.object])[0];
  const { items, ...head } = stored.list;
  return { ...head, items: StoredProtobuf.objects(items) };
}

/** `head`, then what `rest` yields (ending the generator early ends `rest` too). */
function* prepend<T>(head: readonly T[], rest: Iterator<T, void, undefined>): Generator<T, void, undefined> {
  yield* head;
  yield* { [Symbol.iterator]: () => rest };
}

function isObjectOrList(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { kind?: string }).kind !== 'Status';
}

function acceptsGzip(header: string | undefined): boolean {
  return !!header && header.split(',').some((p) => p.trim().split(';')[0] === 'gzip');
}
