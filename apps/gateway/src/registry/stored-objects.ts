import type { ResourceDef } from '@orch/api';
import { ConversionError, applyDefaults, groupVersionString, omitEmptyFields, schemaForKind } from '@orch/api';
import { StatusError, parseFieldSelector, parseLabelSelector, type FieldSelector, type KubeObject, type LabelSelector, type QualifiedResource } from '@orch/apimachinery';
import type { KeyValue } from '@orch/storage';
import type { ResolvedKind } from './kinds/binding';
import { builtinConverter, type ObjectConverter } from './store-types';

/**
 * The objects of one resource as stored and as served: their keys, the stored form (encode:
 * storage version, resourceVersion left out) and the served one (decode: this resource's
 * version, normalized by the strategy), conversions, schema defaults, type checks of bodies,
 * and field and label selection. Shared by the generic store's reads, writes and watches.
 */
export class StoredObjects {
  readonly qr: QualifiedResource;
  readonly namespaced: boolean;
  readonly keyPrefix: string;
  readonly apiVersion: string;
  /** apiVersion of the stored form (differs from apiVersion when the resource shares another's storage). */
  readonly storageApiVersion: string;
  private readonly hasSchema: boolean;
  /** How a stored value in this resource's own version begins (see encode). */
  private readonly apiVersionHead: string;
  private fieldNames?: Set<string>;

  constructor(
    readonly def: ResourceDef,
    readonly kind: ResolvedKind,
    /** Conversions between this resource's version and its storage (and other stored) versions. */
    private readonly converter: ObjectConverter = builtinConverter,
  ) {
    this.qr = { group: def.group, resource: def.resource };
    this.namespaced = def.scope === 'Namespaced';
    // A resource stored as another (def.storage) shares its keys: one object, two views.
    const storage = def.storage ?? def;
    this.keyPrefix = `/registry/${storage.group || 'core'}/${storage.resource}/`;
    this.apiVersion = groupVersionString(def);
    this.storageApiVersion = groupVersionString(storage);
    this.hasSchema = !!schemaForKind(def.group, def.version, def.kind);
    this.apiVersionHead = `{"apiVersion":${JSON.stringify(this.apiVersion)},`;
  }

  key(namespace: string, name: string): string {
    return this.namespaced ? `${this.keyPrefix}${namespace}/${name}` : `${this.keyPrefix}${name}`;
  }

  prefix(namespace: string): string {
    return this.namespaced && namespace ? `${this.keyPrefix}${namespace}/` : this.keyPrefix;
  }


  /** Whether stored values read as they are (no conversion, no read-time normalization): the list fast paths. */
  readsVerbatim(values: readonly { value: string }[]): boolean {
    return !this.kind.strategy.onRead && values.every((kv) => kv.value.startsWith(this.apiVersionHead));
  }


  /** A stored text as this resource serves it at `revision`, when the storage version is the served one (else undefined). */
  servedJson(stored: string, revision: number): string | undefined {
    return this.storageApiVersion === this.apiVersion ? injectResourceVersion(stored, revision) : undefined;
  }

  /** Schema defaults of built-in kinds (SPEC Versioning defaults); custom kinds have none here. */
  applyDefaults(obj: KubeObject, operation: 'create' | 'update'): void {
    if (this.hasSchema) applyDefaults(obj, this.def.group, this.def.version, this.def.kind, { operation });
  }

  /**
   * Built-in kinds are stored as Go's JSON encoding would write them: without the empty values
   * of `omitempty` fields, whatever the request's format spelled out (protobuf bodies carry
   * `stdin: false`); so equal objects compare equal (a rollout undo finds its ReplicaSet).
   */
  omitEmptyFields(obj: KubeObject): void {
    if (this.hasSchema) omitEmptyFields(obj as unknown as Record<string, unknown>, this.def.group, this.def.version, this.def.kind);
  }

