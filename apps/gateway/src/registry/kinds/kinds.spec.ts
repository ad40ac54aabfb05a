import { BUILTIN_RESOURCES, type ResourceDef } from '@orch/api';
import type { ServiceAddresses } from '../service-ip/addresses';
import { BUILTIN_KINDS, bindingOf, customKind, resolveKind } from './index';

// The binding/catalog completeness test: every built-in resource of the catalog (libs/api
// catalog-data.ts) has a binding (kinds/<group>/<resource>.ts, listed in BUILTIN_KINDS) that
// says how each of its subresources is served, and every binding names a catalog resource.
// Adding a kind without one of the three fails here, not as a silent default at run time.

const name = (d: Pick<ResourceDef, 'group' | 'resource'>) => `${d.resource}.${d.group || 'core'}`;
const deps = { k8sCompatibility: true, crdRuleCheck: () => [], serviceAddresses: {} as ServiceAddresses };

describe('kind bindings', () => {
  it.each(BUILTIN_RESOURCES.map((def) => ({ name: `${name(def)}/${def.version}`, def })))('$name has a binding for itself and each subresource', ({ def }) => {
    const binding = bindingOf(def);
    expect(binding).toBeDefined();
    expect(Object.keys(binding!.subresources ?? {}).sort()).toEqual(def.subresources.map((s) => s.name).sort());
    expect(!!binding!.virtual).toBe(def.virtual);
    for (const [sub, how] of Object.entries(binding!.subresources ?? {})) expect({ sub, writes: how.serve !== 'part' || !!how.writes }).toEqual({ sub, writes: true });
    const kind = resolveKind(def, deps);
    expect(kind.strategy.nameRule).toBeDefined();
  });

  it.each(BUILTIN_KINDS.map((b) => ({ name: name(b), binding: b })))('$name is a catalog resource, bound once', ({ binding }) => {
    expect(BUILTIN_RESOURCES.filter((d) => d.group === binding.group && d.resource === binding.resource).length).toBeGreaterThan(0);
    expect(BUILTIN_KINDS.filter((b) => b.group === binding.group && b.resource === binding.resource)).toHaveLength(1);
  });

  it('virtual bindings declare nothing a stored resource would', () => {
    for (const b of BUILTIN_KINDS.filter((k) => k.virtual)) expect({ name: name(b), strategy: b.strategy, table: b.table, subresources: b.subresources, fields: b.fields }).toEqual({ name: name(b) });
  });

  it('a catalog entry without a binding is an error naming the file to add, never a default', () => {
    const def = { ...BUILTIN_RESOURCES.find((d) => d.resource === 'configmaps')!, group: 'example.orch.io', resource: 'widgets' };
    expect(() => resolveKind(def, deps)).toThrow('widgets.example.orch.io has no kind binding: add registry/kinds/example/widgets.ts');
  });

  it.each([
    { name: 'status and scale', subresources: ['status', 'scale'], want: { scale: 'scale', status: 'part' } },
    { name: 'none', subresources: [], want: {} },
  ])('custom resources: the generic binding serves $name', ({ subresources, want }) => {
    const def = {
      group: 'example.orch.io',
      version: 'v1',
      resource: 'widgets',
      kind: 'Widget',
      scope: 'Namespaced',
      subresources: subresources.map((s) => ({ name: s, kind: 'Widget', verbs: ['get'] })),
      custom: { schema: { type: 'object' }, crdGeneration: 1, selectableFields: [], printerColumns: [], terminating: false },
    } as unknown as ResourceDef;
    const kind = customKind(def);
    expect(Object.fromEntries(Object.entries(kind.subresources).map(([k, v]) => [k, v.serve]))).toEqual(want);
    expect(kind.table?.columns.map((c) => c.name)).toEqual(['Name', 'Age']);
  });
});
