import { ProtobufError, ProtobufUnsupportedError, decodeProtobuf } from '@orch/api';
import { BoundedMap, StatusError, decodeJson, decodeYaml, parseContentType } from '@orch/apimachinery';

/** Request body limit (upstream maxRequestBodyBytes). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export const JSON_TYPE = 'application/json';
export const YAML_TYPE = 'application/yaml';
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH_YAML = 'application/apply-patch+yaml';
export const PROTOBUF_TYPES = ['application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'];

export const PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH_YAML];

/** The media type of each Content-Type header seen (clients send a few; a malformed one is not kept). */
const MEDIA_TYPES = new BoundedMap<string, string>(256);

export interface DecodedMedia {
  value: unknown;
  /** JSON paths of keys given twice (`.metadata.labels.a`). */
  duplicates: string[];
}

/**
 * Decodes an object body by Content-Type (JSON when absent): JSON, YAML, or protobuf of
 * either brand (`application/vnd.orch.protobuf`, `application/vnd.kubernetes.protobuf`, which
 * kubectl's typed clients send). Unknown types → 415.
 */
export function decodeMedia(body: Buffer | undefined, contentType: string | undefined): DecodedMedia {
  const media = contentType ? MEDIA_TYPES.get(contentType, (header) => parseContentType(header).mediaType) : JSON_TYPE;
  if (!body || body.length === 0) throw StatusError.badRequest('the request body is empty: an object is required');
  switch (media) {
    case JSON_TYPE:
    case MERGE_PATCH:
    case JSON_PATCH:
    case STRATEGIC_MERGE_PATCH:
      return decodeJson(body);
    case YAML_TYPE:
    case 'application/x-yaml':
    case 'text/yaml':
    case APPLY_PATCH_YAML:
      return decodeYaml(body);
    case PROTOBUF_TYPES[0]:
    case PROTOBUF_TYPES[1]:
      return { value: decodeProtobufBody(body, media), duplicates: [] };
    default:
      throw StatusError.unsupportedMediaType(media, [JSON_TYPE, YAML_TYPE]);
  }
}

/** A protobuf body: malformed → 400; a kind without a built-in schema (custom resources) → 415. */
function decodeProtobufBody(body: Buffer, media: string): unknown {
  try {
    return decodeProtobuf(body);
  } catch (err) {
    if (err instanceof ProtobufUnsupportedError) throw StatusError.unsupportedMediaType(media, [JSON_TYPE, YAML_TYPE]);
    if (err instanceof ProtobufError) throw StatusError.badRequest(`unable to decode the protobuf body: ${err.message}`);
    throw err;
  }
}
