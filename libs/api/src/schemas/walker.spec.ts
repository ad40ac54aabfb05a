import {
  FieldManager,
  FieldSet,
  StatusError,
  applyJsonPatch,
  applyMergePatch,
  jsonEqual,
  pathString,
  strategicMergePatch,
  toFieldSet,
  type FieldPath,
  type KubeObject,
  type ObjectSchema,
  type SchemaWalker,
} from '@orch/apimachinery';
import { objectSchema, schemaWalker, supportsStrategicMerge } from './walker';
import type { SchemaNode } from './semantics';

/** The shape at a dotted path (numbers step into list items). */
function shapeAt(group: string, version: string, kind: string, path: string) {
  const s = objectSchema(group, version, kind);
  const w = s.walker as SchemaWalker<SchemaNode>;
  let node: SchemaNode | undefined = s.root;
  for (const seg of path.split('.')) node = node && (/^\d+$/.test(seg) ? w.item(node) : w.child(node, seg));
  return node && w.shape(node);
}

describe('schemaWalker', () => {
  it.each([
    { name: 'containers: list map by name, merge', gvk: ['', 'v1', 'Pod'], path: 'spec.containers', want: { kind: 'list', listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' } },
    { name: 'ports: two keys, protocol defaulted', gvk: ['', 'v1', 'Pod'], path: 'spec.containers.0.ports', want: { listType: 'map', listMapKeys: ['containerPort', 'protocol'] } },
    { name: 'protocol default', gvk: ['', 'v1', 'Pod'], path: 'spec.containers.0.ports.0.protocol', want: { kind: 'scalar', default: 'TCP' } },
    { name: 'finalizers: set', gvk: ['apps', 'v1', 'Deployment'], path: 'metadata.finalizers', want: { kind: 'list', listType: 'set', patchStrategy: 'merge' } },
    { name: 'command: atomic list', gvk: ['', 'v1', 'Pod'], path: 'spec.containers.0.command', want: { kind: 'list', listType: 'atomic' } },
    { name: 'merge strategy without listType: keyed by the merge key', gvk: ['admissionregistration.orch.io', 'v1', 'ValidatingWebhookConfiguration'], path: 'webhooks', want: { listType: 'map', listMapKeys: ['name'] } },
    { name: 'nodeSelector: atomic map', gvk: ['', 'v1', 'Pod'], path: 'spec.nodeSelector', want: { kind: 'map', atomic: true } },
    { name: 'labels: granular map', gvk: ['', 'v1', 'Pod'], path: 'metadata.labels', want: { kind: 'map', atomic: false } },
    { name: 'owner reference items: atomic structs', gvk: ['', 'v1', 'ConfigMap'], path: 'metadata.ownerReferences.0', want: { kind: 'struct', atomic: true } },
    { name: 'strategy: retainKeys', gvk: ['apps', 'v1', 'Deployment'], path: 'spec.strategy', want: { kind: 'struct', patchStrategy: 'retainKeys' } },
    { name: 'volumes: merge,retainKeys', gvk: ['apps', 'v1', 'Deployment'], path: 'spec.template.spec.volumes', want: { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' } },
    { name: 'quantities are scalars', gvk: ['', 'v1', 'Pod'], path: 'spec.containers.0.resources.limits.cpu', want: { kind: 'scalar' } },
    { name: 'custom kinds: typed metadata', gvk: ['example.com', 'v1', 'Widget'], path: 'metadata.labels', want: { kind: 'map' } },
  ])('$name', ({ gvk, path, want }) => {
    const [g, v, k] = gvk;
    expect(shapeAt(g, v, k, path)).toMatchObject(want);
  });

  it('custom kinds deduce everything but metadata; only built-in kinds take strategic merge patches', () => {
    expect(shapeAt('example.com', 'v1', 'Widget', 'spec')).toBeUndefined();
    expect(supportsStrategicMerge('example.com', 'v1', 'Widget')).toBe(false);
    expect(supportsStrategicMerge('apps', 'v1', 'Deployment')).toBe(true);
    expect(objectSchema('apps', 'v1', 'Deployment')).toBe(objectSchema('apps', 'v1', 'Deployment'));
    expect(schemaWalker.child(objectSchema('', 'v1', 'ConfigMap').root, 'data')).toBe(schemaWalker.child(objectSchema('', 'v1', 'ConfigMap').root, 'data'));
  });

  it('custom resources: granular maps with ".", atomic lists', () => {
    const fm = new FieldManager(objectSchema('example.com', 'v1', 'Widget'), 'example.com/v1');
    const created = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: '1' } }, spec: { size: 1, tags: ['x'] } } as KubeObject;
    expect(fm.update(undefined, created, { manager: 'm', now: '2024-01-01T00:00:00Z' })?.[0].fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
      'f:spec': { '.': {}, 'f:size': {}, 'f:tags': {} },
    });
  });
});

