import { createHash } from 'node:crypto';
import { groupVersionString, upstreamGroup, type Catalog, type ResourceDef } from '@orch/api';
import { negotiate } from '@orch/apimachinery';
import { GroupVersionDocument } from './document';

/** A response of the OpenAPI endpoints. */
export interface OpenApiResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Published {
  /** Catalog state the documents were built from. */
  fingerprint: string;
  /** `api/v1`, `apis/apps/v1`, ... → serialized document and its hash. */
  docs: Map<string, { body: Buffer; hash: string }>;
  index: { body: Buffer; hash: string };
}

const V3 = '/openapi/v3';

/** The hash an OpenAPI v3 document is published under (its ETag and `?hash=`). */
export function hashOf(body: Buffer): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

/** What decides the documents: every served resource with its scope, verbs and subresources. */
function fingerprint(resources: readonly ResourceDef[]): string {
  return JSON.stringify(resources.map((r) => [r.group, r.version, r.resource, r.kind, r.listKind, r.scope, r.verbs, r.subresources, r.custom?.crdUid, r.custom?.crdGeneration]));
}

function etagMatches(header: string | undefined, hash: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${hash}"`;
  });
}

/** An OpenAPI v3 document fetched from an extension API server (aggregation). */
export interface RemoteDocument {
  /** Its path key in the index: `apis/<group>/<version>`. */
  key: string;
  body: Buffer;
  hash: string;
}

export interface OpenApiOptions {
  /** Compatibility option (--k8s-group-aliases): every `*.orch.io` group version is also published under its `*.k8s.io` name. */
  k8sAliases: boolean;
  /** The documents of the available aggregated APIs, published as they are (upstream's aggregator merges them into the index). */
  remoteDocuments?: () => readonly RemoteDocument[];
}

/**
 * OpenAPI v3 publishing (upstream kube-openapi handler3): `/openapi/v3` lists every served
 * group/version (and, under the compatibility option, each `*.orch.io` one again under its
 * `*.k8s.io` name, so stock manifests validate) and those of the available aggregated APIs with a `serverRelativeURL` carrying the
 * document's hash; each document is built once per catalog state (rebuilt when CRDs change
 * the catalog) and served with an ETag; `If-None-Match` gives 304; a matching `hash` makes the
 * response cacheable forever; a stale `hash` redirects to the current one.
 */
export class OpenApiV3 {
  private published?: Published;

  constructor(
    private readonly catalog: Catalog,
    private readonly options: OpenApiOptions = { k8sAliases: true },
  ) {}

  /** Serves GET `/openapi/v3[/<api|apis/group>/<version>]`; undefined for any other path (a 404 for the caller). */
  serve(path: string, query: URLSearchParams, headers: { accept?: string; ifNoneMatch?: string }): OpenApiResponse | undefined {
    if (path !== V3 && !path.startsWith(`${V3}/`)) return undefined;
    const pub = this.current();
    if (path === V3) {
      negotiate(headers.accept, { encodings: ['json'] }); // 406 unless JSON is acceptable
      return this.respond(pub.index, headers.ifNoneMatch, { 'cache-control': 'no-cache, private' });
    }
    const key = path.slice(V3.length + 1);
    const doc = pub.docs.get(key);
    if (!doc) return undefined;
    negotiate(headers.accept, { encodings: ['json'] });
    const requested = query.get('hash');
    if (requested !== null && requested !== '' && requested !== doc.hash) {
      return { status: 301, headers: { location: `${V3}/${key}?hash=${doc.hash}` }, body: Buffer.alloc(0) };
    }
    const caching: Record<string, string> =
      requested === doc.hash
        ? { 'cache-control': 'public, immutable', expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString(), vary: 'Accept' }
        : { 'cache-control': 'no-cache, private', vary: 'Accept' };
    return this.respond(doc, headers.ifNoneMatch, caching);
  }

  private respond(doc: { body: Buffer; hash: string }, ifNoneMatch: string | undefined, extra: Record<string, string>): OpenApiResponse {
    const headers = { 'content-type': 'application/json', etag: `"${doc.hash}"`, ...extra };
    if (etagMatches(ifNoneMatch, doc.hash)) return { status: 304, headers, body: Buffer.alloc(0) };
    return { status: 200, headers, body: doc.body };
  }

  /** The documents of the catalog's current state (built on first use and after a change). */
  private current(): Published {
    // Aggregated APIs' documents come from their extension servers (remoteDocuments), not from the catalog.
    const resources = this.catalog.resources().filter((r) => !r.aggregated);
    const remote = this.options.remoteDocuments?.() ?? [];
    const fp = fingerprint(resources) + JSON.stringify(remote.map((d) => [d.key, d.hash]));
    if (this.published?.fingerprint === fp) return this.published;
    // Documents by path key, each with the group name it is published under.
    const byGroupVersion = new Map<string, { group: string; defs: ResourceDef[] }>();
    const addTo = (group: string, r: ResourceDef) => {
      const key = group === '' ? `api/${r.version}` : `apis/${groupVersionString({ group, version: r.version })}`;
      const entry = byGroupVersion.get(key) ?? { group, defs: [] };
      entry.defs.push(r);
      byGroupVersion.set(key, entry);
    };
    for (const r of resources) addTo(r.group, r);
    const alias = (r: ResourceDef) => (this.options.k8sAliases ? upstreamGroup(r.group) : undefined);
    for (const r of resources) if (alias(r)) addTo(alias(r)!, r);
    const docs = new Map<string, { body: Buffer; hash: string }>();
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [key, { group, defs }] of byGroupVersion) {
      const body = Buffer.from(JSON.stringify(new GroupVersionDocument(group, defs[0].version, defs).build()));
      const hash = hashOf(body);
      docs.set(key, { body, hash });
      paths[key] = { serverRelativeURL: `${V3}/${key}?hash=${hash}` };
    }
    for (const { key, body, hash } of remote) {
      if (docs.has(key)) continue; // a local group version is never replaced by an extension's
      docs.set(key, { body, hash });
      paths[key] = { serverRelativeURL: `${V3}/${key}?hash=${hash}` };
    }
    const indexBody = Buffer.from(JSON.stringify({ paths }));
    this.published = { fingerprint: fp, docs, index: { body: indexBody, hash: hashOf(indexBody) } };
    return this.published;
  }
}
