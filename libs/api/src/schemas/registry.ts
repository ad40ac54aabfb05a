import type { FieldOpts, PackageData } from './data';
import { GENERATED_PACKAGES } from './generated';
import { isScalar, SCALAR_TYPES, type FieldSchema, type FieldType, type ScalarType, type TypeSchema } from './model';

const META_PKG = 'meta/v1';

interface Registry {
  types: Map<string, TypeSchema>;
  packages: Map<string, PackageData>;
  /** package key → kind → qualified type name */
  kinds: Map<string, Map<string, string>>;
  jsonFields: WeakMap<TypeSchema, ReadonlyMap<string, FieldSchema>>;
}

const TYPE_META_FIELDS: FieldSchema[] = [
  { name: 'apiVersion', type: 'string', proto: 0, omitEmpty: true },
  { name: 'kind', type: 'string', proto: 0, omitEmpty: true },
];

function goPackage(key: string): string {
  return key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
}

function qualified(packages: Map<string, PackageData>, from: PackageData, ref: string): { pkg: PackageData; name: string } {
  const colon = ref.indexOf(':');
  if (colon < 0) return { pkg: from, name: ref };
  const pkg = packages.get(ref.slice(0, colon));
  if (!pkg) throw new Error(`schema data: unknown package in ${ref} (from ${from.key})`);
  return { pkg, name: ref.slice(colon + 1) };
}

function parseType(packages: Map<string, PackageData>, from: PackageData, expr: string): FieldType {
  if (expr.startsWith('[]')) return { array: parseType(packages, from, expr.slice(2)) };
  if (expr.startsWith('{}')) return { map: parseType(packages, from, expr.slice(2)) };
  if ((SCALAR_TYPES as readonly string[]).includes(expr)) return expr as ScalarType;
  const { pkg, name } = qualified(packages, from, expr);
  return { ref: `${pkg.name}.${name}` };
}

function buildField(packages: Map<string, PackageData>, from: PackageData, name: string, expr: string, proto: number, o: FieldOpts = {}): FieldSchema {
  const field: { -readonly [K in keyof FieldSchema]: FieldSchema[K] } = { name, type: parseType(packages, from, expr), proto };
  if (o.required) field.required = true;
  if (o.inline) field.inline = true;
  if (o.e) {
    const { pkg, name: enumName } = qualified(packages, from, o.e);
    const values = pkg.enums[enumName];
    if (!values) throw new Error(`schema data: unknown enum ${o.e} (from ${from.key})`);
    field.enum = values;
  }
  if (o.lt) field.listType = o.lt;
  if (o.lk) field.listMapKeys = o.lk;
  if (o.ps) field.patchStrategy = o.ps;
  if (o.mk) field.patchMergeKey = o.mk;
  if (o.mt) field.mapType = o.mt;
  if (o.st) field.structType = o.st;
  if (o.d !== undefined) field.default = o.d;
  if (o.ptr) field.pointer = true;
  if (o.oe) field.omitEmpty = true;
  return field;
}

function build(): Registry {
  const packages = new Map(GENERATED_PACKAGES.map((p) => [p.key, p]));
  const types = new Map<string, TypeSchema>();
  const kinds = new Map<string, Map<string, string>>();
  for (const pkg of packages.values()) {
    const pkgKinds = new Map<string, string>();
    kinds.set(pkg.key, pkgKinds);
    for (const [typeName, fieldTuples, opts = {}] of pkg.types) {
      const name = `${pkg.name}.${typeName}`;
      const fields = fieldTuples.map(([n, expr, proto, o]) => buildField(packages, pkg, n, expr, proto, o));
      const schema: { -readonly [K in keyof TypeSchema]: TypeSchema[K] } = {
        name,
        pkg: pkg.key,
        goPkg: goPackage(pkg.key),
        fields: opts.tm ? [...TYPE_META_FIELDS, ...fields] : fields,
      };
      if (opts.st) schema.structType = opts.st;
      if (opts.tm || opts.k) {
        schema.kind = true;
        pkgKinds.set(typeName, name);
      }
      if (opts.scalar) schema.scalar = opts.scalar;
      if (opts.union) schema.union = true;
      if (opts.items) schema.items = parseType(packages, pkg, opts.items);
      types.set(name, schema);
    }
  }
  const registry: Registry = { types, packages, kinds, jsonFields: new WeakMap() };
  for (const t of types.values()) {
    for (const f of t.fields) assertResolved(registry, f.type, `${t.name}.${f.name}`);
  }
  return registry;
}