// ---------------------------------------------------------------------------------------
// Randomized: apply / merge / strategic / JSON patches by three managers; after every step
// the managedFields invariants hold, and applies conflict exactly when they should.

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MANAGERS = ['alice', 'bob', 'carol'];
const STRIPPED = ['f:apiVersion', 'f:kind', 'f:metadata.f:name', 'f:metadata.f:namespace'];

/** The value at a field path, or undefined when the path does not exist. */
function valueAt(obj: unknown, path: FieldPath): unknown {
  let cur: unknown = obj;
  for (const pe of path) {
    const body = pe.slice(2);
    if (pe.startsWith('f:')) cur = cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Record<string, unknown>)[body] : undefined;
    else if (pe.startsWith('k:')) {
      const key = JSON.parse(body) as Record<string, unknown>;
      cur = Array.isArray(cur) ? cur.find((item) => Object.entries(key).every(([k, v]) => item?.[k] === v)) : undefined;
    } else if (pe.startsWith('v:')) {
      const v = JSON.parse(body);
      cur = Array.isArray(cur) && cur.includes(v) ? v : undefined;
    } else cur = Array.isArray(cur) ? cur[Number(body)] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  set: FieldSet;
}

function entries(obj: KubeObject): Entry[] {
  return (obj.metadata.managedFields ?? []).map((e) => ({ manager: e.manager!, operation: e.operation!, apiVersion: e.apiVersion!, set: FieldSet.fromFieldsV1(e.fieldsV1) }));
}

/** Every field set on the object is owned; no owned field is absent. */
function checkInvariants(obj: KubeObject, schema: ObjectSchema, step: string): void {
  const { managedFields: _m, ...metadata } = obj.metadata;
  const present = toFieldSet({ ...obj, metadata }, schema);
  const owned = entries(obj).reduce((acc, e) => acc.union(e.set), new FieldSet());
  for (const p of present.paths()) {
    if (STRIPPED.includes(p.join('.'))) continue;
    if (!owned.has(p)) throw new Error(`${step}: ${pathString(p)} is set but owned by nobody`);
  }
  for (const e of entries(obj)) {
    for (const p of e.set.paths()) if (valueAt(obj, p) === undefined) throw new Error(`${step}: ${e.manager} owns ${pathString(p)}, which is absent`);
  }
}

/** The conflicts an apply must report: leaves it sets to another value that other managers own. */
function expectedConflicts(live: KubeObject | undefined, config: KubeObject, schema: ObjectSchema, applier: string): string[] {
  if (!live) return [];
  const out: string[] = [];
  const configSet = toFieldSet(config, schema);
  for (const p of configSet.paths()) {
    if (!p.reduce((sub: FieldSet, pe) => sub.withPrefix(pe), configSet).empty()) continue; // only leaves carry values to compare
    const liveValue = valueAt(live, p);
    if (liveValue === undefined || jsonEqual(liveValue, valueAt(config, p))) continue;
    for (const e of entries(live)) {
      if (e.manager === applier && e.operation === 'Apply') continue;
      if (e.set.has(p)) out.push(`${pathString(p)} ${e.manager}${e.operation === 'Update' ? ` using ${e.apiVersion}` : ''}`);
    }
  }
  return out.sort();
}

type Op = { kind: 'apply'; config: KubeObject; force: boolean } | { kind: 'merge' | 'strategic'; patch: Record<string, unknown> } | { kind: 'json'; patch: unknown[] };

interface Scenario {
  name: string;
  gvk: [string, string, string];
  base: KubeObject;
  op(rand: () => number, live: KubeObject | undefined): Op;
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const some = <T>(rand: () => number, xs: readonly T[], p = 0.5): T[] => xs.filter(() => rand() < p);

const configMapScenario: Scenario = {
  name: 'ConfigMap',
  gvk: ['', 'v1', 'ConfigMap'],
  base: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } },
  op(rand, live) {
    const values = () => Object.fromEntries(some(rand, ['a', 'b', 'c', 'd']).map((k) => [k, pick(rand, ['1', '2'])]));
    const labels = () => Object.fromEntries(some(rand, ['x', 'y']).map((k) => [k, pick(rand, ['p', 'q'])]));
    const kind = pick(rand, ['apply', 'apply', 'merge', 'strategic', 'json'] as const);
    if (kind === 'apply') {
      return { kind, force: rand() < 0.4, config: { ...this.base, metadata: { ...this.base.metadata, labels: labels() }, data: values() } as KubeObject };
    }
    if (kind === 'json') {
      const data = (live?.data ?? {}) as Record<string, string>;
      const key = pick(rand, ['a', 'b', 'c', 'd']);
      if (!live?.data) return { kind, patch: [{ op: 'add', path: '/data', value: { [key]: '1' } }] };
      return { kind, patch: [key in data && rand() < 0.5 ? { op: 'remove', path: `/data/${key}` } : { op: 'add', path: `/data/${key}`, value: pick(rand, ['1', '2', '3']) }] };
    }
    const data: Record<string, unknown> = values();
    for (const k of some(rand, ['a', 'b', 'c', 'd'], 0.2)) data[k] = null;
    return { kind, patch: { metadata: { labels: labels() }, data } };
  },
};

