import type { FastifyRequest } from 'fastify';
import type { ResourceDef } from '@orch/api';
import { StatusError, applyJsonPatch, applyMergePatch, type KubeObject } from '@orch/apimachinery';
import { validateFields, type FieldValidation } from './field-validation';
import { APPLY_PATCH_YAML, decodeBody, JSON_PATCH, MERGE_PATCH, PATCH_TYPES, STRATEGIC_MERGE_PATCH } from './body';

/**
 * Turns a PATCH request into a function from the current object to the patched one
 * (SPEC "Patch content types"). Unsupported content types are 415.
 */
export function patchFunction(req: FastifyRequest, def: ResourceDef, fieldValidation: FieldValidation = 'Ignore', warnings: string[] = []): (current: KubeObject) => KubeObject {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
  if (!PATCH_TYPES.includes(contentType)) {
    throw StatusError.unsupportedMediaType(contentType || '(none)', PATCH_TYPES);
  }
  if (contentType === STRATEGIC_MERGE_PATCH || contentType === APPLY_PATCH_YAML) {
    throw StatusError.unsupportedMediaType(contentType, [JSON_PATCH, MERGE_PATCH]);
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
  return (current) => {
    const out = applyMergePatch(current, patch) as KubeObject;
    if (out === null || typeof out !== 'object' || typeof out.metadata !== 'object' || out.metadata === null) {
      throw StatusError.badRequest(`the patch would remove the ${def.kind}'s metadata`);
    }
    return checked(out);
  };
}