function assertResolved(reg: Registry, t: FieldType, where: string): void {
  if (isScalar(t)) return;
  if ('array' in t) return assertResolved(reg, t.array, where);
  if ('map' in t) return assertResolved(reg, t.map, where);
  if (!reg.types.has(t.ref)) throw new Error(`schema data: ${where} references unknown type ${t.ref}`);
}

let registry: Registry | undefined;

function reg(): Registry {
  registry ??= build();
  return registry;
}

/** The named type, or undefined. */
export function typeSchema(name: string): TypeSchema | undefined {
  return reg().types.get(name);
}

/** Every named type of the built-in API. */
export function allTypeSchemas(): TypeSchema[] {
  return [...reg().types.values()];
}

/** Package key of an API group/version: `''`/`v1` → `core/v1`, `rbac.authorization.orch.io`/`v1` → `rbac/v1`. */
export function packageKey(group: string, version: string): string {
  return `${group ? group.split('.')[0] : 'core'}/${version}`;
}

function synthesizedList(r: Registry, pkgKey: string, itemType: string, listKind: string): TypeSchema {
  const pkg = r.packages.get(pkgKey)!;
  const name = `${pkg.name}.${listKind}`;
  const existing = r.types.get(name);
  if (existing) return existing;
  const meta = r.packages.get(META_PKG)!;
  const list: TypeSchema = {
    name,
    pkg: pkgKey,
    goPkg: goPackage(pkgKey),
    kind: true,
    fields: [
      ...TYPE_META_FIELDS,
      { name: 'metadata', type: { ref: `${meta.name}.ListMeta` }, proto: 1 },
      { name: 'items', type: { array: { ref: itemType } }, proto: 2, required: true },
    ],
  };
  r.types.set(name, list);
  return list;
}

/**
 * Root schema of a kind. Kinds of meta/v1 (Status, DeleteOptions, Table, WatchEvent, ...)
 * resolve in every group/version; a `<Kind>List` without an upstream type is synthesized as
 * `{metadata: ListMeta, items: [Kind]}`.
 */
export function schemaForKind(group: string, version: string, kind: string): TypeSchema | undefined {
  const r = reg();
  const pkgKey = packageKey(group, version);
  const own = r.kinds.get(pkgKey)?.get(kind);
  if (own) return r.types.get(own);
  const meta = r.kinds.get(META_PKG)!.get(kind);
  if (meta) return r.types.get(meta);
  if (kind.endsWith('List')) {
    const item = r.kinds.get(pkgKey)?.get(kind.slice(0, -'List'.length));
    if (item) return synthesizedList(r, pkgKey, item, kind);
  }
  return undefined;
}

/** Fields of a struct by JSON name, with inline (embedded) structs flattened. */
export function jsonFields(type: TypeSchema): ReadonlyMap<string, FieldSchema> {
  const r = reg();
  let map = r.jsonFields.get(type);
  if (!map) {
    const m = new Map<string, FieldSchema>();
    for (const f of type.fields) {
      if (f.inline && !isScalar(f.type) && 'ref' in f.type) {
        const embedded = r.types.get(f.type.ref)!;
        for (const [k, v] of jsonFields(embedded)) m.set(k, v);
      } else m.set(f.name, f);
    }
    map = m;
    r.jsonFields.set(type, map);
  }
  return map;
}

/** Named types embedded inline in `type`, recursively (Volume → VolumeSource). */
export function inlineTypes(type: TypeSchema): TypeSchema[] {
  const out: TypeSchema[] = [];
  for (const f of type.fields) {
    if (f.inline && !isScalar(f.type) && 'ref' in f.type) {
      const embedded = reg().types.get(f.type.ref)!;
      out.push(embedded, ...inlineTypes(embedded));
    }
  }
  return out;
}

/** Go spelling of a type, as in upstream decode errors: `int32`, `[]v1.Container`, `map[string]string`. */
export function goTypeName(t: FieldType): string {
  if (isScalar(t)) {
    const names: Record<ScalarType, string> = {
      string: 'string',
      boolean: 'bool',
      int32: 'int32',
      int64: 'int64',
      double: 'float64',
      bytes: '[]uint8',
      time: 'v1.Time',
      microtime: 'v1.MicroTime',
      duration: 'v1.Duration',
      quantity: 'resource.Quantity',
      'int-or-string': 'intstr.IntOrString',
      raw: 'runtime.RawExtension',
    };
    return names[t];
  }
  if ('array' in t) return `[]${goTypeName(t.array)}`;
  if ('map' in t) return `map[string]${goTypeName(t.map)}`;
  const named = reg().types.get(t.ref);
  const short = t.ref.slice(t.ref.lastIndexOf('.') + 1);
  return named ? `${named.goPkg}.${short}` : short;
}
