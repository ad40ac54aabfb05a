import type { ResourceDef } from '@orch/api';
import { BoundedMap, StatusError, buildTable, negotiate, type Encoding, type IncludeObject, type KubeObject, type Negotiated } from '@orch/apimachinery';
import { tableFor } from '../registry/kinds';

/** How a response body is written (the negotiated representation). */
export type Representation = Negotiated;

/**
 * Picks the representation from the Accept header, honouring the client's order (a fallback
 * list, SPEC Media types). Nothing acceptable → 406. Watches stream JSON, one-row Tables,
 * metadata-only objects or protobuf frames. Protobuf is offered only for kinds with a built-in
 * schema (`protobuf`): a custom resource asked for protobuf alone is 406.
 */
export function chooseRepresentation(accept: string | undefined, watch: boolean, protobuf: boolean): Representation {
  const key = accept !== undefined && accept.length > MAX_CACHED_ACCEPT ? undefined : `${watch ? 'w' : '-'}${protobuf ? 'p' : '-'}${accept ?? ''}`;
  const make = (): Representation => {
    const encodings: Encoding[] = watch ? ['json'] : ['json', 'yaml'];
    if (protobuf) encodings.push('protobuf');
    // Shared by every request with the same key: frozen, so that none can change it for the others.
    return Object.freeze(negotiate(accept, { encodings, table: true, partialMetadata: true }));
  };
  return key === undefined ? make() : chosen.get(key, make);
}

/**
 * Representations chosen so far, by watch, protobuf and Accept (what chooseRepresentation
 * depends on, so entries never go stale): clients send few distinct Accept headers. A 406 is
 * not kept. Bounded: emptied when MAX_CHOSEN distinct keys were seen, and headers longer than
 * MAX_CACHED_ACCEPT are negotiated every time.
 */
export const MAX_CHOSEN = 512;
const chosen = new BoundedMap<string, Representation>(MAX_CHOSEN);
const MAX_CACHED_ACCEPT = 256;

/** Entries of the representation cache (for its spec). */
export const chosenRepresentations = (): number => chosen.size;

type PartialRepresentation = Representation & { kind: 'partial' };

/** The serialization of a representation: a metadata-only view is written in its own encoding. */
export function serializationOf(repr: Representation): 'json' | 'yaml' | 'protobuf' | 'table' {
  if (repr.kind === 'partial') return repr.encoding;
  return repr.kind === 'discovery' ? 'json' : repr.kind;
}

/**
 * The metadata-only view of a response (upstream asPartialObjectMetadata[List]): an object
 * becomes a PartialObjectMetadata, a list a PartialObjectMetadataList, in the group and
 * version asked for; Status bodies pass through. Asking for the one that does not fit the
 * response (a list as PartialObjectMetadata) is 406.
 */
export function toPartialObjectMetadata(body: unknown, repr: PartialRepresentation): unknown {
  if (typeof body !== 'object' || body === null || (body as { kind?: string }).kind === 'Status') return body;
  const apiVersion = `${repr.group}/${repr.version}`;
  const items = (body as { items?: unknown }).items;
  const isList = Array.isArray(items);
  if (repr.as === 'PartialObjectMetadata') {
    if (isList) throw new StatusError(406, 'NotAcceptable', 'you requested PartialObjectMetadata, but the requested object is a list');
    return partialOf(body as KubeObject, apiVersion);
  }
  if (!isList) throw new StatusError(406, 'NotAcceptable', 'you requested PartialObjectMetadataList, but the requested object is not a list');
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion,
    metadata: (body as { metadata?: unknown }).metadata ?? {},
    items: (items as KubeObject[]).map((o) => partialOf(o, apiVersion)),
  };
}

function partialOf(obj: KubeObject, apiVersion: string): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata ?? {} };
}

/** The encoding of an error Status: JSON unless the client accepts only protobuf. */
export function errorRepresentation(accept: string | undefined): 'json' | 'protobuf' {
  for (const enc of ['json', 'protobuf'] as const) {
    try {
      negotiate(accept, { encodings: [enc] });
      return enc;
    } catch {
      // not acceptable: try the next encoding
    }
  }
  return 'json';
}

const INCLUDE_OBJECT = ['None', 'Object', 'Metadata'];

/** `includeObject` of a Table request: absent, or one of None, Object, Metadata (400 otherwise). */
export function checkIncludeObject(includeObject: string | null): void {
  if (includeObject !== null && !INCLUDE_OBJECT.includes(includeObject)) {
    throw StatusError.badRequest(`includeObject must be one of None, Object, Metadata: ${JSON.stringify(includeObject)}`);
  }
}

/**
 * A Table of one object or a list: the kind's columns (SPEC default Name, Created At), rows carrying
 * the object's metadata (`includeObject=Metadata`, the default), the whole object (`Object`)
 * or nothing (`None`). `noHeaders` drops column definitions (watch events after the first).
 */
export function toTable(body: KubeObject, def: ResourceDef, repr: Representation & { kind: 'table' }, noHeaders: boolean, includeObject = 'Metadata'): unknown {
  checkIncludeObject(includeObject);
  const isList = Array.isArray((body as { items?: unknown }).items);
  const items = isList ? (body as unknown as { items: KubeObject[] }).items : [body];
  const listMeta = isList ? (body as unknown as { metadata: Record<string, unknown> }).metadata : { resourceVersion: body.metadata?.resourceVersion };
  return buildTable(items, tableFor(def), { apiGroup: repr.group, version: repr.version, listMeta, includeObject: includeObject as IncludeObject, noHeaders });
}
