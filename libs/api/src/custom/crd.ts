import { FieldError, nameIsDNSSubdomain, type KubeObject } from '@orch/apimachinery';
import { ALL_VERBS } from '../catalog-data';
import type { CustomResourceConversion, CustomResourceInfo, PrinterColumn, ResourceDef, SubresourceDef } from '../catalog-types';
import type { WebhookClientConfig } from '../types/generated/apiextensions-v1';
import { isJsonObject, memberOf, type JSONSchemaProps } from './json-schema';
import { JsonPath, JsonPathError } from './jsonpath';
import { structuralSchemaErrors } from './structural';

// CustomResourceDefinition (apiextensions.orch.io/v1): its types, v1 defaulting, the SPEC
// rules ("API versions no longer served": scope required, structural openAPIV3Schema
// required, preserveUnknownFields true refused, webhook conversion settings under
// spec.conversion.webhook, jsonPath), and the catalog entries a CRD adds.

export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: Record<string, never>; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CustomResourceDefinitionCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinition extends KubeObject {
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceDefinitionVersion[];
    conversion?: CustomResourceConversion;
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CustomResourceDefinitionCondition[];
    acceptedNames?: CustomResourceDefinitionNames;
    storedVersions?: string[];
  };
}

/** Finalizer that holds a deleted CRD until its custom resources are gone (upstream name, orch brand). */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.orch.io';

/** Annotations that approve a CRD in a protected group (`*.orch.io`, `*.k8s.io`, `*.kubernetes.io`). */
export const API_APPROVED_ANNOTATIONS = ['api-approved.orch.io', 'api-approved.kubernetes.io'];

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const MAX_SELECTABLE_FIELDS = 8;

function dns1035(value: string): string[] {
  if (value.length > 63) return ['must be no more than 63 characters'];
  return DNS1035_LABEL.test(value) ? [] : ["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"];
}

