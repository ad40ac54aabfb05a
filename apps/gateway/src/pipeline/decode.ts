import { canonicalGroup, checkFields, normalizeNulls, objectSchema, pruneUnknownFields, schemaForKind, supportsStrategicMerge, type GroupVersionKind, type JSONSchemaProps } from '@orch/api';
import { StatusError, applyJsonPatch, applyMergePatch, strategicMergePatch, type DeleteOptions, type KubeObject } from '@orch/apimachinery';
import { metadataTypeErrors } from '../registry/metadata-validation';
import type { ApiRequest, DecodedRequestBody } from './api-request';
import { requestTarget } from './api-request';
import { APPLY_PATCH_YAML, JSON_PATCH, MERGE_PATCH, PATCH_TYPES, STRATEGIC_MERGE_PATCH, decodeMedia } from './media';
import { queryBool } from './query';

/** The `fieldValidation` directive (SPEC query parameters; default Warn). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function parseFieldValidation(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw StatusError.badRequest(`fieldValidation must be one of "Ignore", "Warn" or "Strict", got ${JSON.stringify(v)}`);
}

/** Subresources whose bodies are streamed or forwarded, never decoded. */
const PASS_THROUGH_SUBRESOURCES = new Set(['proxy', 'log', 'exec', 'attach', 'portforward']);

/**
 * The decode stage: reads the body of every resource request with the one decoder below.
 * create/update (main resource, subresources, virtual kinds) → an object of the target's body
 * kind; patch → a patch function (apply → a configuration); delete/deletecollection →
 * DeleteOptions. Reads (get, list, watch) and streamed subresources have no body.
 */
export function decodeStage(r: ApiRequest): void {
  if (!r.info.isResourceRequest) return;
  const t = requestTarget(r);
  const raw = r.req.body as Buffer | undefined;
  const contentType = r.req.headers['content-type'];
  const warnings = t.ctx.warnings;
  // A custom resource's body (main resource or status) is checked against its CRD's schema.
  const kind: BodyKind = t.def.custom && t.bodyKind.kind === t.def.kind && t.bodyKind.group === t.def.group ? { ...t.bodyKind, customSchema: t.def.custom.schema } : t.bodyKind;
  r.body = decodeFor(String(r.info.verb), t.sub?.name ?? '', raw, contentType, kind, t.fieldValidation, warnings, r.query);
}

/** The kind a body must have; custom resources carry their CRD version's structural schema. */
export interface BodyKind extends GroupVersionKind {
  customSchema?: JSONSchemaProps;
}

function decodeFor(
  verb: string,
  subresource: string,
  raw: Buffer | undefined,
  contentType: string | undefined,
  kind: BodyKind,
  directive: FieldValidation,
  warnings: string[],
  query: URLSearchParams,
): DecodedRequestBody {
  if (PASS_THROUGH_SUBRESOURCES.has(subresource)) return { type: 'none' };
  switch (verb) {
    case 'create':
    case 'update':
      return { type: 'object', object: decodeObject(raw, contentType, kind, directive, warnings) };
    case 'patch': {
      const media = mediaType(contentType);
      if (media === APPLY_PATCH_YAML) return { type: 'apply', config: decodeApplyConfiguration(raw, kind, directive, warnings) };
      return { type: 'patch', contentType: media, apply: decodePatch(raw, media, kind, directive, warnings) };
    }
    case 'delete':
    case 'deletecollection':
      return { type: 'deleteOptions', options: decodeDeleteOptions(raw, contentType, query, directive, warnings) };
    default:
      return { type: 'none' };
  }
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * Decodes an object body of `kind`: media type (JSON with duplicate-field detection, YAML,
 * protobuf), must be an object, type fields (`apiVersion`/`kind` name the kind, `*.k8s.io`
 * spellings accepted; absent ones are filled in), metadata types, then the schema check with
 * the field-validation directive. Every problem is a 400 naming the field.
 */
export function decodeObject(raw: Buffer | undefined, contentType: string | undefined, kind: BodyKind, directive: FieldValidation, warnings: string[]): KubeObject {
  const { value, duplicates } = decodeMedia(raw, contentType);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw StatusError.badRequest(`the body of the request must be a ${kind.kind} object`);
  }
  const obj = value as KubeObject;
  checkTypeFields(obj, kind);
  checkMetadataTypes(obj, kind);
  validateFields(obj, kind, duplicates, directive, warnings);
  return obj;
}

