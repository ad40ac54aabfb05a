import { StatusError } from './errors';

// Content negotiation as upstream apiserver does it (munnerz/goautoneg + apiserver
// negotiation): Accept is a fallback list; the first clause the endpoint can serve wins.

/** One clause of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q (`as`, `g`, `v`, `stream`, ...). */
  params: Record<string, string>;
  q: number;
}

/** Plain serializations of API objects. */
export type Encoding = 'json' | 'yaml' | 'protobuf';

/** Media types of each encoding; the first is the one used for wildcards and in responses. */
export const ENCODING_MEDIA_TYPES: Readonly<Record<Encoding, readonly string[]>> = {
  json: ['application/json'],
  yaml: ['application/yaml'],
  protobuf: ['application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'],
};

/** Groups whose `as=Table` (v1, v1beta1) we render; meta.k8s.io is the stock-kubectl alias. */
export const TABLE_GROUPS: readonly string[] = ['meta.orch.io', 'meta.k8s.io'];
const TABLE_VERSIONS = ['v1', 'v1beta1'];
/** Metadata-only views (`as=PartialObjectMetadata[List]`), in the same groups and versions as tables. */
const PARTIAL_METADATA_KINDS = ['PartialObjectMetadata', 'PartialObjectMetadataList'];
/** Groups of aggregated discovery (v2, v2beta1); kubectl only understands the k8s.io one. */
export const DISCOVERY_GROUPS: readonly string[] = ['apidiscovery.orch.io', 'apidiscovery.k8s.io'];
const DISCOVERY_VERSIONS = ['v2', 'v2beta1'];

/**
 * Parses an Accept header (goautoneg ParseAccept): clauses without a `/` (other than `*`)
 * are dropped; the result is ordered by q, then concrete types before wildcards, otherwise
 * keeping the client's order.
 */
export function parseAccept(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';');
    const sp = range.split('/');
    const type = sp[0].trim().toLowerCase();
    if (sp.length === 1 && type === '*') {
      out.push({ type: '*', subtype: '*', params: {}, q: 1 });
      continue;
    }
    if (sp.length !== 2) continue;
    const r: MediaRange = { type, subtype: sp[1].trim().toLowerCase(), params: {}, q: 1 };
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim();
      if (name === 'q') {
        const q = Number(value);
        r.q = value !== '' && Number.isFinite(q) ? q : 0;
      } else {
        r.params[name] = value;
      }
    }
    out.push(r);
  }
  // goautoneg sorts with an insertion sort (stable) and this comparator.
  const less = (a: MediaRange, b: MediaRange): boolean =>
    a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subtype !== '*' && b.subtype === '*');
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]];
  }
  return out;
}

/** What an endpoint can produce. */
export interface Offers {
  /** Plain encodings in server preference order; the first answers a missing Accept header. */
  encodings: readonly Encoding[];
  /** The endpoint renders Tables (`as=Table;g=meta.{orch,k8s}.io;v=v1|v1beta1`) in json or yaml. */
  table?: boolean;
  /** The endpoint serves aggregated discovery (`as=APIGroupDiscoveryList`) in json. */
  discovery?: boolean;
  /**
   * The endpoint answers with metadata only (`as=PartialObjectMetadata` or
   * `as=PartialObjectMetadataList`, `g=meta.{orch,k8s}.io`, v1 or v1beta1) in any offered
   * encoding. Whether the kind fits the response (an object or a list) is checked when encoding.
   */
  partialMetadata?: boolean;
}

/** The representation chosen for a response, with the Content-Type header to send. */
export type Negotiated =
  | { kind: 'json' | 'yaml' | 'protobuf'; contentType: string }
  | { kind: 'table'; group: string; version: string; encoding: 'json' | 'yaml'; contentType: string }
  | { kind: 'partial'; as: 'PartialObjectMetadata' | 'PartialObjectMetadataList'; group: string; version: string; encoding: Encoding; contentType: string }
  | { kind: 'discovery'; group: string; version: string; contentType: string };

/**
 * Chooses the response representation (upstream NegotiateMediaTypeOptions): clauses in
 * parseAccept order, each against the offered encodings in server order; `*` wildcards
 * match; `stream=watch` is accepted for json and protobuf. No acceptable clause → 406.
 */