/** v1 defaulting (upstream SetDefaults_CustomResourceDefinition*): singular, listKind, conversion, service port. */
export function defaultCustomResourceDefinition(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!isJsonObject(spec)) return;
  if (isJsonObject(spec.names) && typeof spec.names.kind === 'string') {
    spec.names.singular ||= spec.names.kind.toLowerCase();
    spec.names.listKind ||= `${spec.names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  if (isJsonObject(spec.conversion)) {
    spec.conversion.strategy ||= 'None';
    const svc = spec.conversion.webhook?.clientConfig?.service;
    if (isJsonObject(svc)) svc.port ??= 443;
  }
  if (spec.preserveUnknownFields === undefined) spec.preserveUnknownFields = false;
}

/** The storage version (the one marked `storage: true`), or undefined. */
export function storageVersionOf(crd: CustomResourceDefinition): string | undefined {
  return crd.spec?.versions?.find((v) => v.storage)?.name;
}

/** A simple field path (`.spec.replicas`) resolved in the schema, or an error text. */
function schemaAtPath(schema: JSONSchemaProps | undefined, path: string): JSONSchemaProps | string {
  let fields: string[] | undefined;
  try {
    fields = JsonPath.parse(path).fieldNames();
  } catch (e) {
    return (e as Error).message;
  }
  if (!fields || fields.length === 0) return 'must be a simple json path of fields';
  let cur: JSONSchemaProps | undefined = schema;
  for (const f of fields) {
    cur = cur && memberOf(cur, f);
    if (!cur) return 'is not defined in the schema';
  }
  return cur ?? 'is not defined in the schema';
}

/**
 * Errors of a CRD against the apiextensions v1 rules. `old` is the stored CRD of an update
 * (immutable fields, storedVersions).
 */
export function validateCustomResourceDefinition(crd: CustomResourceDefinition, old?: CustomResourceDefinition): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec;
  if (!isJsonObject(spec)) return [FieldError.required('spec', '')];
  const names = isJsonObject(spec.names) ? spec.names : ({} as CustomResourceDefinitionNames);
  // Group and names.
  if (!spec.group) errs.push(FieldError.required('spec.group', ''));
  else {
    for (const m of nameIsDNSSubdomain(spec.group, false)) errs.push(FieldError.invalid('spec.group', spec.group, m));
    if (!spec.group.includes('.')) errs.push(FieldError.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
    if (/(^|\.)(orch\.io|k8s\.io|kubernetes\.io)$/.test(spec.group) && !API_APPROVED_ANNOTATIONS.some((a) => crd.metadata.annotations?.[a])) {
      errs.push(FieldError.required(`metadata.annotations[${API_APPROVED_ANNOTATIONS[0]}]`, `protected groups must have approval annotation "${API_APPROVED_ANNOTATIONS[0]}"`));
    }
  }
  if (spec.group && names.plural && crd.metadata.name !== `${names.plural}.${spec.group}`) {
    errs.push(FieldError.invalid('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  errs.push(...validateNames(names, 'spec.names'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') errs.push(FieldError.notSupported('spec.scope', spec.scope ?? '', ['Cluster', 'Namespaced']));
  if (spec.preserveUnknownFields === true) {
    errs.push(FieldError.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  // Versions.
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) errs.push(FieldError.required('spec.versions', 'must have at least one version'));
  const storageCount = versions.filter((v) => v?.storage === true).length;
  if (versions.length > 0 && storageCount !== 1) errs.push(FieldError.invalid('spec.versions', versions.map((v) => v?.name), 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (!isJsonObject(v)) return void errs.push(FieldError.invalid(at, v, 'must be an object'));
    if (!v.name) errs.push(FieldError.required(`${at}.name`, ''));
    else {
      for (const m of dns1035(v.name)) errs.push(FieldError.invalid(`${at}.name`, v.name, m));
      if (seen.has(v.name)) errs.push(FieldError.invalid('spec.versions', versions.map((x) => x?.name), 'must contain unique version names'));
      seen.add(v.name);
    }
    if (typeof v.served !== 'boolean') errs.push(FieldError.required(`${at}.served`, ''));
    if (typeof v.storage !== 'boolean') errs.push(FieldError.required(`${at}.storage`, ''));
    const schema = v.schema?.openAPIV3Schema;
    errs.push(...structuralSchemaErrors(schema, `${at}.schema.openAPIV3Schema`));
    errs.push(...validateSubresources(v, isJsonObject(schema) ? schema : undefined, at));
    errs.push(...validatePrinterColumns(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`));
    errs.push(...validateSelectableFields(v.selectableFields, isJsonObject(schema) ? schema : undefined, `${at}.selectableFields`));
    if (v.deprecationWarning !== undefined && !v.deprecated) errs.push(FieldError.invalid(`${at}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
  });
  if (versions.length > 0 && !versions.some((v) => v?.served)) errs.push(FieldError.invalid('spec.versions', versions.map((v) => v?.name), 'must have at least one served version'));
  errs.push(...validateConversion(spec.conversion));
  // Status and update rules.
  const stored = crd.status?.storedVersions ?? [];
  stored.forEach((sv, i) => {
    if (!versions.some((v) => v?.name === sv)) errs.push(FieldError.invalid(`status.storedVersions[${i}]`, sv, 'must appear in spec.versions'));
  });
  if (old) {
    if (old.spec?.scope && spec.scope !== old.spec.scope) errs.push(FieldError.invalid('spec.scope', spec.scope, 'field is immutable'));
  }
  return errs;
}

function validateNames(names: CustomResourceDefinitionNames, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!names.plural) errs.push(FieldError.required(`${at}.plural`, ''));
  else for (const m of dns1035(names.plural)) errs.push(FieldError.invalid(`${at}.plural`, names.plural, m));
  if (names.singular) for (const m of dns1035(names.singular)) errs.push(FieldError.invalid(`${at}.singular`, names.singular, m));
  if (!names.kind) errs.push(FieldError.required(`${at}.kind`, ''));
  else for (const m of dns1035(names.kind.toLowerCase())) errs.push(FieldError.invalid(`${at}.kind`, names.kind, m));
  if (names.listKind) for (const m of dns1035(names.listKind.toLowerCase())) errs.push(FieldError.invalid(`${at}.listKind`, names.listKind, m));
  if (names.kind && names.kind === names.listKind) errs.push(FieldError.invalid(`${at}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.shortNames ?? []).forEach((s, i) => {
    for (const m of dns1035(String(s))) errs.push(FieldError.invalid(`${at}.shortNames[${i}]`, s, m));
  });
  (names.categories ?? []).forEach((c, i) => {
    for (const m of dns1035(String(c))) errs.push(FieldError.invalid(`${at}.categories[${i}]`, c, m));
  });
  return errs;
}

