import fc from 'fast-check';
import { isScalar, jsonFields, schemaForKind, typeSchema, type FieldSchema, type FieldType, type GroupVersionKind, type ScalarType, type TypeSchema } from '@orch/api';

/**
 * Objects for the fuzz suite, from the built-in schemas of libs/api: a well-typed object of
 * any kind (a few fields at each level, so bodies stay small), then mutated as careless or
 * hostile clients do: wrong types, missing and extra fields, huge strings and numbers, unicode
 * edge cases, deep nesting.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** DNS-1123 labels the objects are named with (valid for every kind). */
export const nameArb = fc.stringMatching(/^[a-z]([a-z0-9-]{0,10}[a-z0-9])?$/);

const quantityArb = fc.constantFrom('1', '100m', '0.5', '1Gi', '128Mi', '2k', '1e3', '-1', '10Ei');
const timeArb = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z'));
const scalarArbs: Record<ScalarType, fc.Arbitrary<Json>> = {
  string: fc.oneof(nameArb, fc.string({ maxLength: 16 })),
  boolean: fc.boolean(),
  int32: fc.oneof(fc.integer({ min: -2, max: 100 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  int64: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.maxSafeInteger()),
  double: fc.double({ noNaN: true, noDefaultInfinity: true }),
  bytes: fc.base64String({ maxLength: 16 }),
  time: timeArb,
  microtime: timeArb.map((t) => t.replace('Z', '.123456Z')),
  duration: fc.constantFrom('1s', '1m30s', '2h', '0s', '-5s'),
  quantity: quantityArb,
  'int-or-string': fc.oneof(fc.integer({ min: 0, max: 65535 }), nameArb, fc.constantFrom('50%', 'http')),
  raw: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
};

/** Object-valued fields below this depth are left out (required ones become `{}`). */
const MAX_DEPTH = 4;
/** Optional fields filled in at each level, at most. */
const FIELDS_PER_LEVEL = 4;

const cache = new Map<string, fc.Arbitrary<Json>>();

function fieldArb(t: FieldType, enumValues: readonly string[] | undefined, depth: number): fc.Arbitrary<Json> {
  if (enumValues?.length) return fc.constantFrom(...enumValues);
  if (isScalar(t)) return scalarArbs[t];
  if ('array' in t) return depth >= MAX_DEPTH ? fc.constant([]) : fc.array(fieldArb(t.array, undefined, depth + 1), { maxLength: 2 });
  if ('map' in t) return depth >= MAX_DEPTH ? fc.constant({}) : fc.dictionary(nameArb, fieldArb(t.map, undefined, depth + 1), { maxKeys: 2 });
  const type = typeSchema(t.ref);
  return type ? typeArb(type, depth + 1) : fc.constant({});
}

/** A well-typed value of a struct type: its required fields and a few optional ones. */
export function typeArb(type: TypeSchema, depth = 0, omit: readonly string[] = []): fc.Arbitrary<Json> {
  const key = `${type.name}@${depth}@${omit.join(',')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const fields = [...jsonFields(type).values()].filter((f) => !omit.includes(f.name));
  const required = fields.filter((f) => f.required);
  const optional = depth >= MAX_DEPTH ? [] : fields.filter((f) => !f.required);
  const arb = fc.subarray(optional, { maxLength: Math.min(FIELDS_PER_LEVEL, optional.length) }).chain((chosen: FieldSchema[]) => {
    const all = [...required, ...chosen];
    return fc.tuple(...all.map((f) => fieldArb(f.type, f.enum, depth))).map((values) => Object.fromEntries(all.map((f, i) => [f.name, values[i]])) as Json);
  });
  cache.set(key, arb);
  return arb;
}

/**
 * A well-typed object of `kind` named `name` (schema types, not necessarily valid for the
 * kind's validation): apiVersion, kind and metadata as a client sends them, plus generated fields.
 */
export function objectArb(kind: GroupVersionKind, name: fc.Arbitrary<string>, namespace: string | undefined): fc.Arbitrary<Json> {
  const schema = schemaForKind(kind.group, kind.version, kind.kind);
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  const body = schema ? typeArb(schema, 1, ['apiVersion', 'kind', 'metadata']) : fc.constant({} as Json);
  const labels = fc.dictionary(nameArb, nameArb, { maxKeys: 2 });
  return fc.tuple(name, labels, body).map(([n, l, b]) => ({
    ...(b as Record<string, Json>),
    apiVersion,
    kind: kind.kind,
    metadata: { name: n, ...(namespace ? { namespace } : {}), ...(Object.keys(l).length ? { labels: l } : {}) },
  }));
}

/** Values that break assumptions: wrong types, extremes, odd unicode. */
export const hostileValueArb: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1e308, -1e308, 5e-324, 2 ** 53 + 1, 2 ** 64, 1e20, '', ' ', '0', 'null', '[]', '{}'),
  fc.constantFrom<Json>('\u0000', '\ud800', 'a\u202eb', '\u2028\u2029', '🦀'.repeat(10), 'é'.normalize('NFD'), '\uffff', '../../etc/passwd', '%00', '${x}', '<script>'),
  fc.constantFrom<Json>([], [null], {}, { '': '' }, { __proto__: 1 } as Json, { constructor: { prototype: 1 } }),
  fc.integer({ min: 1000, max: 200_000 }).map((n) => 'x'.repeat(n)),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

/** One mutation of a JSON value, applied at a path chosen among the value's own paths. */
export type Mutation =
  | { op: 'set'; at: number; value: Json }
  | { op: 'delete'; at: number }
  | { op: 'add'; at: number; key: string; value: Json }
  | { op: 'nest'; at: number; depth: number; array: boolean };

function mutations(maxNesting: number): fc.Arbitrary<Mutation> {
  return fc.oneof(
    fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: hostileValueArb }),
    fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('add' as const), at: fc.nat(), key: fc.oneof(nameArb, fc.string({ maxLength: 8 }), fc.constantFrom('$patch', '$retainKeys', '$setElementOrder/x', '__proto__')), value: hostileValueArb }),
    fc.record({ op: fc.constant('nest' as const), at: fc.nat(), depth: maxNesting > 50 ? fc.oneof(fc.integer({ min: 2, max: 50 }), fc.constantFrom(1000, 10_000, maxNesting)) : fc.integer({ min: 2, max: maxNesting }), array: fc.boolean() }),
  );
}

/** Mutations of a value sent as JSON text (toJsonText): nesting up to 100,000 deep. */
export const mutationArb: fc.Arbitrary<Mutation> = mutations(100_000);
/** Mutations of a value that is serialized recursively (YAML, protobuf): nesting up to 50 deep. */
export const shallowMutationArb: fc.Arbitrary<Mutation> = mutations(50);

/** Paths deeper than this are not mutation targets (a value may already be nested 100,000 deep). */
const MAX_PATH_DEPTH = 64;

/** Every path of a JSON value down to MAX_PATH_DEPTH, root first (no recursion: see MAX_PATH_DEPTH). */
function paths(v: Json): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: [Json, (string | number)[]][] = [[v, []]];
  while (stack.length) {
    const [value, prefix] = stack.pop()!;
    out.push(prefix);
    if (prefix.length >= MAX_PATH_DEPTH) continue;
    const children: [string | number, Json][] = Array.isArray(value) ? value.map((x, i) => [i, x]) : value && typeof value === 'object' ? Object.entries(value) : [];
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i][1], [...prefix, children[i][0]]]);
  }
  return out;
}

/**
 * Applies mutations to a copy of `v`; a mutation of the root replaces it. A `nest` ends the
 * list (what follows it is ignored: walking a value nested 100,000 deep would overflow here).
 */
export function mutate(v: Json, mutations: readonly Mutation[]): Json {
  let root: Json = structuredClone(v);
  for (const m of mutations) {
    const all = paths(root);
    const path = all[m.at % all.length];
    const get = (p: (string | number)[]) => p.reduce<Json>((o, k) => (o as Record<string, Json>)[k as string], root);
    const put = (value: Json) => {
      if (path.length === 0) root = value;
      else (get(path.slice(0, -1)) as Record<string, Json>)[path[path.length - 1] as string] = value;
    };
    switch (m.op) {
      // Values are copied in: fast-check hands out the same constant instances run after run,
      // and a later mutation inside one would change (and could nest) it for every later run.
      case 'set':
        put(structuredClone(m.value));
        break;
      case 'delete':
        if (path.length === 0) root = null;
        else {
          const parent = get(path.slice(0, -1));
          if (Array.isArray(parent)) parent.splice(path[path.length - 1] as number, 1);
          else delete (parent as Record<string, Json>)[path[path.length - 1] as string];
        }
        break;
      case 'add': {
        const target = get(path);
        if (target && typeof target === 'object' && !Array.isArray(target)) Object.defineProperty(target, m.key, { value: structuredClone(m.value), enumerable: true, writable: true, configurable: true });
        else put({ [m.key]: structuredClone(m.value) });
        break;
      }
      case 'nest': {
        let nested: Json = get(path);
        for (let i = 0; i < m.depth; i++) nested = m.array ? [nested] : { a: nested };
        put(nested);
        return root;
      }
    }
  }
  return root;
}

/**
 * JSON text for a value, built without recursion so values nested 100,000 deep serialize
 * (JSON.stringify would overflow the stack here before the server sees them).
 */
export function toJsonText(v: Json): string {
  type Item = { value: Json } | { text: string };
  const out: string[] = [];
  const stack: Item[] = [{ value: v }];
  while (stack.length) {
    const item = stack.pop()!;
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const top = item.value;
    if (Array.isArray(top)) {
      out.push('[');
      stack.push({ text: ']' });
      for (let i = top.length - 1; i >= 0; i--) {
        stack.push({ value: top[i] });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (top && typeof top === 'object') {
      out.push('{');
      stack.push({ text: '}' });
      const entries = Object.entries(top);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ value: entries[i][1] });
        stack.push({ text: `${JSON.stringify(entries[i][0])}:` });
        if (i > 0) stack.push({ text: ',' });
      }
    } else {
      out.push(JSON.stringify(top) ?? 'null');
    }
  }
  return out.join('');
}