const deploymentScenario: Scenario = {
  name: 'Deployment',
  gvk: ['apps', 'v1', 'Deployment'],
  base: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } },
  op(rand, live) {
    const container = (name: string) => {
      const c: Record<string, unknown> = { name };
      if (rand() < 0.7) c.image = pick(rand, ['img:1', 'img:2']);
      const env = some(rand, ['A', 'B']).map((n) => ({ name: n, value: pick(rand, ['1', '2']) }));
      if (env.length) c.env = env;
      return c;
    };
    const containers = () => some(rand, ['web', 'side', 'log'], 0.6).map(container);
    const kind = pick(rand, ['apply', 'apply', 'merge', 'strategic', 'strategic', 'json'] as const);
    if (kind === 'apply') {
      const spec: Record<string, unknown> = { template: { spec: { containers: containers() } } };
      if (rand() < 0.5) spec.replicas = pick(rand, [1, 2, 3]);
      if (rand() < 0.3) spec.paused = rand() < 0.5;
      return { kind, force: rand() < 0.4, config: { ...this.base, spec } as KubeObject };
    }
    if (kind === 'merge') return { kind, patch: { spec: { replicas: pick(rand, [1, 2, 3, null]), paused: pick(rand, [true, false, null]) } } };
    if (kind === 'strategic') {
      const cs: Record<string, unknown>[] = containers();
      const names = cs.map((c) => ({ name: c.name }));
      const liveNames = (((live?.spec as any)?.template?.spec?.containers ?? []) as { name: string }[]).map((c) => c.name);
      const gone = liveNames.filter((n) => !cs.some((c) => c.name === n) && rand() < 0.3);
      for (const n of gone) cs.push({ name: n, $patch: 'delete' });
      const order = [...names, ...liveNames.filter((n) => !gone.includes(n) && !cs.some((c) => c.name === n)).map((name) => ({ name }))];
      return { kind, patch: { spec: { template: { spec: { '$setElementOrder/containers': order, containers: cs } } } } };
    }
    const list = ((live?.spec as any)?.template?.spec?.containers ?? []) as unknown[];
    if (!live?.spec) return { kind, patch: [{ op: 'add', path: '/spec', value: { replicas: 1 } }] };
    if (list.length && rand() < 0.5) return { kind, patch: [{ op: 'remove', path: `/spec/template/spec/containers/${Math.floor(rand() * list.length)}` }] };
    return { kind, patch: [{ op: 'add', path: '/spec/replicas', value: pick(rand, [1, 2, 3]) }] };
  },
};

describe('managedFields invariants under random writes', () => {
  it.each([
    { scenario: configMapScenario, seed: 1, steps: 500 },
    { scenario: deploymentScenario, seed: 2, steps: 500 },
  ])('$scenario.name, seed $seed: $steps steps', ({ scenario, seed, steps }) => {
    const rand = prng(seed);
    const schema = objectSchema(...scenario.gvk);
    const apiVersion = scenario.base.apiVersion;
    const fm = new FieldManager(schema, apiVersion);
    let live: KubeObject | undefined;
    const tally = { apply: 0, conflicts: 0, forced: 0, merge: 0, strategic: 0, json: 0 };
    for (let i = 0; i < steps; i++) {
      const manager = pick(rand, MANAGERS);
      const op = scenario.op(rand, live);
      const now = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace('.000Z', 'Z');
      const step = `step ${i} (${op.kind} by ${manager}: ${JSON.stringify('config' in op ? op.config : op.patch)})`;
      if (op.kind === 'apply') {
        tally.apply++;
        const want = expectedConflicts(live, op.config, schema, manager);
        try {
          live = fm.apply(live, op.config, { manager, now, force: op.force });
          if (!op.force) expect({ step, conflicts: [] }).toEqual({ step, conflicts: want });
          if (want.length) tally.forced++;
        } catch (err) {
          if (!(err instanceof StatusError) || err.code !== 409) throw err;
          tally.conflicts++;
          const got = (err.details?.causes ?? []).map((c) => `${c.field} ${c.message!.replace(/^conflict with "([^"]*)"/, '$1')}`).sort();
          expect({ step, force: op.force, conflicts: got }).toEqual({ step, force: false, conflicts: want });
          continue;
        }
      } else {
        tally[op.kind]++;
        const current = live ?? scenario.base;
        let next: KubeObject;
        if (op.kind === 'json') next = applyJsonPatch(current, op.patch) as KubeObject;
        else if (op.kind === 'merge') next = applyMergePatch(current, op.patch) as KubeObject;
        else next = strategicMergePatch(current, op.patch, schema) as KubeObject;
        const managedFields = fm.update(live, next, { manager, now });
        const { managedFields: _m, ...metadata } = next.metadata;
        live = { ...next, metadata: managedFields ? { ...metadata, managedFields } : metadata };
      }
      checkInvariants(live!, schema, step);
    }
    // The walk exercised every kind of write, conflicts included.
    expect(Object.values(tally).every((n) => n > 0)).toBe(true);
  });
});