function validateSubresources(v: CustomResourceDefinitionVersion, schema: JSONSchemaProps | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const scale = v.subresources?.scale;
  if (!scale) return errs;
  const check = (field: 'specReplicasPath' | 'statusReplicasPath' | 'labelSelectorPath', prefixes: string[], wantType: string) => {
    const path = scale[field];
    const fp = `${at}.subresources.scale.${field}`;
    if (path === undefined || path === '') {
      if (field !== 'labelSelectorPath') errs.push(FieldError.required(fp, ''));
      return;
    }
    if (!prefixes.some((p) => path.startsWith(p))) return void errs.push(FieldError.invalid(fp, path, `should be a json path under ${prefixes.join(' or ')}`));
    const found = schemaAtPath(schema, path);
    if (typeof found === 'string') {
      // statusReplicasPath and labelSelectorPath may point to fields the schema leaves open.
      if (field === 'specReplicasPath') errs.push(FieldError.invalid(fp, path, found));
    } else if (found.type !== wantType) errs.push(FieldError.invalid(fp, path, `should be a json path to a field of type ${wantType}`));
  };
  check('specReplicasPath', ['.spec.'], 'integer');
  check('statusReplicasPath', ['.status.'], 'integer');
  check('labelSelectorPath', ['.spec.', '.status.'], 'string');
  return errs;
}

function validatePrinterColumns(columns: PrinterColumn[] | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (columns ?? []).forEach((c, i) => {
    const fp = `${at}[${i}]`;
    if (!isJsonObject(c)) return void errs.push(FieldError.invalid(fp, c, 'must be an object'));
    if (!c.name) errs.push(FieldError.required(`${fp}.name`, ''));
    else if (names.has(c.name)) errs.push(FieldError.duplicate(`${fp}.name`, c.name));
    names.add(c.name);
    if (!PRINTER_COLUMN_TYPES.includes(c.type)) errs.push(FieldError.notSupported(`${fp}.type`, c.type ?? '', PRINTER_COLUMN_TYPES));
    if (c.format && !PRINTER_COLUMN_FORMATS.includes(c.format)) errs.push(FieldError.notSupported(`${fp}.format`, c.format, PRINTER_COLUMN_FORMATS));
    if (c.priority !== undefined && (!Number.isInteger(c.priority) || c.priority < 0)) errs.push(FieldError.invalid(`${fp}.priority`, c.priority, 'must be a non-negative integer'));
    if (!c.jsonPath) errs.push(FieldError.required(`${fp}.jsonPath`, ''));
    else {
      try {
        JsonPath.parse(c.jsonPath);
      } catch (e) {
        errs.push(FieldError.invalid(`${fp}.jsonPath`, c.jsonPath, e instanceof JsonPathError ? e.message : String(e)));
      }
    }
  });
  return errs;
}

function validateSelectableFields(fields: { jsonPath: string }[] | undefined, schema: JSONSchemaProps | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!fields) return errs;
  if (fields.length > MAX_SELECTABLE_FIELDS) errs.push(FieldError.tooMany(at, fields.length, MAX_SELECTABLE_FIELDS));
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const fp = `${at}[${i}].jsonPath`;
    if (!f?.jsonPath) return void errs.push(FieldError.required(fp, ''));
    if (seen.has(f.jsonPath)) errs.push(FieldError.duplicate(fp, f.jsonPath));
    seen.add(f.jsonPath);
    const found = schemaAtPath(schema, f.jsonPath);
    if (typeof found === 'string') errs.push(FieldError.invalid(fp, f.jsonPath, found));
    else if (!['string', 'integer', 'boolean'].includes(found.type ?? '')) errs.push(FieldError.invalid(fp, f.jsonPath, 'must point to a field of type string, boolean or integer'));
  });
  return errs;
}