/** kind and apiVersion, when given, must name `kind` (400 otherwise); absent ones are filled in. */
export function checkTypeFields(obj: KubeObject, kind: GroupVersionKind): void {
  const want = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') throw StatusError.badRequest('apiVersion must be a string');
  if (obj.kind !== undefined && typeof obj.kind !== 'string') throw StatusError.badRequest('kind must be a string');
  if (obj.apiVersion && obj.apiVersion !== want && canonicalApiVersion(obj.apiVersion) !== want) {
    throw StatusError.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`);
  }
  if (obj.kind && obj.kind !== kind.kind) {
    throw StatusError.badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${kind.kind})`);
  }
  // Typed clients often send no type fields: the endpoint decides them, as upstream does.
  obj.apiVersion ||= want;
  obj.kind ||= kind.kind;
}

function canonicalApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? apiVersion : `${canonicalGroup(apiVersion.slice(0, slash))}${apiVersion.slice(slash)}`;
}

function checkMetadataTypes(obj: KubeObject, kind: GroupVersionKind): void {
  if (obj.metadata === undefined || obj.metadata === null) return;
  if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
    throw StatusError.badRequest(`json: cannot unmarshal ${Array.isArray(obj.metadata) ? 'array' : typeof obj.metadata} into Go struct field ${kind.kind}.metadata of type v1.ObjectMeta`);
  }
  const typeErrs = metadataTypeErrors(obj.metadata);
  if (typeErrs.length) throw StatusError.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${typeErrs.map((e) => e.toString()).join(', ')}`);
}

/**
 * Checks a decoded object against its kind's schema (ARCHITECTURE §4). Wrong types are always
 * a 400. Unknown and duplicate fields follow the directive: Strict → one 400 naming all of
 * them; Warn → one warning per field (sent as `Warning` headers); Ignore → nothing.
 * `duplicates` are JSON paths from the decoder (`.metadata.labels.a`). A custom resource is
 * pruned to its schema (upstream: what the schema does not specify is dropped; the dropped
 * fields are the unknown ones); its value types are checked by validation (422), not here.
 */
export function validateFields(obj: KubeObject, kind: BodyKind, duplicates: readonly string[], directive: FieldValidation, warnings: string[]): void {
  let unknown: string[];
  // Whether a null may sit where the schema declares a value (custom resources: never looked for).
  let nulls = true;
  if (kind.customSchema) {
    unknown = pruneUnknownFields(obj as unknown as Record<string, unknown>, kind.customSchema).map((p) => `.${p}`);
  } else {
    if (!schemaForKind(kind.group, kind.version, kind.kind)) return;
    const checked = checkFields(obj, kind.group, kind.version, kind.kind);
    if (checked.typeErrors.length > 0) {
      throw StatusError.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${checked.typeErrors.map((e) => e.detail || e.toString()).join(', ')}`);
    }
    unknown = checked.unknown;
    nulls = checked.nulls;
  }
  // What Go's typed decoding leaves for null (dropped fields, zero-valued list items): nothing later meets a null.
  if (nulls) normalizeNulls(obj, kind.group, kind.version, kind.kind);
  if (directive === 'Ignore') return;
  const problems = [...duplicates.map((p) => `duplicate field "${p.replace(/^\./, '')}"`), ...unknown.map((p) => `unknown field "${p.replace(/^\./, '')}"`)];
  if (problems.length === 0) return;
  if (directive === 'Strict') throw StatusError.badRequest(`strict decoding error: ${problems.join(', ')}`);
  warnings.push(...problems);
}

/**
 * Decodes a PATCH body into a function from the current object to the patched one (SPEC
 * "Patch content types"); the patched object is checked like a body of `kind` (types always,
 * unknown fields per the directive). Unsupported content types are 415, and so are strategic
 * merge patches of kinds without a built-in schema (custom resources) and apply patches
 * (not functions of the object: see decodeApplyConfiguration).
 */
