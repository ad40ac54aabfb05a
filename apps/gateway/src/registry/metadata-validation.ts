import {
  FieldError,
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validatePathSegmentName,
  type ObjectMeta,
} from '@orch/apimachinery';
import type { NameRule } from './strategy';

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Name validators per rule; `prefix` validates a generateName (upstream ValidateNameFunc). */
const NAME_RULES: Record<NameRule, (name: string, prefix: boolean) => string[]> = {
  dns1123Subdomain: nameIsDNSSubdomain,
  dns1123Label: nameIsDNSLabel,
  dns1035Label: nameIsDNS1035Label,
  pathSegment: validatePathSegmentName,
};

/** Generic metadata validation (upstream ValidateObjectMeta); never mutates. */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, nameRule: NameRule): FieldError[] {
  const errs: FieldError[] = [];
  if (!meta.name) {
    errs.push(FieldError.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of NAME_RULES[nameRule](meta.name, false)) errs.push(FieldError.invalid('metadata.name', meta.name, msg));
  }
  if (meta.generateName) {
    for (const msg of NAME_RULES[nameRule](meta.generateName, true)) errs.push(FieldError.invalid('metadata.generateName', meta.generateName, msg));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(FieldError.required('metadata.namespace', ''));
    else for (const msg of isDNS1123Label(meta.namespace)) errs.push(FieldError.invalid('metadata.namespace', meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(FieldError.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    for (const msg of isQualifiedName(k)) errs.push(FieldError.invalid('metadata.labels', k, msg));
    if (typeof v !== 'string') errs.push(FieldError.typeInvalid(`metadata.labels.${k}`, v, 'must be a string'));
    else for (const msg of isValidLabelValue(v)) errs.push(FieldError.invalid('metadata.labels', v, msg));
  }
  let annotationBytes = 0;
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(FieldError.invalid('metadata.annotations', k, msg));
    if (typeof v !== 'string') errs.push(FieldError.typeInvalid(`metadata.annotations.${k}`, v, 'must be a string'));
    annotationBytes += k.length + String(v).length;
  }
  if (annotationBytes > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push(FieldError.tooLong('metadata.annotations', '', TOTAL_ANNOTATION_SIZE_LIMIT));
  }
  (meta.finalizers ?? []).forEach((f, i) => {
    const msgs = isQualifiedName(f);
    for (const msg of msgs) errs.push(FieldError.invalid(`metadata.finalizers[${i}]`, f, msg));
  });
  (meta.ownerReferences ?? []).forEach((ref, i) => {
    const p = `metadata.ownerReferences[${i}]`;
    if (!ref.apiVersion) errs.push(FieldError.invalid(`${p}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
    if (!ref.kind) errs.push(FieldError.invalid(`${p}.kind`, ref.kind ?? '', 'kind must not be empty'));
    if (!ref.name) errs.push(FieldError.invalid(`${p}.name`, ref.name ?? '', 'name must not be empty'));
    if (!ref.uid) errs.push(FieldError.invalid(`${p}.uid`, ref.uid ?? '', 'uid must not be empty'));
  });
  if ((meta.ownerReferences ?? []).filter((r) => r.controller).length > 1) {
    errs.push(FieldError.invalid('metadata.ownerReferences', meta.ownerReferences, 'Only one reference can have Controller set to true'));
  }
  return errs;
}

/** Fields that cannot change after creation (upstream ValidateObjectMetaUpdate). */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.name !== old.name) errs.push(FieldError.invalid('metadata.name', meta.name, 'field is immutable'));
  if ((meta.namespace ?? '') !== (old.namespace ?? '')) errs.push(FieldError.invalid('metadata.namespace', meta.namespace, 'field is immutable'));
  return errs;
}

const META_TYPES: Record<string, 'string' | 'object' | 'array' | 'number'> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  uid: 'string',
  resourceVersion: 'string',
  labels: 'object',
  annotations: 'object',
  finalizers: 'array',
  ownerReferences: 'array',
  managedFields: 'array',
  generation: 'number',
};
const META_TYPE_ENTRIES = Object.entries(META_TYPES);

/** Type errors of well-known metadata fields (a decode error: 400, not 422). */
export function metadataTypeErrors(meta: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  for (const [field, want] of META_TYPE_ENTRIES) {
    const v = (meta as Record<string, unknown>)[field];
    if (v === undefined || v === null) continue;
    const got = Array.isArray(v) ? 'array' : typeof v;
    if (got !== want) errs.push(FieldError.typeInvalid(`metadata.${field}`, v, `must be of type ${want}`));
  }
  return errs;
}
