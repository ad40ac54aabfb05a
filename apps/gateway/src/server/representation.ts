import type { ResourceDef } from '@orch/api';
import { StatusError, buildTable, negotiate, type Encoding, type IncludeObject, type KubeObject, type Negotiated } from '@orch/apimachinery';
import { tableColumnsFor } from '../registry/tables';

/** How a response body is written (the negotiated representation). */
export type Representation = Negotiated;

/**
 * Picks the representation from the Accept header, honouring the client's order (a fallback
 * list, SPEC Media types). Nothing acceptable → 406. Watches stream JSON, one-row Tables or
 * protobuf frames. Protobuf is offered only for kinds with a built-in schema (`protobuf`):
 * a custom resource asked for protobuf alone is 406.
 */
export function chooseRepresentation(accept: string | undefined, watch: boolean, protobuf: boolean): Representation {
  const encodings: Encoding[] = watch ? ['json'] : ['json', 'yaml'];
  if (protobuf) encodings.push('protobuf');
  return negotiate(accept, { encodings, table: true });
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

/**
 * A Table of one object or a list: the kind's columns (SPEC default Name, Created At), rows carrying
 * the object's metadata (`includeObject=Metadata`, the default), the whole object (`Object`)
 * or nothing (`None`). `noHeaders` drops column definitions (watch events after the first).
 */
export function toTable(body: KubeObject, def: ResourceDef, repr: Representation & { kind: 'table' }, noHeaders: boolean, includeObject = 'Metadata'): unknown {
  if (!INCLUDE_OBJECT.includes(includeObject)) {
    throw StatusError.badRequest(`includeObject must be one of None, Object, Metadata: ${JSON.stringify(includeObject)}`);
  }
  const isList = Array.isArray((body as { items?: unknown }).items);
  const items = isList ? (body as unknown as { items: KubeObject[] }).items : [body];
  const listMeta = isList ? (body as unknown as { metadata: Record<string, unknown> }).metadata : { resourceVersion: body.metadata?.resourceVersion };
  return buildTable(items, tableColumnsFor(def), { apiGroup: repr.group, version: repr.version, listMeta, includeObject: includeObject as IncludeObject, noHeaders });
}