export function decodePatch(raw: Buffer | undefined, contentType: string, kind: BodyKind, directive: FieldValidation = 'Ignore', warnings: string[] = []): (current: KubeObject) => KubeObject {
  if (!PATCH_TYPES.includes(contentType)) {
    throw StatusError.unsupportedMediaType(contentType || '(none)', PATCH_TYPES);
  }
  // Never for custom resources (SPEC Patch content types).
  const strategic = !kind.customSchema && supportsStrategicMerge(kind.group, kind.version, kind.kind);
  if (contentType === APPLY_PATCH_YAML || (contentType === STRATEGIC_MERGE_PATCH && !strategic)) {
    throw StatusError.unsupportedMediaType(contentType, strategic ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH] : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH_YAML]);
  }
  const { value: patch, duplicates } = decodeMedia(raw, contentType);
  const checked = (out: KubeObject): KubeObject => {
    validateFields(out, kind, duplicates, directive, warnings);
    return out;
  };
  if (contentType === JSON_PATCH) {
    if (!Array.isArray(patch)) throw StatusError.badRequest('json patch must be an array of operations');
    return (current) => checked(applyJsonPatch(current, patch) as KubeObject);
  }
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw StatusError.badRequest(`merge patch must be a JSON object, got ${Array.isArray(patch) ? 'an array' : typeof patch}`);
  }
  const schema = objectSchema(kind.group, kind.version, kind.kind);
  return (current) => {
    const out = (contentType === STRATEGIC_MERGE_PATCH ? strategicMergePatch(current, patch, schema) : applyMergePatch(current, patch)) as KubeObject;
    if (out === null || typeof out !== 'object' || typeof out.metadata !== 'object' || out.metadata === null) {
      throw StatusError.badRequest(`the patch would remove the ${kind.kind}'s metadata`);
    }
    return checked(out);
  };
}

/**
 * The configuration of a server-side apply patch (YAML or JSON): an object naming the
 * resource's kind (apiVersion is checked by the apply itself); unknown fields per the
 * fieldValidation directive.
 */
export function decodeApplyConfiguration(raw: Buffer | undefined, kind: BodyKind, directive: FieldValidation, warnings: string[]): KubeObject {
  // The YAML decoder accepts exactly one object (JSON is YAML).
  const { value, duplicates } = decodeMedia(raw, APPLY_PATCH_YAML);
  const config = value as KubeObject;
  if (typeof config.kind !== 'string' || config.kind === '') throw StatusError.badRequest(`Object 'Kind' is missing in '${JSON.stringify(config)}'`);
  if (config.kind !== kind.kind) {
    throw StatusError.badRequest(`the kind of the object (${config.kind}) does not match the kind of the resource (${kind.kind})`);
  }
  if (config.metadata !== undefined && (config.metadata === null || typeof config.metadata !== 'object' || Array.isArray(config.metadata))) {
    throw StatusError.badRequest('error decoding YAML: metadata must be an object');
  }
  validateFields(config, kind, duplicates, directive, warnings);
  return config;
}

/** DeleteOptions is served in every group version (upstream registers it in each). */
const DELETE_OPTIONS: GroupVersionKind = { group: 'meta.orch.io', version: 'v1', kind: 'DeleteOptions' };

/**
 * DeleteOptions from the body (optional; JSON, YAML or protobuf; kind must be DeleteOptions
 * in any group version) and the query (query parameters win, as upstream).
 */
export function decodeDeleteOptions(raw: Buffer | undefined, contentType: string | undefined, query: URLSearchParams, directive: FieldValidation = 'Ignore', warnings: string[] = []): DeleteOptions {
  let options: DeleteOptions = {};
  if (raw && raw.length > 0) {
    const { value, duplicates } = decodeMedia(raw, contentType);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw StatusError.badRequest('DeleteOptions must be an object');
    const obj = value as KubeObject & DeleteOptions;
    if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== 'DeleteOptions') {
      throw StatusError.badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (DeleteOptions)`);
    }
    if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') throw StatusError.badRequest('apiVersion must be a string');
    const { apiVersion: _a, kind: _k, ...rest } = obj;
    validateFields({ ...rest, apiVersion: 'meta.orch.io/v1', kind: 'DeleteOptions' } as KubeObject, DELETE_OPTIONS, duplicates, directive, warnings);
    options = rest as DeleteOptions;
  }
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw StatusError.badRequest(`invalid gracePeriodSeconds: ${JSON.stringify(grace)}`);
    options.gracePeriodSeconds = n;
  }
  const policy = query.get('propagationPolicy');
  if (policy !== null) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = queryBool(query, 'orphanDependents');
  if (orphan !== undefined) options.orphanDependents = orphan;
  return options;
}