  /** Fields a field selector may use on this resource. */
  fieldAttributes(obj: KubeObject): Record<string, string> {
    const attrs: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
    if (this.namespaced) attrs['metadata.namespace'] = obj.metadata.namespace ?? '';
    return this.kind.fieldAttributes ? { ...attrs, ...this.kind.fieldAttributes(obj) } : attrs;
  }

  parseFields(selector: string | undefined): FieldSelector {
    const fields = parseFieldSelector(selector ?? '');
    fields.checkSupported(this.allowedFieldNames());
    return fields;
  }

  /** The field names a selector may use (computed once). */
  private allowedFieldNames(): Set<string> {
    const probe = { apiVersion: this.apiVersion, kind: this.def.kind, metadata: {} } as KubeObject;
    return (this.fieldNames ??= new Set(Object.keys(this.fieldAttributes(probe))));
  }

  matches(obj: KubeObject, labels: LabelSelector, fields: FieldSelector): boolean {
    return labels.matches(obj.metadata.labels ?? {}) && (fields.empty() || fields.matches(this.fieldAttributes(obj)));
  }

  checkTypeMeta(obj: KubeObject): void {
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw StatusError.badRequest('the body of the request must be an object');
    if (obj.metadata === undefined || obj.metadata === null) (obj as { metadata: object }).metadata = {};
    if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
      throw StatusError.badRequest(`json: cannot unmarshal ${Array.isArray(obj.metadata) ? 'array' : typeof obj.metadata} into Go struct field ${this.def.kind}.metadata of type v1.ObjectMeta`);
    }
    if (obj.kind !== undefined && obj.kind !== this.def.kind) {
      throw StatusError.badRequest(`the kind of the object (${obj.kind}) does not match the kind of the resource (${this.def.kind})`);
    }
    obj.kind = this.def.kind;
    obj.apiVersion = this.apiVersion;
  }

  checkNamespace(meta: KubeObject['metadata'], namespace: string): void {
    if (!this.namespaced) return;
    if (meta.namespace && meta.namespace !== namespace) {
      throw StatusError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  }

  /**
   * `object` (of this resource, or of one stored as the same objects) in `toApiVersion`, a
   * version of this resource's storage family: for admission hooks that match another version
   * (matchPolicy Equivalent). The input is not modified. A conversion that does not exist is a
   * 500, as upstream's "unable to convert".
   */
  async convertTo(object: KubeObject, toApiVersion: string): Promise<KubeObject> {
    if (object.apiVersion === toApiVersion) return object;
    let out: KubeObject;
    try {
      [out] = await this.converter.convert([structuredClone(object)], toApiVersion);
    } catch (err) {
      if (err instanceof ConversionError) throw StatusError.internal(err.message);
      throw err;
    }
    if (toApiVersion === this.apiVersion) this.kind.strategy.afterConversion?.(out);
    return out;
  }

  async decode(kv: KeyValue): Promise<KubeObject> {
    return (await this.decodeAll([kv]))[0];
  }

  /**
   * A stored object as this resource serves it, without waiting: for in-gateway caches of
   * built-in resources. Throws when the object needs a conversion that calls out (a webhook).
   */
  decodeSync(kv: KeyValue): KubeObject {
    let obj = this.parse(kv.value, kv.modRevision);
    if (obj.apiVersion !== this.apiVersion) {
      if (!this.converter.convertSync) throw new Error(`${obj.apiVersion} ${obj.kind} needs an asynchronous conversion to ${this.apiVersion}`);
      obj = this.converter.convertSync(obj, this.apiVersion);
      this.kind.strategy.afterConversion?.(obj);
    }
    this.kind.strategy.onRead?.(obj);
    return obj;
  }

  /** Stored objects as this resource serves them: in its version, normalized by the strategy (onRead). */
  async decodeAll(kvs: readonly KeyValue[]): Promise<KubeObject[]> {
    return this.served(kvs.map((kv) => this.parse(kv.value, kv.modRevision)));
  }

  /** A stored value parsed, with its resourceVersion (still in the version it was stored in). */
  parse(value: string, revision: number): KubeObject {
    const obj = JSON.parse(value) as KubeObject;
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }

  /** Objects converted to this resource's version (where they are in another) and normalized (afterConversion, onRead). */
  async served(objs: KubeObject[]): Promise<KubeObject[]> {
    let out = objs;
    if (!objs.every((o) => o.apiVersion === this.apiVersion)) {
      out = await this.converter.convert(objs, this.apiVersion);
      if (this.kind.strategy.afterConversion) out.forEach((o, i) => objs[i].apiVersion !== this.apiVersion && this.kind.strategy.afterConversion!(o));
    }
    if (this.kind.strategy.onRead) for (const o of out) this.kind.strategy.onRead(o);
    return out;
  }

  /**
   * Stored form, in the storage version: apiVersion, kind and metadata first (so GETs and lists
   * write JSON from the stored text, resourceVersion spliced in without parsing), resourceVersion
   * left out (it is the store revision). An object that cannot be converted to the storage version is a 400.
   */
  async encode(input: KubeObject): Promise<string> {
    let obj = input;
    try {
      if (input.apiVersion !== this.storageApiVersion) obj = (await this.converter.convert([input], this.storageApiVersion))[0];
    } catch (err) {
      if (err instanceof ConversionError) throw StatusError.badRequest(err.message);
      throw err;
    }
    return storedJson(obj);
  }

  /** The written object as readers will see it (through the storage version when it differs), at `revision`. */
  async withRevision(written: KubeObject, revision: number): Promise<KubeObject> {
    let obj = written;
    if (this.storageApiVersion !== this.apiVersion) {
      const [stored] = await this.converter.convert([written], this.storageApiVersion);
      [obj] = await this.converter.convert([stored], this.apiVersion);
    }
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }
}

