import { JsonPath, applySchemaDefaults, pruneUnknownFields, validateCustomResource, type CustomResourceInfo, type ResourceDef } from '@orch/api';
import { FieldError, StatusError, type KubeObject } from '@orch/apimachinery';
import type { StatusStrategy, Strategy } from '../strategy';
import { get, statusSubresource } from './common';

/**
 * The `x-kubernetes-validations` rules of a custom resource's schema (SPEC "Validation
 * expressions"): errors of `obj` (with `old` for transition rules on update). Never mutates.
 */
export interface CustomResourceRules {
  validate(obj: KubeObject, old: KubeObject | undefined): FieldError[];
}

/** Rules of a schema without `x-kubernetes-validations`. */
export const NO_RULES: CustomResourceRules = { validate: () => [] };

/** Prunes what the schema does not specify and applies its defaults (request bodies after mutating admission, and reads). */
function normalize(obj: KubeObject, custom: CustomResourceInfo): void {
  pruneUnknownFields(obj as unknown as Record<string, unknown>, custom.schema);
  applySchemaDefaults(obj, custom.schema);
}

/** The scale subresource's replicas fields must hold non-negative integers when set (upstream validateScaleSpec/Status). */
function scaleErrors(obj: KubeObject, custom: CustomResourceInfo): FieldError[] {
  const errs: FieldError[] = [];
  for (const path of [custom.scale?.specReplicasPath, custom.scale?.statusReplicasPath]) {
    if (!path) continue;
    const v = get(obj, path.slice(1));
    if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < 0)) errs.push(FieldError.invalid(path.slice(1), v, 'should be a non-negative integer'));
  }
  return errs;
}

function errorsOf(obj: KubeObject, old: KubeObject | undefined, custom: CustomResourceInfo, rules: CustomResourceRules): FieldError[] {
  const errs = [...validateCustomResource(obj as unknown as Record<string, unknown>, custom.schema), ...scaleErrors(obj, custom)];
  // Expressions assume values of the declared types: a type error blocks them (upstream hasBlockingErr).
  if (rules === NO_RULES) return errs;
  if (errs.some((e) => e.type === 'FieldValueTypeInvalid')) {
    return [...errs, FieldError.invalid('<nil>', undefined, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')];
  }
  return [...errs, ...rules.validate(obj, old)];
}

/** Field-selector attributes of a CRD's selectableFields (`spec.color` for `.spec.color`). */
function selectableFieldAttributes(paths: readonly string[]): ((obj: KubeObject) => Record<string, string>) | undefined {
  if (paths.length === 0) return undefined;
  const compiled = paths.map((p) => ({ name: p.slice(1), path: JsonPath.parse(p) }));
  return (obj) => {
    const out: Record<string, string> = {};
    for (const { name, path } of compiled) {
      const v = path.find(obj)[0];
      out[name] = v === undefined || v === null ? '' : String(v);
    }
    return out;
  };
}

/**
 * The strategy of a custom resource (upstream apiextensions customResourceStrategy), built
 * from its catalog entry: schema pruning and defaulting on writes and reads, schema validation
 * with field paths, the CRD's validation rules, status and scale subresources, selectable
 * fields. Updates need metadata.resourceVersion; PUT never creates. A CRD being deleted takes
 * no new objects.
 */
export function customResourceStrategy(def: ResourceDef, rules: CustomResourceRules = NO_RULES): Strategy {
  const custom = def.custom;
  if (!custom) throw new Error(`${def.resource}.${def.group} is not a custom resource`);
  const hasStatus = def.subresources.some((s) => s.name === 'status');
  const status: StatusStrategy = {
    prepareForUpdate(obj, old) {
      statusSubresource.prepareForUpdate(obj, old);
      normalize(obj, custom);
    },
    validateUpdate: (obj, old) => errorsOf(obj, old, custom, rules),
  };
  // Objects written under this generation of the CRD were pruned and defaulted by its schema
  // when written (a deleted CRD takes its objects along): reads in their own version need the
  // work only once the CRD changed. Objects of another version always get it after conversion.
  const normalizeReads = custom.crdGeneration > 1;
  return {
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      if (custom.terminating) {
        throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating', { group: def.group, kind: def.resource });
      }
      if (hasStatus) delete (obj as { status?: unknown }).status;
      normalize(obj, custom);
    },
    prepareForUpdate(obj) {
      normalize(obj, custom);
    },
    validate: (obj) => errorsOf(obj, undefined, custom, rules),
    validateUpdate: (obj, old) => errorsOf(obj, old, custom, rules),
    ...(normalizeReads ? { onRead: (obj: KubeObject) => normalize(obj, custom) } : {}),
    afterConversion: (obj) => normalize(obj, custom),
    ...(custom.selectableFields.length ? { fieldAttributes: selectableFieldAttributes(custom.selectableFields) } : {}),
    ...(hasStatus ? { subresources: { status } } : {}),
  };
}
