import { BUILTIN_RESOURCES, canonicalGroup, hasProtobufSchema, schemaForKind, typeSchema, type GroupVersionKind, type JSONSchemaProps, type ResourceDef, type TypeSchema, type Verb } from '@orch/api';
import { VERSION_INFO } from '../discovery/discovery';
import { definition, reachableTypes, ref, type SchemaObject } from './schemas';

// One OpenAPI v3 document per served group/version (upstream /openapi/v3/<prefix>/<gv>):
// collection, item, all-namespaces, watch and subresource paths with operations as each
// resource's verbs allow, and the schemas of every type they reach.

const META = 'io.orch.apimachinery.pkg.apis.meta.v1';
const STATUS = `${META}.Status`;
const DELETE_OPTIONS = `${META}.DeleteOptions`;
const WATCH_EVENT = `${META}.WatchEvent`;
const PATCH = `${META}.Patch`;
const API_RESOURCE_LIST = `${META}.APIResourceList`;
const OBJECT_META = `${META}.ObjectMeta`;
const LIST_META = `${META}.ListMeta`;

const PATCH_CONTENT_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

type Operation = Record<string, unknown>;
type PathItem = Record<string, unknown>;

function param(name: string, where: 'query' | 'path', type: 'string' | 'boolean' | 'integer', required = false): SchemaObject {
  const p: SchemaObject = { name, in: where, schema: { type, uniqueItems: true } };
  if (required) p.required = true;
  return p;
}

const NAME = param('name', 'path', 'string', true);
const NAMESPACE = param('namespace', 'path', 'string', true);
const PRETTY = param('pretty', 'query', 'string');
const DRY_RUN = param('dryRun', 'query', 'string');
const FIELD_MANAGER = param('fieldManager', 'query', 'string');
const FIELD_VALIDATION = param('fieldValidation', 'query', 'string');
const FORCE = param('force', 'query', 'boolean');
const LIST_PARAMS = [
  param('allowWatchBookmarks', 'query', 'boolean'),
  param('continue', 'query', 'string'),
  param('fieldSelector', 'query', 'string'),
  param('labelSelector', 'query', 'string'),
  param('limit', 'query', 'integer'),
  param('resourceVersion', 'query', 'string'),
  param('resourceVersionMatch', 'query', 'string'),
  param('sendInitialEvents', 'query', 'boolean'),
  param('timeoutSeconds', 'query', 'integer'),
  param('watch', 'query', 'boolean'),
];
const DELETE_PARAMS = [
  DRY_RUN,
  param('gracePeriodSeconds', 'query', 'integer'),
  param('ignoreStoreReadErrorWithClusterBreakingPotential', 'query', 'boolean'),
  param('orphanDependents', 'query', 'boolean'),
  param('propagationPolicy', 'query', 'string'),
];
const WRITE_PARAMS = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];

/** A kind of the document: its schema name (a custom resource gets a permissive one) and GVK. */
interface KindInfo {
  gvk: GroupVersionKind;
  schemaName: string;
  /** Set when the kind has no built-in schema (custom resources). */
  custom?: SchemaObject;
  protobuf: boolean;
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** `rbac.authorization.orch.io` (or `.k8s.io`) → `RbacAuthorization`, core → `Core` (upstream operation ids). */
function groupIdent(group: string): string {
  return group === '' ? 'Core' : pascal(group.replace(/\.(orch|k8s)\.io$/, ''));
}

/** Groups of built-in kinds (resources and subresources); other groups are custom resources. */
const BUILTIN_GROUPS = new Set(BUILTIN_RESOURCES.flatMap((r) => [r.group, ...r.subresources.map((s) => s.group ?? r.group)]));

const TYPE_META_PROPERTIES = {
  apiVersion: {
    type: 'string',
    description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
  },
  kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.' },
};

/** A custom resource's published schema: its CRD version's schema with the type and object metadata fields (upstream apiextensions builder). */
function customResourceSchema(schema: JSONSchemaProps): SchemaObject {
  const { properties, ...rest } = schema as JSONSchemaProps & SchemaObject;
  return { ...rest, type: 'object', properties: { ...TYPE_META_PROPERTIES, metadata: ref(OBJECT_META), ...(properties ?? {}) } };
}

/**
 * A kind as published under `group` (an `*.k8s.io` name finds the schema of its `*.orch.io`
 * group): built-in kinds by their schema name; custom resources by their CRD's schema (`def`
 * names them), or a permissive schema for the list of one.
 */
function kindInfo(group: string, version: string, kind: string, def?: ResourceDef): KindInfo {
  const gvk = { group, version, kind };
  const served = canonicalGroup(group);
  const schema = BUILTIN_GROUPS.has(served) && !def?.custom ? schemaForKind(served, version, kind) : undefined;
  if (schema) return { gvk, schemaName: schema.name, protobuf: hasProtobufSchema(group, version, kind) };
  const reversed = group.split('.').reverse().join('.');
  const schemaName = `${reversed}.${version}.${kind}`;
  if (def?.custom && kind === def.kind) return { gvk, schemaName, custom: customResourceSchema(def.custom.schema), protobuf: false };
  if (def?.custom && kind === def.listKind) {
    const items = { type: 'array', items: ref(`${reversed}.${version}.${def.kind}`) };
    return { gvk, schemaName, custom: { type: 'object', required: ['items'], properties: { ...TYPE_META_PROPERTIES, items, metadata: ref(LIST_META) } }, protobuf: false };
  }
  const isList = kind.endsWith('List');
  const properties: SchemaObject = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: ref(isList ? LIST_META : OBJECT_META),
  };
  const custom: SchemaObject = { type: 'object', properties, 'x-kubernetes-preserve-unknown-fields': true };
  return { gvk, schemaName, custom, protobuf: false };
}

