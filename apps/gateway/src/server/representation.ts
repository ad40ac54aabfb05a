import type { ResourceDef } from '@orch/api';
import { StatusError, buildTable, negotiate, type IncludeObject, type KubeObject, type Negotiated } from '@orch/apimachinery';
import { tableColumnsFor } from '../registry/tables';

/** How a response body is written (the negotiated representation). */
export type Representation = Negotiated;

/**
 * Picks the representation from the Accept header, honouring the client's order (a fallback
 * list, SPEC Media types). Nothing acceptable → 406. Watches stream JSON (or one-row Tables).
 * Protobuf is not offered yet, so a client that also accepts JSON gets JSON.
 */
export function chooseRepresentation(accept: string | undefined, watch: boolean): Representation {
  return negotiate(accept, { encodings: watch ? ['json'] : ['json', 'yaml'], table: true });
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