/**
 * The stored text of an object already in the storage version: apiVersion, kind and metadata
 * first, metadata without resourceVersion. Most objects (decoded bodies) are in that order
 * already and are written as they are, without copies.
 */
export function storedJson(obj: KubeObject): string {
  if (inStoredOrder(obj)) return JSON.stringify(obj);
  const { apiVersion, kind, metadata, ...rest } = obj;
  const { resourceVersion: _rv, ...meta } = metadata;
  return JSON.stringify({ apiVersion, kind, metadata: meta, ...rest });
}

const STORED_HEAD = ['apiVersion', 'kind', 'metadata'];

/** Whether an object's first members are apiVersion, kind and metadata, in that order, and its metadata has no resourceVersion: its JSON is then its stored form. */
function inStoredOrder(obj: KubeObject): boolean {
  if (obj.metadata.resourceVersion !== undefined) return false;
  let i = 0;
  for (const key in obj) {
    if (key !== STORED_HEAD[i]) return false;
    if (++i === STORED_HEAD.length) return true;
  }
  return false;
}

export function parseLabels(selector: string | undefined): LabelSelector {
  return parseLabelSelector(selector ?? '');
}

const METADATA_HEAD = '"metadata":{';

/**
 * Splices `"resourceVersion":"<rev>"` into a stored object's metadata. Stored objects begin
 * with apiVersion and kind (validated strings) and then metadata, so the first `"metadata":{`
 * is the top-level one. Undefined when the value does not have that shape.
 */
export function injectResourceVersion(json: string, revision: number): string | undefined {
  if (!json.startsWith('{"apiVersion":"')) return undefined;
  const at = json.indexOf(METADATA_HEAD);
  if (at < 0 || at > 512) return undefined;
  const insertAt = at + METADATA_HEAD.length;
  const rv = `"resourceVersion":"${revision}"`;
  return json.charCodeAt(insertAt) === 125 /* } */ ? `${json.slice(0, insertAt)}${rv}${json.slice(insertAt)}` : `${json.slice(0, insertAt)}${rv},${json.slice(insertAt)}`;
}