export function negotiate(accept: string | undefined, offers: Offers): Negotiated {
  if (!accept || accept.trim() === '') {
    const enc = offers.encodings[0];
    return { kind: enc, contentType: ENCODING_MEDIA_TYPES[enc][0] };
  }
  for (const clause of parseAccept(accept)) {
    for (const enc of offers.encodings) {
      const mediaType = ENCODING_MEDIA_TYPES[enc].find((m) => matches(clause, m));
      if (!mediaType) continue;
      const chosen = acceptClause(clause, enc, mediaType, offers);
      if (chosen) return chosen;
    }
  }
  throw StatusError.notAcceptable(offers.encodings.flatMap((e) => ENCODING_MEDIA_TYPES[e]));
}

function matches(clause: MediaRange, mediaType: string): boolean {
  const [type, subtype] = mediaType.split('/');
  return (clause.type === type && (clause.subtype === subtype || clause.subtype === '*')) || (clause.type === '*' && clause.subtype === '*');
}

/** upstream acceptMediaTypeOptions + AllowsMediaTypeTransform for one clause and encoding. */
function acceptClause(clause: MediaRange, enc: Encoding, mediaType: string, offers: Offers): Negotiated | undefined {
  const { as, g, v, stream } = clause.params;
  if (stream && (stream !== 'watch' || enc === 'yaml')) return undefined;
  if (as === undefined && g === undefined && v === undefined) return { kind: enc, contentType: mediaType };
  if (offers.table && as === 'Table' && TABLE_GROUPS.includes(g) && TABLE_VERSIONS.includes(v) && enc !== 'protobuf') {
    return { kind: 'table', group: g, version: v, encoding: enc, contentType: mediaType };
  }
  if (offers.partialMetadata && PARTIAL_METADATA_KINDS.includes(as) && TABLE_GROUPS.includes(g) && TABLE_VERSIONS.includes(v)) {
    return { kind: 'partial', as: as as 'PartialObjectMetadata' | 'PartialObjectMetadataList', group: g, version: v, encoding: enc, contentType: mediaType };
  }
  if (offers.discovery && as === 'APIGroupDiscoveryList' && DISCOVERY_GROUPS.includes(g) && DISCOVERY_VERSIONS.includes(v) && enc === 'json') {
    return { kind: 'discovery', group: g, version: v, contentType: `${mediaType};g=${g};v=${v};as=APIGroupDiscoveryList` };
  }
  return undefined;
}

/** A parsed Content-Type header. */
export interface ContentType {
  /** Lower-case `type/subtype`. */
  mediaType: string;
  /** Parameters with lower-case names (quoted values unquoted). */
  params: Record<string, string>;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE_RE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);
const PARAM_RE = new RegExp(`^\\s*(${TOKEN})\\s*=\\s*(?:(${TOKEN})|"((?:[^"\\\\]|\\\\.)*)")\\s*$`);

/** Media types decodable as request bodies, for 415 messages. */
const BODY_MEDIA_TYPES = [...ENCODING_MEDIA_TYPES.json, ...ENCODING_MEDIA_TYPES.yaml, ...ENCODING_MEDIA_TYPES.protobuf];

/**
 * Parses a Content-Type header (Go mime.ParseMediaType). A malformed header is a 415 listing
 * `supported`.
 */
export function parseContentType(header: string, supported: readonly string[] = BODY_MEDIA_TYPES): ContentType {
  const [head, ...rest] = header.split(';');
  const m = MEDIA_TYPE_RE.exec(head.trim());
  if (!m) throw StatusError.unsupportedMediaType(header, [...supported]);
  const params: Record<string, string> = {};
  for (const p of rest) {
    if (p.trim() === '') continue;
    const pm = PARAM_RE.exec(p);
    if (!pm) throw StatusError.unsupportedMediaType(header, [...supported]);
    params[pm[1].toLowerCase()] = pm[2] ?? pm[3].replace(/\\(.)/g, '$1');
  }
  return { mediaType: `${m[1]}/${m[2]}`.toLowerCase(), params };
}

/** The encoding of a body media type (`application/vnd.kubernetes.protobuf` → protobuf). */
export function encodingOf(mediaType: string): Encoding | undefined {
  return (Object.keys(ENCODING_MEDIA_TYPES) as Encoding[]).find((e) => ENCODING_MEDIA_TYPES[e].includes(mediaType));
}