function validateConversion(conversion: CustomResourceConversion | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (!conversion) return errs;
  if (conversion.strategy !== 'None' && conversion.strategy !== 'Webhook') {
    errs.push(FieldError.notSupported('spec.conversion.strategy', conversion.strategy, ['None', 'Webhook']));
    return errs;
  }
  const webhook = conversion.webhook;
  if (conversion.strategy === 'None') {
    if (webhook) errs.push(FieldError.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
    return errs;
  }
  if (!webhook) return [FieldError.required('spec.conversion.webhook', 'required when strategy is set to Webhook')];
  const cfg = webhook.clientConfig;
  if (!cfg) errs.push(FieldError.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
  else errs.push(...validateClientConfig(cfg, 'spec.conversion.webhook.clientConfig'));
  const reviewVersions = webhook.conversionReviewVersions ?? [];
  if (!reviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) {
    errs.push(FieldError.invalid('spec.conversion.webhook.conversionReviewVersions', reviewVersions, 'must include at least one of v1, v1beta1'));
  }
  return errs;
}

/** A webhook's clientConfig: exactly one of url (https, no fragment or query) or service. */
export function validateClientConfig(cfg: WebhookClientConfig, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!!cfg.url === !!cfg.service) return [FieldError.required(at, 'exactly one of url or service is required')];
  if (cfg.url) {
    let u: URL | undefined;
    try {
      u = new URL(cfg.url);
    } catch {
      errs.push(FieldError.invalid(`${at}.url`, cfg.url, 'host must be specified'));
    }
    if (u && u.protocol !== 'https:') errs.push(FieldError.invalid(`${at}.url`, cfg.url, "'https' is the only allowed URL scheme"));
    if (u && (u.hash || cfg.url.includes('#'))) errs.push(FieldError.invalid(`${at}.url`, cfg.url, 'fragments are not permitted in the URL'));
    if (u && u.search) errs.push(FieldError.invalid(`${at}.url`, cfg.url, 'query parameters are not permitted in the URL'));
  }
  if (cfg.service) {
    if (!cfg.service.name) errs.push(FieldError.required(`${at}.service.name`, 'service name is required'));
    if (!cfg.service.namespace) errs.push(FieldError.required(`${at}.service.namespace`, 'service namespace is required'));
    const port = cfg.service.port ?? 443;
    if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(FieldError.invalid(`${at}.service.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (cfg.caBundle !== undefined && !/^[A-Za-z0-9+/=\s]*$/.test(cfg.caBundle)) errs.push(FieldError.invalid(`${at}.caBundle`, '<bytes>', 'must be base64 encoded'));
  return errs;
}

export function crdCondition(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isCrdConditionTrue(crd: CustomResourceDefinition, type: string): boolean {
  return crdCondition(crd, type)?.status === 'True';
}

/**
 * The catalog entries a CRD adds: one per served version, under its accepted names, with the
 * version's schema, subresources, printer columns and the storage version's storage.
 */
export function customResourceDefs(crd: CustomResourceDefinition): ResourceDef[] {
  const spec = crd.spec;
  const names = crd.status?.acceptedNames?.kind ? crd.status.acceptedNames : spec.names;
  const storageVersion = storageVersionOf(crd) ?? spec.versions[0].name;
  const terminating = !!crd.metadata.deletionTimestamp || isCrdConditionTrue(crd, 'Terminating');
  const defs: ResourceDef[] = [];
  for (const v of spec.versions) {
    if (!v.served) continue;
    const subresources: SubresourceDef[] = [];
    if (v.subresources?.status) subresources.push({ name: 'status', kind: names.kind, verbs: ['get', 'patch', 'update'] });
    if (v.subresources?.scale) subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] });
    const custom: CustomResourceInfo = {
      crdName: crd.metadata.name!,
      crdUid: crd.metadata.uid ?? '',
      crdGeneration: crd.metadata.generation ?? 1,
      schema: v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      versions: spec.versions.map((x) => x.name),
      storageVersion,
      conversion: spec.conversion ?? { strategy: 'None' },
      printerColumns: v.additionalPrinterColumns ?? [],
      selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath),
      scale: v.subresources?.scale,
      deprecated: !!v.deprecated,
      deprecationWarning: v.deprecationWarning,
      terminating,
    };
    defs.push({
      group: spec.group,
      version: v.name,
      resource: names.plural,
      kind: names.kind,
      listKind: names.listKind || `${names.kind}List`,
      singular: names.singular || names.kind.toLowerCase(),
      shortNames: names.shortNames ?? [],
      scope: spec.scope,
      verbs: ALL_VERBS,
      subresources,
      categories: names.categories ?? [],
      enabledByDefault: true,
      virtual: false,
      ...(v.name !== storageVersion ? { storage: { group: spec.group, version: storageVersion, resource: names.plural, kind: names.kind } } : {}),
      custom,
    });
  }
  return defs;
}
