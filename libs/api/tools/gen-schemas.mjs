#!/usr/bin/env node
// Generates libs/api/src/schemas/generated/*.ts from fact extracts of the upstream API
// type definitions (field names, JSON names, types, protobuf numbers, list/patch markers,
// defaults, enums, Go pointers and `omitempty`). The extracts are libs/api/tools/facts/*.txt
// (facts only, each file naming where its facts come from); --in DIR reads another directory.
//
// Extract format, one declaration per line ('#' starts a comment):
//   @ <pkg>                         package key: core/v1, meta/v1, apps/v1, resource, intstr, runtime, ...
//   T <Name> [+tm|+k] [atomic|granular] [union] [scalar=<scalar>]
//                                   struct type; +tm = a kind carrying TypeMeta (apiVersion, kind) inline,
//                                   +k = a kind without TypeMeta (WatchEvent)
//   <json> <type> <proto> [flags]   field of the last T; json '...' = embedded struct inlined in JSON
//   E <Name> <value>...             string enum type ("" is the empty string)
//   A <Name> <type>                 alias of a type expression
//   W <Name> <itemtype>             named list (JSON array; protobuf message { repeated items = 1 })
// Types: string bool int32 int64 double bytes time microtime duration quantity ios raw,
//   []T, map[T] (string keys), Name, alias.Name (meta = meta/v1, core = core/v1).
// Flags: ! required, lt=atomic|set|map, lk=k1,k2, ps=<patchStrategy>, mk=<mergeKey>,
//   mt=atomic|granular, st=atomic|granular, d=<JSON default>,
//   ptr (the Go field is a pointer), omitempty (its Go JSON tag has `omitempty`).
//
// It also writes the TypeScript interfaces of the same types (libs/api/src/types/generated), the
// one definition of the built-in API types that apps and libraries use.
//
// Usage: node libs/api/tools/gen-schemas.mjs [--in DIR] [--out DIR] [--types-out DIR] [--check-client-node]
// (--out / --types-out: write elsewhere than libs/api/src/{schemas,types}/generated, as generated.spec.ts does to compare)
import { readFileSync, readdirSync, writeFileSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outDir = args.includes('--out') ? args[args.indexOf('--out') + 1] : join(here, '..', 'src', 'schemas', 'generated');
const inDir = args.includes('--in') ? args[args.indexOf('--in') + 1] : join(here, 'facts');
const typesOutDir = args.includes('--types-out') ? args[args.indexOf('--types-out') + 1] : join(here, '..', 'src', 'types', 'generated');
const SCRIPT = 'libs/api/tools/gen-schemas.mjs';

const SCALARS = {
  string: 'string',
  bool: 'boolean',
  int32: 'int32',
  int64: 'int64',
  double: 'double',
  bytes: 'bytes',
  time: 'time',
  microtime: 'microtime',
  duration: 'duration',
  quantity: 'quantity',
  ios: 'int-or-string',
  raw: 'raw',
};
const ALIASES = { meta: 'meta/v1', core: 'core/v1' };

/** Full (orch-branded) package names, as upstream's OpenAPI definition prefixes with k8s.io → orch.io. */
export function packageName(key) {
  const special = {
    'meta/v1': 'io.orch.apimachinery.pkg.apis.meta.v1',
    'apiextensions/v1': 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1',
    'apiregistration/v1': 'io.orch.kube-aggregator.pkg.apis.apiregistration.v1',
    resource: 'io.orch.apimachinery.pkg.api.resource',
    intstr: 'io.orch.apimachinery.pkg.util.intstr',
    runtime: 'io.orch.apimachinery.pkg.runtime',
  };
  if (special[key]) return special[key];
  const [group, version] = key.split('/');
  return `io.orch.api.${group}.${version}`;
}

function fail(where, msg) {
  throw new Error(`${where}: ${msg}`);
}

/** Parses one extract file into packages: Map<key, {types, enums, aliases, wrappers, sources}>. */
function parseExtract(file, text, pkgs) {
  let pkg;
  let type;
  text.split('\n').forEach((raw, i) => {
    const where = `${file}:${i + 1}`;
    const line = raw.trim();
    if (!line) return;
    if (line.startsWith('#')) {
      if (pkg) pkg.sources.add(line.replace(/^#\s*/, ''));
      else pendingSources.push(line.replace(/^#\s*/, ''));
      return;
    }
    const tok = line.split(/\s+/);
    switch (tok[0]) {
      case '@': {
        const key = tok[1];
        if (!pkgs.has(key)) pkgs.set(key, { key, types: new Map(), enums: new Map(), aliases: new Map(), wrappers: new Map(), sources: new Set() });
        pkg = pkgs.get(key);
        pendingSources.splice(0).forEach((s) => pkg.sources.add(s));
        type = undefined;
        return;
      }
      case 'T': {
        if (!pkg) fail(where, 'type before package');
        const opts = {};
        for (const f of tok.slice(2)) {
          if (f === '+tm') opts.tm = 1;
          else if (f === '+k') opts.k = 1;
          else if (f === 'atomic' || f === 'granular') opts.st = f;
          else if (f === 'union') opts.union = 1;
          else if (f.startsWith('scalar=')) opts.scalar = f.slice(7);
          else fail(where, `unknown type flag ${f}`);
        }
        if (pkg.types.has(tok[1])) fail(where, `duplicate type ${tok[1]}`);
        type = { name: tok[1], opts, fields: [] };
        pkg.types.set(tok[1], type);
        return;
      }
      case 'E':
        pkg.enums.set(
          tok[1],
          tok.slice(2).map((v) => (v === '""' ? '' : v)),
        );
        return;
      case 'A':
        pkg.aliases.set(tok[1], tok[2]);
        return;
      case 'W':
        pkg.wrappers.set(tok[1], tok[2]);
        return;
    }
    if (!type) fail(where, `field outside a type: ${line}`);
    const [json, expr, proto, ...flags] = tok;
    const field = { json, expr, proto: Number(proto), opts: {} };
    if (!Number.isInteger(field.proto)) fail(where, `bad protobuf number ${proto}`);
    if (json === '...') field.opts.inline = 1;
    for (const f of flags) {
      if (f === '!') field.opts.required = 1;
      else if (f === 'ptr') field.opts.ptr = 1;
      else if (f === 'omitempty') field.opts.oe = 1;
      else {
        const eq = f.indexOf('=');
        const k = f.slice(0, eq);
        const v = f.slice(eq + 1);
        if (k === 'lt' || k === 'ps' || k === 'mk' || k === 'mt' || k === 'st') field.opts[k] = v;
        else if (k === 'lk') field.opts.lk = v.split(',');
        else if (k === 'd') field.opts.d = JSON.parse(v);
        else fail(where, `unknown field flag ${f}`);
      }
    }
    type.fields.push(field);
  });
}
const pendingSources = [];

/** Resolves an extract type expression to the generated form, recording enum names. */
function resolveExpr(pkgs, pkg, expr, where) {
  if (expr.startsWith('[]')) {
    const inner = resolveExpr(pkgs, pkg, expr.slice(2), where);
    return { t: `[]${inner.t}`, e: inner.e };
  }
  const m = /^map\[(.+)\]$/.exec(expr);
  if (m) {
    const inner = resolveExpr(pkgs, pkg, m[1], where);
    return { t: `{}${inner.t}`, e: inner.e };
  }
  if (SCALARS[expr]) return { t: SCALARS[expr] };
  let target = pkg;
  let name = expr;
  const dot = expr.indexOf('.');
  if (dot > 0) {
    const alias = expr.slice(0, dot);
    target = pkgs.get(ALIASES[alias] ?? alias);
    name = expr.slice(dot + 1);
    if (!target) fail(where, `unknown package alias ${alias}`);
  }
  const qualify = (n) => (target === pkg ? n : `${target.key}:${n}`);
  if (target.aliases.has(name)) return resolveExpr(pkgs, target, target.aliases.get(name), where);
  if (target.enums.has(name)) return { t: 'string', e: qualify(name) };
  if (target.types.has(name) || target.wrappers.has(name)) return { t: qualify(name) };
  fail(where, `unresolved type ${expr} in ${pkg.key}`);
}

function lowerFirst(s) {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function buildPackage(pkgs, pkg) {
  const types = [];
  for (const t of pkg.types.values()) {
    const where = `${pkg.key}:${t.name}`;
    const seenJson = new Set();
    const seenProto = new Set();
    const fields = t.fields.map((f) => {
      const r = resolveExpr(pkgs, pkg, f.expr, `${where}.${f.json}`);
      const opts = { ...f.opts };
      if (r.e) opts.e = r.e;
      const json = f.opts.inline ? lowerFirst(f.expr.replace(/^.*\./, '')) : f.json;
      if (seenJson.has(json)) fail(where, `duplicate JSON name ${json}`);
      seenJson.add(json);
      if (f.proto !== 0) {
        if (seenProto.has(f.proto)) fail(where, `duplicate protobuf number ${f.proto}`);
        seenProto.add(f.proto);
      }
      const tuple = [json, r.t, f.proto];
      if (Object.keys(opts).length) tuple.push(opts);
      return tuple;
    });
    const entry = [t.name, fields];
    if (Object.keys(t.opts).length) entry.push(t.opts);
    types.push(entry);
  }
  for (const [name, item] of pkg.wrappers) {
    const r = resolveExpr(pkgs, pkg, item, `${pkg.key}:${name}`);
    types.push([name, [['items', `[]${r.t}`, 1]], { items: r.t }]);
  }
  const enums = Object.fromEntries(pkg.enums);
  return { key: pkg.key, name: packageName(pkg.key), enums, types };
}

function fileBase(key) {
  return key.replace('/', '-');
}

function identifier(key) {
  return fileBase(key).replace(/-(.)/g, (_, c) => c.toUpperCase());
}

function render(data, sources) {
  const header = [
    `// Code generated by ${SCRIPT}. DO NOT EDIT.`,
    '// Facts (field names, types, protobuf numbers, list/patch markers, defaults, enums, Go pointers and omitempty) taken from',
    ...[...sources].map((s) => `//   ${s}`),
  ];
  const typeLines = data.types.map((t) => `    ${JSON.stringify(t)},`);
  return [
    ...header,
    "import type { PackageData } from '../data';",
    '',
    `export const ${identifier(data.key)}: PackageData = {`,
    `  key: ${JSON.stringify(data.key)},`,
    `  name: ${JSON.stringify(data.name)},`,
    `  enums: ${JSON.stringify(data.enums)},`,
    '  types: [',
    ...typeLines,
    '  ],',
    '};',
    '',
  ].join('\n');
}

const CLIENT_NODE_FORMAT = { int32: 'int32', int64: 'int64', double: 'double', bytes: 'byte', time: 'date-time', microtime: 'date-time-micro', boolean: '', 'int-or-string': 'int-or-string' };

/** Compares JSON field names with the @kubernetes/client-node models (a different release): warnings only. */
function checkClientNode(built) {
  const require = createRequire(import.meta.url);
  let models;
  try {
    models = require('@kubernetes/client-node/dist/gen/models/all.js');
  } catch {
    console.warn('client-node models not found; skipping the check');
    return;
  }
  const byName = new Map(built.map((p) => [p.key, p]));
  const flat = (pkg, typeName, seen = new Set()) => {
    const t = pkg.types.find((x) => x[0] === typeName);
    if (!t || seen.has(typeName)) return [];
    seen.add(typeName);
    const out = [];
    for (const [json, expr, , opts] of t[1]) {
      if (opts?.inline) {
        const [pk, n] = expr.includes(':') ? expr.split(':') : [pkg.key, expr];
        out.push(...flat(byName.get(pk), n, seen));
      } else out.push(json);
    }
    return out;
  };
  let diffs = 0;
  for (const pkg of built) {
    const [group, version] = pkg.key.split('/');
    if (!version) continue;
    const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
    for (const [name, , opts] of pkg.types) {
      if (opts?.items || opts?.union || opts?.scalar) continue;
      const candidates = [`${cap(version)}${name}`, `${cap(group)}${cap(version)}${name}`];
      const model = candidates.map((c) => models[c]).find(Boolean);
      if (!model?.attributeTypeMap) continue;
      const skip = (n) => n === 'apiVersion' || n === 'kind';
      const theirs = new Set(model.attributeTypeMap.map((a) => a.baseName).filter((n) => !skip(n)));
      const ours = new Set(flat(pkg, name).filter((n) => !skip(n)));
      const missing = [...theirs].filter((n) => !ours.has(n));
      const extra = [...ours].filter((n) => !theirs.has(n));
      if (missing.length || extra.length) {
        diffs++;
        console.warn(`${pkg.key} ${name}: only in client-node [${missing.join(', ')}]; only here [${extra.join(', ')}]`);
      }
      const t = pkg.types.find((x) => x[0] === name);
      for (const [json, expr] of t[1]) {
        const attr = model.attributeTypeMap.find((a) => a.baseName === json);
        const expected = CLIENT_NODE_FORMAT[expr.replace(/^(\[\]|\{\})+/, '')];
        if (!attr || expected === undefined) continue;
        const container = expr.startsWith('[]') ? 'Array<' : expr.startsWith('{}') ? '{ [key: string]' : '';
        if (attr.format !== expected || (container && !attr.type.startsWith(container))) {
          diffs++;
          console.warn(`${pkg.key} ${name}.${json}: ${expr} here, ${attr.type} (${attr.format}) in client-node`);
        }
      }
    }
  }
  console.warn(`client-node comparison: ${diffs} type(s) differ`);
}

/** The TypeScript type of a scalar of the model (JSON form, as the API serves it). */
const TS_SCALARS = {
  string: 'string',
  boolean: 'boolean',
  int32: 'number',
  int64: 'number',
  double: 'number',
  bytes: 'string',
  time: 'string',
  microtime: 'string',
  duration: 'string',
  // Served as a string; accepted as a JSON number too (upstream Quantity.UnmarshalJSON).
  quantity: 'number | string',
  'int-or-string': 'number | string',
  raw: 'unknown',
};

/** A generated type reference (`[]T`, `{}T`, `pkg:Name`, `Name`, scalar) as TypeScript. */
function tsType(t, imports) {
  if (t.startsWith('[]')) {
    const inner = tsType(t.slice(2), imports);
    return /[ |]/.test(inner) ? `(${inner})[]` : `${inner}[]`;
  }
  if (t.startsWith('{}')) return `Record<string, ${tsType(t.slice(2), imports)}>`;
  if (TS_SCALARS[t]) return TS_SCALARS[t];
  const colon = t.indexOf(':');
  if (colon < 0) return t;
  const key = t.slice(0, colon);
  imports.add(key);
  return `${identifier(key)}.${t.slice(colon + 1)}`;
}

/** Whether a JSON name can be written bare as an interface member. */
const bareName = (json) => /^[A-Za-z_$][\w$]*$/.test(json);

function renderTypes(data) {
  const imports = new Set();
  const body = [];
  for (const [name, fields, opts = {}] of data.types) {
    if (opts.scalar) {
      body.push(`export type ${name} = ${TS_SCALARS[opts.scalar]};`, '');
      continue;
    }
    if (opts.items) {
      body.push(`export type ${name} = ${tsType(`[]${opts.items}`, imports)};`, '');
      continue;
    }
    const embedded = fields.filter((f) => f[3]?.inline).map((f) => tsType(f[1], imports));
    const members = [];
    if (opts.tm) members.push('  apiVersion?: string;', '  kind?: string;');
    for (const [json, t, , fopts = {}] of fields) {
      if (fopts.inline) continue;
      const values = fopts.e ? enumValues(data, fopts.e) : undefined;
      if (values) members.push(`  /** One of: ${values.map((v) => JSON.stringify(v)).join(', ')}. */`);
      // Every object the API serves has metadata: required on kinds, so `pod.metadata.name` needs no guard.
      const required = fopts.required || (opts.tm && json === 'metadata');
      members.push(`  ${bareName(json) ? json : JSON.stringify(json)}${required ? '' : '?'}: ${tsType(t, imports)};`);
    }
    const heritage = embedded.length ? ` extends ${embedded.join(', ')}` : '';
    body.push(members.length ? `export interface ${name}${heritage} {` : `export interface ${name}${heritage} {}`, ...(members.length ? [...members, '}'] : []), '');
  }
  return [
    `// Code generated by ${SCRIPT}. DO NOT EDIT.`,
    `// The JSON form of the ${data.key} API types, from the facts listed in ../../schemas/generated/${fileBase(data.key)}.ts.`,
    ...(body.some((l) => l.endsWith('{}')) ? ['/* eslint-disable @typescript-eslint/no-empty-object-type */'] : []),
    ...[...imports].sort().map((k) => `import type * as ${identifier(k)} from './${fileBase(k)}';`),
    '',
    ...body,
  ].join('\n');
}

/** The values of enum `e` (`Name` of this package or `pkg:Name`), when the extract lists them. */
function enumValues(data, e) {
  return e.includes(':') ? undefined : data.enums[e];
}

function main() {
  if (!existsSync(inDir)) throw new Error(`extract directory ${inDir} not found`);
  const pkgs = new Map();
  for (const file of readdirSync(inDir).filter((f) => f.endsWith('.txt')).sort()) {
    parseExtract(file, readFileSync(join(inDir, file), 'utf8'), pkgs);
  }
  const built = [...pkgs.values()].map((p) => ({ data: buildPackage(pkgs, p), sources: p.sources }));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  let types = 0;
  let fields = 0;
  for (const { data, sources } of built) {
    writeFileSync(join(outDir, `${fileBase(data.key)}.ts`), render(data, sources));
    types += data.types.length;
    fields += data.types.reduce((n, t) => n + t[1].length, 0);
  }
  const keys = built.map((b) => b.data.key).sort();
  const index = [
    `// Code generated by ${SCRIPT}. DO NOT EDIT.`,
    "import type { PackageData } from '../data';",
    ...keys.map((k) => `import { ${identifier(k)} } from './${fileBase(k)}';`),
    '',
    '/** Every generated package of built-in API types. */',
    `export const GENERATED_PACKAGES: readonly PackageData[] = [${keys.map(identifier).join(', ')}];`,
    '',
  ].join('\n');
  writeFileSync(join(outDir, 'index.ts'), index);
  rmSync(typesOutDir, { recursive: true, force: true });
  mkdirSync(typesOutDir, { recursive: true });
  for (const { data } of built) writeFileSync(join(typesOutDir, `${fileBase(data.key)}.ts`), renderTypes(data));
  const typesIndex = [
    `// Code generated by ${SCRIPT}. DO NOT EDIT.`,
    '// The built-in API types, one namespace per package: `coreV1.Pod`, `appsV1.Deployment`, `metaV1.ObjectMeta`.',
    ...keys.map((k) => `export type * as ${identifier(k)} from './${fileBase(k)}';`),
    '',
  ].join('\n');
  writeFileSync(join(typesOutDir, 'index.ts'), typesIndex);
  console.log(`generated ${built.length} packages, ${types} types, ${fields} fields into ${outDir}`);
  if (args.includes('--check-client-node')) checkClientNode(built.map((b) => b.data));
}

main();
