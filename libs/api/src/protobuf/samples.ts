import type { KubeObject } from '@orch/apimachinery';
import { BUILTIN_RESOURCES } from '../catalog-data';
import { groupVersionString } from '../catalog';
import { isScalar, shortTypeName, type FieldSchema, type FieldType, type ScalarType, type TypeSchema } from '../schemas/model';
import { allTypeSchemas, jsonFields, packageKey, schemaForKind, typeSchema } from '../schemas/registry';
import { hasProtobuf } from './compile';

// Test fixtures for the protobuf codec (not exported from the library): one sample object
// per built-in kind with every field set, recursive types cut at the second level.

export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** Every kind with a protobuf form: catalog kinds and their lists, subresource kinds, other kinds of served packages, meta kinds. */
export function protobufKinds(): KindRef[] {
  const out = new Map<string, KindRef>();
  const add = (apiVersion: string, kind: string) => {
    const { group, version } = splitApiVersion(apiVersion);
    const schema = schemaForKind(group, version, kind);
    if (schema && hasProtobuf(schema)) out.set(`${apiVersion}/${kind}`, { apiVersion, kind });
  };
  const packages = new Map<string, string>([['meta/v1', 'v1']]);
  for (const r of BUILTIN_RESOURCES) {
    const gv = groupVersionString(r);
    packages.set(packageKey(r.group, r.version), gv);
    add(gv, r.kind);
    add(gv, r.listKind);
    for (const s of r.subresources) add(groupVersionString({ group: s.group ?? r.group, version: s.version ?? r.version }), s.kind);
  }
  for (const t of allTypeSchemas()) {
    const gv = packages.get(t.pkg);
    // WatchEvent is a kind without TypeMeta: it is encoded only as a watch stream frame.
    if (t.kind && gv && t.fields.some((f) => f.name === 'apiVersion')) add(gv, shortTypeName(t.name));
  }
  return [...out.values()];
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

const SCALAR_SAMPLES: Record<Exclude<ScalarType, 'int-or-string'>, unknown> = {
  string: 'text',
  boolean: true,
  int32: 42,
  int64: 1234567890123,
  double: 1.5,
  bytes: Buffer.from('bytes').toString('base64'),
  time: '2024-01-02T03:04:05Z',
  microtime: '2024-01-02T03:04:05.123456Z',
  duration: '1h2m3.5s',
  quantity: '250m',
  raw: { a: 1, b: ['x', null] },
};

class Generator {
  private readonly stack: string[] = [];
  /** Alternates the int-or-string and union forms across occurrences. */
  private turn = 0;

  value(t: FieldType, field?: FieldSchema): unknown {
    if (isScalar(t)) return this.scalar(t, field);
    if ('array' in t) return this.list(t.array);
    if ('map' in t) {
      const v = this.value(t.map);
      return v === undefined ? undefined : { key: v };
    }
    return this.named(typeSchema(t.ref)!);
  }

  private scalar(t: ScalarType, field?: FieldSchema): unknown {
    if (t === 'int-or-string') return this.turn++ % 2 ? 'http' : 8080;
    if (t === 'string') return field?.enum?.find((e) => e !== '') ?? `${field?.name ?? 'item'}-value`;
    return SCALAR_SAMPLES[t];
  }

  private list(item: FieldType): unknown[] | undefined {
    const v = this.value(item);
    return v === undefined ? undefined : [v];
  }

  private named(schema: TypeSchema): unknown {
    if (schema.scalar) return this.scalar(schema.scalar);
    if (schema.items) return this.list(schema.items);
    if (this.stack.filter((n) => n === schema.name).length >= 2) return undefined;
    this.stack.push(schema.name);
    try {
      return schema.union ? this.union(schema) : this.struct(schema);
    } finally {
      this.stack.pop();
    }
  }

  private union(schema: TypeSchema): unknown {
    const n = this.turn++;
    for (let i = 0; i < schema.fields.length; i++) {
      const f = schema.fields[(n + i) % schema.fields.length];
      const v = f.type === 'boolean' ? false : this.value(f.type);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  /** Every field of a struct except TypeMeta (not part of the protobuf message, as upstream). */
  struct(schema: TypeSchema): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, f] of jsonFields(schema)) {
      if (f.proto === 0) continue;
      const v = this.value(f.type, f);
      if (v !== undefined) out[name] = v;
    }
    return out;
  }
}

/** A sample object of a kind with every field set (non-empty strings, lists and maps). */
export function sampleObject(apiVersion: string, kind: string): KubeObject {
  const { group, version } = splitApiVersion(apiVersion);
  const schema = schemaForKind(group, version, kind);
  if (!schema) throw new Error(`no schema for ${kind} in ${apiVersion}`);
  const body = new Generator().struct(schema);
  const listItems = schema.fields.find((f) => f.name === 'items');
  const items = body.items as Record<string, unknown>[] | undefined;
  // Items of a typed list carry their apiVersion and kind in the JSON form.
  if (listItems && items && !isScalar(listItems.type) && 'array' in listItems.type && !isScalar(listItems.type.array) && 'ref' in listItems.type.array) {
    const itemSchema = typeSchema(listItems.type.array.ref)!;
    if (itemSchema.kind && itemSchema.fields.some((f) => f.name === 'apiVersion')) {
      body.items = items.map((item) => ({ apiVersion, kind: shortTypeName(itemSchema.name), ...item }));
    }
  }
  return { apiVersion, kind, ...body } as KubeObject;
}
