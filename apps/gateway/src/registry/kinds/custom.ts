import { JsonPath, applySchemaDefaults, pruneUnknownFields, validateCustomResource, type CustomResourceInfo, type PrinterColumn, type ResourceDef } from '@orch/api';
import { FieldError, StatusError, parseTime, type KubeObject, type TableColumns } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { SCALE, col, get, part, statusSubresource, type ResolvedKind, type SubresourceBinding } from './binding';
import { age } from './table-cells';

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
function selectableFieldAttributes(paths: readonly string[]): (obj: KubeObject) => Record<string, string> {
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
function customResourceStrategy(def: ResourceDef, custom: CustomResourceInfo, rules: CustomResourceRules): Strategy {
  const hasStatus = def.subresources.some((s) => s.name === 'status');
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
  };
}


/** A CRD version without printer columns shows its objects' age (upstream serveDefaultColumnsIfEmpty). */
const DEFAULT_CUSTOM_COLUMNS: PrinterColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

/** A printer column's cell from the first value its JSONPath selects (upstream apiextensions tableconvertor). */
function customCell(type: string, values: unknown[]): unknown {
  if (values.length === 0 || values[0] === undefined) return null;
  const v = values[0];
  switch (type) {
    case 'date':
      return typeof v === 'string' ? (parseTime(v) === undefined ? '<invalid>' : age(v)) : null;
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

/** The Table of a custom resource: Name and its CRD version's additionalPrinterColumns. */
export function customTable(printerColumns: readonly PrinterColumn[]): TableColumns {
  const cols = printerColumns.length ? printerColumns : DEFAULT_CUSTOM_COLUMNS;
  const paths = cols.map((c) => JsonPath.parse(c.jsonPath));
  return {
    columns: [
      col('Name'),
      ...cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`, priority: c.priority ?? 0 })),
    ],
    cells: (obj) => [obj.metadata.name, ...cols.map((c, i) => customCell(c.type, paths[i].find(obj)))],
  };
}


/**
 * The binding of a custom resource (the generic one every CRD's resources share), built from
 * its catalog entry when apiextensions/ starts serving it: the strategy (upstream
 * customResourceStrategy), the status and scale subresources the CRD declares, its selectable
 * fields and printer columns. `rules`: the CRD's validation rules (apiextensions/validation-rules.ts).
 */
export function customKind(def: ResourceDef, rules: CustomResourceRules = NO_RULES): ResolvedKind {
  const custom = def.custom;
  if (!custom) throw new Error(`${def.resource}.${def.group} is not a custom resource`);
  const subresources: Record<string, SubresourceBinding> = {};
  for (const sub of def.subresources) {
    if (sub.name === 'status') {
      subresources.status = part({
        prepareForUpdate(obj, old) {
          statusSubresource.prepareForUpdate(obj, old);
          normalize(obj, custom);
        },
        validateUpdate: (obj, old) => errorsOf(obj, old, custom, rules),
      });
    } else if (sub.name === 'scale') subresources.scale = SCALE;
    else throw new Error(`custom resources have no ${sub.name} subresource`);
  }
  return {
    strategy: customResourceStrategy(def, custom, rules),
    ...(custom.selectableFields.length ? { fieldAttributes: selectableFieldAttributes(custom.selectableFields) } : {}),
    subresources,
    table: customTable(custom.printerColumns),
  };
}