function content(schemaName: string, protobuf: boolean, watch = false): SchemaObject {
  const schema = ref(schemaName);
  const types = watch ? ['application/json', 'application/json;stream=watch'] : ['application/json', 'application/yaml'];
  if (protobuf) types.push(watch ? 'application/vnd.orch.protobuf;stream=watch' : 'application/vnd.orch.protobuf');
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

function responses(codes: Record<string, { schema: string; protobuf: boolean; watch?: boolean }>): SchemaObject {
  const out: SchemaObject = {};
  for (const [code, r] of Object.entries(codes)) out[code] = { description: code === '201' ? 'Created' : code === '202' ? 'Accepted' : 'OK', content: content(r.schema, r.protobuf, r.watch) };
  out['401'] = { description: 'Unauthorized' };
  return out;
}

/**
 * Builds the document of one group/version from its served resources, published under `group`
 * (the resources' own group, or its `*.k8s.io` name: paths and group-version-kinds then say it).
 */
export class GroupVersionDocument {
  private readonly paths: Record<string, PathItem> = {};
  private readonly kinds = new Map<string, KindInfo>();
  private readonly prefix: string;
  private readonly tag: string;
  private readonly ident: string;

  constructor(
    private readonly group: string,
    private readonly version: string,
    private readonly resources: readonly ResourceDef[],
  ) {
    this.prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    this.ident = `${groupIdent(group)}${pascal(version)}`;
    this.tag = `${groupIdent(group)[0].toLowerCase()}${groupIdent(group).slice(1)}_${version}`;
  }

  build(): SchemaObject {
    this.paths[`${this.prefix}/`] = {
      get: {
        tags: [this.tag],
        description: 'get available resources',
        operationId: `get${this.ident}APIResources`,
        responses: responses({ '200': { schema: API_RESOURCE_LIST, protobuf: true } }),
      },
    };
    for (const r of this.resources) this.resource(r);
    return {
      openapi: '3.0.0',
      info: { title: 'Orch', version: VERSION_INFO.gitVersion.replace(/-orch$/, '') },
      paths: this.paths,
      components: {
        schemas: this.schemas(),
        securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' } },
      },
      security: [{ BearerToken: [] }],
    };
  }

  private kind(group: string, version: string, kind: string, def?: ResourceDef): KindInfo {
    const key = `${group}/${version}/${kind}`;
    let info = this.kinds.get(key);
    if (!info) {
      info = kindInfo(group, version, kind, def);
      this.kinds.set(key, info);
    }
    return info;
  }

  private op(action: string, id: string, kind: KindInfo, description: string, extra: Operation): Operation {
    return {
      tags: [this.tag],
      description,
      operationId: id,
      ...extra,
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': { group: kind.gvk.group, version: kind.gvk.version, kind: kind.gvk.kind },
    };
  }

  /** Adds an operation; the path item's parameters are `pathParams` and `pretty`. */
  private add(path: string, method: string, operation: Operation, pathParams: readonly SchemaObject[]): void {
    const item = (this.paths[path] ??= { parameters: [...pathParams, PRETTY] });
    item[method] = operation;
  }

  private resource(r: ResourceDef): void {
    const obj = this.kind(this.group, r.version, r.kind, r);
    const list = this.kind(this.group, r.version, r.listKind, r);
    const ns = r.scope === 'Namespaced';
    const scoped = ns ? 'Namespaced' : '';
    const k = r.kind;
    const has = (v: Verb) => r.verbs.includes(v);
    const collection = ns ? `${this.prefix}/namespaces/{namespace}/${r.resource}` : `${this.prefix}/${r.resource}`;
    const item = `${collection}/{name}`;
    const collParams = ns ? [NAMESPACE] : [];
    const itemParams = ns ? [NAME, NAMESPACE] : [NAME];
    const body = (schemaName: string) => ({ content: { '*/*': { schema: ref(schemaName) } }, required: true });
    const objResp = (...codes: string[]) => responses(Object.fromEntries(codes.map((c) => [c, { schema: obj.schemaName, protobuf: obj.protobuf }])));
    const statusResp = (...codes: string[]) => responses(Object.fromEntries(codes.map((c) => [c, { schema: STATUS, protobuf: true }])));

    if (has('list')) {
      this.add(collection, 'get', this.op('list', `list${this.ident}${scoped}${k}`, obj, `list or watch objects of kind ${k}`, { parameters: LIST_PARAMS, responses: responses({ '200': { schema: list.schemaName, protobuf: list.protobuf } }) }), collParams);
      if (ns) {
        this.add(`${this.prefix}/${r.resource}`, 'get', this.op('list', `list${this.ident}${k}ForAllNamespaces`, obj, `list or watch objects of kind ${k}`, { responses: responses({ '200': { schema: list.schemaName, protobuf: list.protobuf } }) }), LIST_PARAMS);
      }
    }
    if (has('create')) {
      this.add(collection, 'post', this.op('post', `create${this.ident}${scoped}${k}`, obj, `create a ${k}`, { parameters: WRITE_PARAMS, requestBody: body(obj.schemaName), responses: objResp('200', '201', '202') }), collParams);
    }
    if (has('deletecollection')) {
      this.add(collection, 'delete', this.op('deletecollection', `deleteCollection${this.ident}${scoped}${k}`, obj, `delete collection of ${k}`, { parameters: [...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks'), ...DELETE_PARAMS], requestBody: { content: { '*/*': { schema: ref(DELETE_OPTIONS) } } }, responses: statusResp('200') }), collParams);
    }
    if (has('get')) this.add(item, 'get', this.op('get', `read${this.ident}${scoped}${k}`, obj, `read the specified ${k}`, { responses: objResp('200') }), itemParams);
    if (has('update')) this.add(item, 'put', this.op('put', `replace${this.ident}${scoped}${k}`, obj, `replace the specified ${k}`, { parameters: WRITE_PARAMS, requestBody: body(obj.schemaName), responses: objResp('200', '201') }), itemParams);
    if (has('patch')) this.add(item, 'patch', this.patchOp(`patch${this.ident}${scoped}${k}`, obj, k), itemParams);
    if (has('delete')) {
      this.add(item, 'delete', this.op('delete', `delete${this.ident}${scoped}${k}`, obj, `delete a ${k}`, { parameters: DELETE_PARAMS, requestBody: { content: { '*/*': { schema: ref(DELETE_OPTIONS) } } }, responses: statusResp('200', '202') }), itemParams);
    }
    if (has('watch')) this.watchPaths(r, obj, ns);
    for (const s of r.subresources) this.subresource(r, s.name, this.kind(s.group === undefined || s.group === r.group ? this.group : s.group, s.version ?? r.version, s.kind, s.group === undefined ? r : undefined), s.verbs, item, itemParams, scoped);
  }

  private patchOp(id: string, kind: KindInfo, k: string): Operation {
    return this.op('patch', id, kind, `partially update the specified ${k}`, {
      parameters: [...WRITE_PARAMS, FORCE],
      requestBody: { content: Object.fromEntries(PATCH_CONTENT_TYPES.map((t) => [t, { schema: ref(PATCH) }])), required: true },
      responses: responses({ '200': { schema: kind.schemaName, protobuf: kind.protobuf }, '201': { schema: kind.schemaName, protobuf: kind.protobuf } }),
    });
  }

  private watchPaths(r: ResourceDef, obj: KindInfo, ns: boolean): void {
    const k = r.kind;
    const watch = (path: string, action: string, id: string, params: SchemaObject[]) => {
      this.add(path, 'get', this.op(action, id, obj, `watch changes to ${k} objects (deprecated: use the watch parameter of a list)`, { responses: responses({ '200': { schema: WATCH_EVENT, protobuf: true, watch: true } }) }), [...params, ...LIST_PARAMS]);
    };
    const scoped = ns ? 'Namespaced' : '';
    const base = ns ? `${this.prefix}/watch/namespaces/{namespace}/${r.resource}` : `${this.prefix}/watch/${r.resource}`;
    watch(base, 'watchlist', `watch${this.ident}${scoped}${k}List`, ns ? [NAMESPACE] : []);
    watch(`${base}/{name}`, 'watch', `watch${this.ident}${scoped}${k}`, ns ? [NAME, NAMESPACE] : [NAME]);
    if (ns) watch(`${this.prefix}/watch/${r.resource}`, 'watchlist', `watch${this.ident}${k}ListForAllNamespaces`, []);
  }

  private subresource(r: ResourceDef, name: string, kind: KindInfo, verbs: readonly Verb[], item: string, itemParams: SchemaObject[], scoped: string): void {
    const path = `${item}/${name}`;
    const id = (verb: string) => `${verb}${this.ident}${scoped}${r.kind}${pascal(name)}`;
    const objResp = (...codes: string[]) => responses(Object.fromEntries(codes.map((c) => [c, { schema: kind.schemaName, protobuf: kind.protobuf }])));
    const body = { content: { '*/*': { schema: ref(kind.schemaName) } }, required: true };
    if (['proxy', 'exec', 'attach', 'portforward'].includes(name)) {
      const methods: Record<Verb, string> = { get: 'get', create: 'post', update: 'put', patch: 'patch', delete: 'delete', list: '', watch: '', deletecollection: '', proxy: '' };
      for (const v of verbs) {
        if (!methods[v]) continue;
        this.add(path, methods[v], this.op('connect', `connect${pascal(methods[v])}${this.ident}${scoped}${r.kind}${pascal(name)}`, kind, `connect ${methods[v].toUpperCase()} requests to ${name} of ${r.kind}`, { responses: { '200': { description: 'OK', content: { '*/*': { schema: { type: 'string' } } } }, '401': { description: 'Unauthorized' } } }), itemParams);
      }
      return;
    }
    if (verbs.includes('get')) this.add(path, 'get', this.op('get', id('read'), kind, `read ${name} of the specified ${r.kind}`, { responses: objResp('200') }), itemParams);
    if (verbs.includes('update')) this.add(path, 'put', this.op('put', id('replace'), kind, `replace ${name} of the specified ${r.kind}`, { parameters: WRITE_PARAMS, requestBody: body, responses: objResp('200', '201') }), itemParams);
    if (verbs.includes('patch')) this.add(path, 'patch', this.patchOp(id('patch'), kind, `${name} of ${r.kind}`), itemParams);
    if (verbs.includes('create')) this.add(path, 'post', this.op('post', id('create'), kind, `create ${name} of a ${r.kind}`, { parameters: WRITE_PARAMS, requestBody: body, responses: objResp('200', '201', '202') }), itemParams);
  }

  /** components.schemas: every type reachable from the document's kinds and the meta types of its operations. */
  private schemas(): Record<string, SchemaObject> {
    const gvks = new Map<string, GroupVersionKind[]>();
    const roots: TypeSchema[] = [STATUS, DELETE_OPTIONS, WATCH_EVENT, API_RESOURCE_LIST].map((n) => typeSchema(n)!);
    const custom: Record<string, SchemaObject> = {};
    for (const info of this.kinds.values()) {
      if (info.custom) {
        custom[info.schemaName] = { ...info.custom, 'x-kubernetes-group-version-kind': [{ group: info.gvk.group, kind: info.gvk.kind, version: info.gvk.version }] };
        roots.push(typeSchema(OBJECT_META)!, typeSchema(LIST_META)!);
        continue;
      }
      const list = gvks.get(info.schemaName) ?? [];
      list.push(info.gvk);
      gvks.set(info.schemaName, list);
      roots.push(typeSchema(info.schemaName)!);
    }
    const out: Record<string, SchemaObject> = {};
    for (const t of reachableTypes(roots).sort((a, b) => a.name.localeCompare(b.name))) out[t.name] = definition(t, gvks.get(t.name));
    out[PATCH] = { type: 'object' };
    return { ...out, ...custom };
  }
}
