import type { FastifyRequest } from 'fastify';
import { objectSchema, supportsStrategicMerge, type ResourceDef } from '@orch/api';
import { StatusError, applyJsonPatch, applyMergePatch, strategicMergePatch, type KubeObject } from '@orch/apimachinery';
import { validateFields, type FieldValidation } from './field-validation';
import { APPLY_PATCH_YAML, decodeBody, JSON_PATCH, MERGE_PATCH, PATCH_TYPES, STRATEGIC_MERGE_PATCH } from './body';

/** The media type of a PATCH body. */
export function patchContentType(req: FastifyRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim();
}

/**
 * Turns a PATCH request into a function from the current object to the patched one
 * (SPEC "Patch content types"). Unsupported content types are 415, and so are strategic
 * merge patches of kinds without a built-in schema (custom resources). Apply patches are not
 * functions of the object (see applyConfiguration); here they are 415.
 */
export function patchFunction(req: FastifyRequest, def: ResourceDef, fieldValidation: FieldValidation = 'Ignore', warnings: string[] = []): (current: KubeObject) => KubeObject {
  const contentType = patchContentType(req);
  if (!PATCH_TYPES.includes(contentType)) {
    throw StatusError.unsupportedMediaType(contentType || '(none)', PATCH_TYPES);
  }
  const strategic = supportsStrategicMerge(def.group, def.version, def.kind);
  if (contentType === APPLY_PATCH_YAML || (contentType === STRATEGIC_MERGE_PATCH && !strategic)) {
    throw StatusError.unsupportedMediaType(contentType, strategic ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH] : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH_YAML]);
  }
  const { value: patch, duplicates } = decodeBody(req.body as Buffer | undefined, contentType);
  // The patched object is checked like a body (unknown fields per the directive, types always).
  const checked = (out: KubeObject): KubeObject => {
    validateFields(out, def, duplicates, fieldValidation, warnings);
    return out;
  };
  if (contentType === JSON_PATCH) {
    if (!Array.isArray(patch)) throw StatusError.badRequest('json patch must be an array of operations');
    return (current) => checked(applyJsonPatch(current, patch) as KubeObject);
  }
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw StatusError.badRequest(`merge patch must be a JSON object, got ${Array.isArray(patch) ? 'an array' : typeof patch}`);
  }
  const schema = objectSchema(def.group, def.version, def.kind);
  return (current) => {
    const out = (contentType === STRATEGIC_MERGE_PATCH ? strategicMergePatch(current, patch, schema) : applyMergePatch(current, patch)) as KubeObject;
    if (out === null || typeof out !== 'object' || typeof out.metadata !== 'object' || out.metadata === null) {
      throw StatusError.badRequest(`the patch would remove the ${def.kind}'s metadata`);
    }
    return checked(out);
  };
}

/**
 * The configuration of a server-side apply patch (YAML or JSON): an object naming the
 * resource's kind (apiVersion is checked by the apply itself); unknown fields per the
 * fieldValidation directive.
 */
export function applyConfiguration(req: FastifyRequest, def: ResourceDef, fieldValidation: FieldValidation, warnings: string[]): KubeObject {
  // The YAML decoder accepts exactly one object (JSON is YAML).
  const { value, duplicates } = decodeBody(req.body as Buffer | undefined, APPLY_PATCH_YAML);
  const config = value as KubeObject;
  if (typeof config.kind !== 'string' || config.kind === '') throw StatusError.badRequest(`Object 'Kind' is missing in '${JSON.stringify(config)}'`);
  if (config.kind !== def.kind) {
    throw StatusError.badRequest(`the kind of the object (${config.kind}) does not match the kind of the resource (${def.kind})`);
  }
  if (config.metadata !== undefined && (config.metadata === null || typeof config.metadata !== 'object' || Array.isArray(config.metadata))) {
    throw StatusError.badRequest('error decoding YAML: metadata must be an object');
  }
  validateFields(config, def, duplicates, fieldValidation, warnings);
  return config;
}
