import type { ResourceDef } from '@orch/api';
import { checkFields, schemaForKind } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';

/** The `fieldValidation` directive (SPEC query parameters; default Warn). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function parseFieldValidation(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw StatusError.badRequest(`fieldValidation must be one of "Ignore", "Warn" or "Strict", got ${JSON.stringify(v)}`);
}

/**
 * Checks a decoded object against its kind's schema (ARCHITECTURE §4). Wrong types are always
 * a 400. Unknown and duplicate fields follow the directive: Strict → one 400 naming all of
 * them; Warn → one warning per field (sent as `Warning` headers); Ignore → nothing.
 * `duplicates` are JSON paths from the decoder (`.metadata.labels.a`).
 */
export function validateFields(obj: KubeObject, def: ResourceDef, duplicates: readonly string[], directive: FieldValidation, warnings: string[]): void {
  if (!schemaForKind(def.group, def.version, def.kind)) return; // custom kinds: schema comes with CRDs
  const { unknown, typeErrors } = checkFields(obj, def.group, def.version, def.kind);
  if (typeErrors.length > 0) {
    throw StatusError.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${typeErrors.map((e) => e.detail || e.toString()).join(', ')}`);
  }
  if (directive === 'Ignore') return;
  const problems = [...duplicates.map((p) => `duplicate field "${p.replace(/^\./, '')}"`), ...unknown.map((p) => `unknown field "${p.replace(/^\./, '')}"`)];
  if (problems.length === 0) return;
  if (directive === 'Strict') throw StatusError.badRequest(`strict decoding error: ${problems.join(', ')}`);
  warnings.push(...problems);
}
